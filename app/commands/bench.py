"""`callscope bench parse|replay|decode|gui|capture|cli|all`: the speed and memory benchmarks.

Benchmarks report ratios measured side by side in one run; they are never
timed assertions in tests (shared machines are noisy). Each bench module
exposes ``run(as_json: bool)``; only ``gui`` imports Qt, and only when chosen.
"""

from __future__ import annotations

import argparse
import importlib

from callscope.commands.common import CliError

#: bench name -> (module with a ``run(as_json=...)`` function, what it measures)
BENCHES: dict[str, tuple[str, str]] = {
    "parse": ("callscope.engine.bench_parse", "parser + policy per-step cost as a call grows to 32 KB"),
    "replay": ("callscope.engine.bench_replay", "load and analyse 10k/100k-step traces: seconds, peak RSS"),
    "decode": ("callscope.engine.decode.bench", "callscope's decode loop against a bare Llama.generate loop"),
    "gui": ("callscope.bench_gui", "offscreen window: event-loop stalls during replay, cursor jump time"),
    "capture": ("callscope.engine.capture.bench", "loopback SSE capture throughput against a bare httpx reader"),
    "cli": ("callscope.bench_cli", "start-up: callscope --version and replay against a bare python, whole processes"),
}


def register(sub: argparse._SubParsersAction) -> None:
    listing = "; ".join(f"{name}: {what}" for name, (_, what) in BENCHES.items())
    p = sub.add_parser(
        "bench",
        help="run a benchmark (parse, replay, decode, gui, capture, cli, all)",
        description=f"Speed and memory benchmarks. {listing}.",
    )
    p.add_argument("which", choices=[*BENCHES, "all"], help="which benchmark")
    p.add_argument("--json", action="store_true", help="machine-readable output where supported")
    p.add_argument(
        "--builds", metavar="A,B", help="decode only: compare llama.cpp builds side by side instead (flag sets built by "
        "scripts/llama_wheel.py, e.g. portable,native, or wheel files), alternating processes")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.builds is not None:
        if args.which != "decode":
            raise CliError("--builds only applies to `bench decode`")
        return _compare_builds(args)
    names = list(BENCHES) if args.which == "all" else [args.which]
    for name in names:
        module_name, _ = BENCHES[name]
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise CliError(f"the {name} benchmark is not available: {exc}") from None
        module.run(as_json=args.json)
    return 0


def _compare_builds(args: argparse.Namespace) -> int:
    import json

    from callscope.engine.decode import bench

    specs = [s.strip() for s in args.builds.split(",") if s.strip()]
    if len(specs) < 2:
        raise CliError("--builds needs at least two builds, e.g. portable,native")
    try:
        result = bench.measure_builds(specs)
    except (ValueError, RuntimeError) as exc:
        raise CliError(str(exc)) from None
    print(json.dumps(result, indent=2) if args.json else "\n".join(bench.builds_report_lines(result)))
    return 0
