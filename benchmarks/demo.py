"""`callscope bench demo`: does the default live run show the win, first delta >= 10x sooner than atomic?

The demo (``callscope run`` with no arguments, and the window's start-up run) exists to
show that streaming a tool call gets its first delta to the client long before an atomic
server would send anything. The ratio is a wall-clock measurement from the request
(prompt evaluation included), so it belongs here and not in a test: the tests check the
same run's token counts, which no machine load changes.

Each round is a whole ``callscope run --json`` process, as a user runs it (model load
excluded from the ratio: both sides are measured from the request). Reported per round:
first delta and atomic emission (ms from the request), their ratio, the token steps of
each; the verdict is on the median ratio (target >= 10x).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from typing import Any

from callscope.benchmarks import BenchError
from callscope.benchmarks.cli import callscope_command

WHAT = "the default live run: first delta vs atomic emission, live from the request (target >= 10x)"
DEFAULT_ROUNDS = 3
TARGET_RATIO = 10.0


def one_round() -> dict[str, Any]:
    """One ``callscope run --json`` with the defaults: its first delta and atomic emission, in ms and steps."""
    done = subprocess.run([*callscope_command(), "run", "--json"], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise BenchError(f"callscope run exited {done.returncode}: {done.stderr.strip()[-400:]}")
    run = json.loads(done.stdout)["runs"][0]
    first, atomic = run["ttfd"]["streaming"], run["ttfd"]["atomic"]
    if first["ms"] is None or atomic["ms"] is None:
        raise BenchError("the default run streamed no tool call")
    decode = run["source"].get("decode", {})
    return {
        "first_ms": first["ms"],
        "atomic_ms": atomic["ms"],
        "ratio": round(atomic["ms"] / max(first["ms"], 1e-3), 2),
        "first_step": first["step"],
        "atomic_step": atomic["step"],
        "reconstructs": all(c["reconstructs"] for c in run["calls"]),
        "prompt_tokens": decode.get("prompt_tokens"),
        "tokens_per_s": decode.get("tokens_per_s"),
    }


def measure(rounds: int = DEFAULT_ROUNDS) -> dict[str, Any]:
    if rounds < 1:
        raise BenchError("--rounds must be at least 1")
    results = [one_round() for _ in range(rounds)]
    median = statistics.median(r["ratio"] for r in results)
    return {
        "bench": "demo",
        "rounds": results,
        "median_ratio": round(median, 2),
        "target_ratio": TARGET_RATIO,
        "ok": median >= TARGET_RATIO and all(r["reconstructs"] for r in results),
    }


def report_lines(r: dict[str, Any]) -> list[str]:
    lines = ["demo bench: `callscope run` with no arguments, first delta vs atomic, from the request"]
    for i, x in enumerate(r["rounds"], 1):
        lines.append(
            f"  round {i}: first delta {x['first_ms'] / 1000:6.2f} s (token {x['first_step']}), atomic "
            f"{x['atomic_ms'] / 1000:6.2f} s (token {x['atomic_step']}): {x['ratio']:5.1f}x"
            f"{'' if x['reconstructs'] else ', DOES NOT RECONSTRUCT'}  ({x['tokens_per_s']} tok/s)"
        )
    verdict = "ok" if r["ok"] else "BELOW TARGET"
    lines.append(f"  median {r['median_ratio']:.1f}x, target >= {r['target_ratio']:g}x: {verdict}")
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS,
                        help=f"whole default runs, one after another (default {DEFAULT_ROUNDS})")


def run(args: argparse.Namespace) -> int:
    """``callscope bench demo``: run the demo, print a table or the JSON document; 0 when the target is met."""
    result = measure(args.rounds)
    print(json.dumps(result, indent=2) if args.json else "\n".join(report_lines(result)))
    return 0 if result["ok"] else 1
