"""`callscope bench parse|replay|decode|gui|capture|all`: the speed and memory benchmarks.

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
}


def register(sub: argparse._SubParsersAction) -> None:
    listing = "; ".join(f"{name}: {what}" for name, (_, what) in BENCHES.items())
    p = sub.add_parser(
        "bench",
        help="run a benchmark (parse, replay, decode, gui, capture, all)",
        description=f"Speed and memory benchmarks. {listing}.",
    )
    p.add_argument("which", choices=[*BENCHES, "all"], help="which benchmark")
    p.add_argument("--json", action="store_true", help="machine-readable output where supported")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    names = list(BENCHES) if args.which == "all" else [args.which]
    for name in names:
        module_name, _ = BENCHES[name]
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise CliError(f"the {name} benchmark is not available: {exc}") from None
        module.run(as_json=args.json)
    return 0
