"""callscope's speed and memory benchmarks: one module per bench, installed as ``callscope.benchmarks``.

They live outside the product (``engine/`` and ``app/`` hold no benchmark code; a test checks it)
but install with it, so ``callscope bench NAME`` works from a wheel too. Every bench module has
one shape, so the dispatcher needs no special case:

- ``WHAT``: one line saying what it measures (``callscope bench --help`` lists it);
- ``add_arguments(parser)``: its own knobs (``--rounds``, ``--steps``...); ``--json`` is added here;
- ``run(args) -> int``: measure, print a table (or the JSON document), and return 0 when every
  target is met, 1 when one is missed. A bad option raises :class:`BenchError` (exit 2).

Benchmarks report ratios measured side by side in one run; they are never timed assertions in
tests (shared machines are noisy). Bench modules import their heavy dependencies (httpx,
llama.cpp, Qt) inside the functions that measure, so building the parser imports none of them
and only the ``gui`` bench, when chosen, loads Qt.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

if __name__ != "callscope.benchmarks":  # the checkout's folder imported by its own name: a second copy of every module in it
    raise ImportError(f"import callscope.benchmarks, not {__name__}: benchmarks/ installs as callscope.benchmarks (`pip install -e .`)")

#: The benches, in the order ``all`` runs them; each is the module ``callscope.benchmarks.<name>``.
NAMES = ("parse", "template", "replay", "decode", "demo", "gui", "longline", "capture", "proxy", "clients", "cli")


class BenchError(Exception):
    """A usage error (bad option, missing build): one line, exit 2."""


def module(name: str) -> ModuleType:
    """The bench module ``name`` (light to import: see the module docstring)."""
    if name not in NAMES:
        raise BenchError(f"no benchmark named {name!r} (choose from {', '.join(NAMES)})")
    return importlib.import_module(f"{__name__}.{name}")


def child_argv(name: str, *args: str) -> list[str]:
    """How a bench re-runs its own module in a fresh interpreter (a server, or one clean measurement)."""
    return [sys.executable, "-m", f"{__name__}.{name}", *args]


def add_bench_parsers(parser: argparse.ArgumentParser) -> None:
    """One sub-command per bench (with its own options) plus ``all``; the chosen name lands in ``args.which``."""
    sub = parser.add_subparsers(dest="which", required=True, metavar="BENCH")
    for name in NAMES:
        bench = module(name)
        p = sub.add_parser(name, help=bench.WHAT, description=bench.WHAT)
        add_json_option(p)
        bench.add_arguments(p)
    add_json_option(sub.add_parser("all", help="every bench above, each with its defaults"))


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """``--json`` on a bench's own parser; SUPPRESS keeps ``bench --json NAME`` (set on the parent) working."""
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print the measurements as JSON")


def defaults(name: str, **overrides: object) -> argparse.Namespace:
    """Bench ``name``'s options with their defaults (what ``all`` runs), then ``overrides``."""
    parser = argparse.ArgumentParser(add_help=False)
    module(name).add_arguments(parser)
    args = parser.parse_args([])
    args.json = False
    for key, value in overrides.items():
        setattr(args, key, value)
    return args


def run_selected(args: argparse.Namespace) -> int:
    """Run ``args.which`` (or every bench for ``all``, with defaults); the worst exit code wins."""
    as_json = bool(getattr(args, "json", False))
    if args.which != "all":
        args.json = as_json
        return _run_one(args.which, args)
    return max(_run_one(name, defaults(name, json=as_json)) for name in NAMES)


def _run_one(name: str, args: argparse.Namespace) -> int:
    try:
        return int(module(name).run(args))
    except ImportError as exc:  # e.g. the gui bench without PySide6, decode without llama.cpp
        raise BenchError(f"the {name} benchmark is not available: {exc}") from None


def build_parser(prog: str = "python -m callscope.benchmarks") -> argparse.ArgumentParser:
    """The stand-alone parser (same sub-commands and options as ``callscope bench``)."""
    parser = argparse.ArgumentParser(prog=prog, description="callscope's speed and memory benchmarks.")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    add_bench_parsers(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m callscope.benchmarks NAME [options]``: the same as ``callscope bench NAME [options]``."""
    args = build_parser().parse_args(argv)
    try:
        return run_selected(args)
    except BenchError as exc:
        print(f"bench {args.which}: {exc}", file=sys.stderr)
        return 2
