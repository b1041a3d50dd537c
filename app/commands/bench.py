"""`callscope bench parse|replay|decode|gui|capture|all`: the speed and memory benchmarks.

Benchmarks report ratios measured side by side in one run; they are never
timed assertions in tests (shared machines are noisy).
"""

from __future__ import annotations

import argparse
import importlib

from app.commands.common import CliError

#: bench name -> (module, function, help). Each function takes the parsed args.
BENCHES = {
    "parse": ("app.commands.bench", "_bench_parse", "parser + policy per-step cost as a call grows to 32 KB"),
    "replay": ("app.commands.bench", "_bench_replay", "load and analyse 10k/100k-step traces: seconds, peak RSS"),
    "decode": ("app.commands.bench", "_bench_decode", "callscope's decode loop against a bare Llama.generate loop"),
    "gui": ("app.commands.bench", "_bench_gui", "offscreen window: event-loop stalls during replay, cursor jump time"),
    "capture": ("app.commands.bench", "_bench_capture", "loopback SSE capture throughput against a bare httpx reader"),
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run a benchmark (parse, replay, decode, gui, capture, all)")
    p.add_argument("which", choices=[*BENCHES, "all"], help="which benchmark")
    p.add_argument("--json", action="store_true", help="machine-readable output where supported")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    names = list(BENCHES) if args.which == "all" else [args.which]
    for name in names:
        module_name, function, _ = BENCHES[name]
        getattr(importlib.import_module(module_name), function)(args)
    return 0


def _missing(what: str, exc: ImportError) -> CliError:
    return CliError(f"the {what} benchmark is not available: {exc}")


def _bench_parse(args: argparse.Namespace) -> None:
    from engine import bench_parse

    bench_parse.run(as_json=args.json)


def _bench_replay(args: argparse.Namespace) -> None:
    try:
        from engine import bench_replay
    except ImportError as exc:
        raise _missing("replay", exc) from None
    bench_replay.run(as_json=args.json)


def _bench_decode(args: argparse.Namespace) -> None:
    try:
        from engine.decode import bench as decode_bench
    except ImportError as exc:
        raise _missing("decode", exc) from None
    decode_bench.run(as_json=args.json)


def _bench_gui(args: argparse.Namespace) -> None:
    try:
        from app import bench_gui  # imports Qt: only here, never at CLI import time
    except ImportError as exc:
        raise _missing("gui", exc) from None
    bench_gui.run(as_json=args.json)


def _bench_capture(args: argparse.Namespace) -> None:
    try:
        from engine.capture import bench as capture_bench
    except ImportError as exc:
        raise _missing("capture", exc) from None
    capture_bench.run(as_json=args.json)
