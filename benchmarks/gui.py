"""Benchmark of the inspector window (offscreen): ``python benchmarks/gui.py [--json] [--steps N]``.

Same as ``callscope bench gui``; see :mod:`app.bench_gui` for what is measured.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from callscope.bench_gui import STEPS, run

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--steps", type=int, default=STEPS)
    args = parser.parse_args()
    run(as_json=args.json, steps=args.steps)
