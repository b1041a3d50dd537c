"""`callscope bench cli`: how long the command line takes to start, against a bare Python.

A CLI that imports everything before it looks at its arguments makes every
verb pay for the heaviest one (``--version`` used to import httpx and jinja2).
Measured as whole processes, because that is what a user waits for: each round
runs, in a rotating order so drift in machine load hits all of them alike,

- ``bare``: ``python -c pass`` with the same interpreter (start-up and ``site``);
- ``version``: ``callscope --version``;
- ``replay``: ``callscope replay`` of the shipped headline fixture (701 tokens).

Reported: the median wall time of each and its ratio to the bare median
(targets: version <= 3x, replay <= 6x), plus the median of the per-round
ratios. Qt-free; the output of the measured commands is discarded.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from callscope.benchmarks import BenchError
from callscope.engine.core.shipped import resolve_recording

WHAT = "start-up: callscope --version and replay against a bare python, whole processes"
DEFAULT_ROUNDS = 21
HEADLINE = "headline_701_tokens"
#: measured command -> most its median may be, as a multiple of the bare interpreter's
TARGETS: dict[str, float] = {"version": 3.0, "replay": 6.0}


def callscope_command() -> list[str]:
    """How a user starts callscope from this interpreter: its console script, else ``python -m callscope``."""
    beside = Path(sys.executable).with_name("callscope")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("callscope")
    if found:
        return [found]
    return [sys.executable, "-m", "callscope"]


def commands() -> dict[str, list[str]]:
    """The processes compared, by name; ``bare`` first (it is the unit of every ratio)."""
    cli = callscope_command()
    fixture = resolve_recording(HEADLINE)
    if not Path(fixture).is_file():
        raise FileNotFoundError(f"the shipped fixture {HEADLINE} is missing")
    return {
        "bare": [sys.executable, "-c", "pass"],
        "version": [*cli, "--version"],
        "replay": [*cli, "replay", fixture],
    }


def time_process(argv: list[str]) -> float:
    """Wall milliseconds from spawning ``argv`` to its exit; a failing command is an error, not a number."""
    began = time.perf_counter()
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - began) * 1000.0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace').strip()}")
    return elapsed


def measure(rounds: int = DEFAULT_ROUNDS) -> dict[str, Any]:
    """Time every command ``rounds`` times, interleaved (one warm-up round first, not counted)."""
    if rounds < 1:
        raise BenchError("--rounds must be at least 1")
    argvs = commands()
    names = list(argvs)
    times: dict[str, list[float]] = {name: [] for name in names}
    for name in names:  # warm-up: page cache, .pyc files
        time_process(argvs[name])
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]
        for name in order:
            times[name].append(time_process(argvs[name]))
    return summarize(times, argvs)


def summarize(times: dict[str, list[float]], argvs: dict[str, list[str]]) -> dict[str, Any]:
    """Medians, ratios to ``bare`` (of medians, and the median of per-round ratios) and the verdicts."""
    bare = times["bare"]
    bare_median = statistics.median(bare)
    result: dict[str, Any] = {
        "bench": "cli",
        "rounds": len(bare),
        "bare": {"command": argvs["bare"], "median_ms": round(bare_median, 2), "runs_ms": _rounded(bare)},
        "commands": {},
    }
    for name, values in times.items():
        if name == "bare":
            continue
        median = statistics.median(values)
        ratio = median / bare_median
        target = TARGETS[name]
        result["commands"][name] = {
            "command": argvs[name],
            "median_ms": round(median, 2),
            "runs_ms": _rounded(values),
            "ratio": round(ratio, 3),
            "ratio_per_round": round(statistics.median(v / b for v, b in zip(values, bare)), 3),
            "target_ratio": target,
            "ok": ratio <= target,
        }
    result["ok"] = all(c["ok"] for c in result["commands"].values())
    return result


def _rounded(values: list[float]) -> list[float]:
    return [round(v, 2) for v in values]


def report_lines(r: dict[str, Any]) -> list[str]:
    """The human-readable table."""
    lines = [
        f"cli bench: whole-process wall time, {r['rounds']} interleaved rounds (medians)",
        f"  {'bare python -c pass':<38} {r['bare']['median_ms']:8.1f} ms",
    ]
    for name, c in r["commands"].items():
        label = "callscope --version" if name == "version" else f"callscope replay {HEADLINE}"
        verdict = "ok" if c["ok"] else "ABOVE TARGET"
        lines.append(
            f"  {label:<38} {c['median_ms']:8.1f} ms  {c['ratio']:5.2f}x bare "
            f"(per round {c['ratio_per_round']:.2f}x), target <= {c['target_ratio']:g}x: {verdict}"
        )
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS,
                        help=f"interleaved rounds of every command (default {DEFAULT_ROUNDS})")


def run(args: argparse.Namespace) -> int:
    """``callscope bench cli``: measure, print a table or the JSON document; 0 when every target is met."""
    result = measure(args.rounds)
    print(json.dumps(result, indent=2) if args.json else "\n".join(report_lines(result)))
    return 0 if result["ok"] else 1
