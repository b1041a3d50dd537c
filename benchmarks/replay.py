"""Replay scale benchmark: ``python benchmarks/replay.py`` (same as ``callscope bench replay``).

See :mod:`engine.bench_replay` for what is measured and the targets.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from callscope.engine.bench_replay import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
