"""CLI start-up benchmark: ``python benchmarks/cli.py [--rounds N] [--json]`` (same as ``callscope bench cli``).

See :mod:`app.bench_cli` for what is measured and the targets.
"""

import argparse

from callscope.bench_cli import DEFAULT_ROUNDS, run

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS)
    args = parser.parse_args()
    run(as_json=args.json, rounds=args.rounds)
