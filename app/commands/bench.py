"""`callscope bench NAME|all`: the speed and memory benchmarks (their names: ``callscope.benchmarks.NAMES``).

The benches themselves live in :mod:`callscope.benchmarks` (the top-level ``benchmarks/``
folder), outside the product code; this verb only dispatches to them. Each bench is a
sub-command with its own options (``callscope bench cli --rounds 3``); ``--json`` is taken
before or after the bench's name. Exit codes: 0 on target, 1 when a target was missed,
2 for a usage error.
"""

from __future__ import annotations

import argparse

from callscope.commands.common import CliError


def register(sub: argparse._SubParsersAction) -> None:
    from callscope import benchmarks

    listing = "; ".join(f"{name}: {benchmarks.module(name).WHAT}" for name in benchmarks.NAMES)
    p = sub.add_parser(
        "bench",
        help=f"run a benchmark ({', '.join(benchmarks.NAMES)}, all)",
        description=f"Speed and memory benchmarks. {listing}. `callscope bench NAME --help` lists a bench's options.",
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    benchmarks.add_bench_parsers(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from callscope import benchmarks

    try:
        return benchmarks.run_selected(args)
    except benchmarks.BenchError as exc:
        raise CliError(str(exc)) from None
