"""`callscope bench check`: recordings per second of ``callscope check``, one process against the pool, side by side.

On a corpus generated from the shipped library (:mod:`callscope.benchmarks.corpus`: text traces,
proxy session folders of captured turns from four kinds of server, SSE dumps, HAR files and
byte-prefix fixtures), each round runs, as whole processes (what a user waits for, start-up
and pool start included) and in a rotating order so drift in machine load hits them alike:

- ``one process``: ``callscope check CORPUS --jobs 1``;
- ``pool``: ``callscope check CORPUS --jobs N`` (default every core);
- ``ray`` (with ``--ray``): ``callscope check CORPUS --executor ray --ray-address local --jobs N``,
  a Ray instance started on this machine for the run (its start is in the time).

Reported: wall seconds and recordings per second of each (medians over the rounds), the pool's
speed-up over one process, the CPU seconds each run used (its process tree's user + system time:
on a machine shared with other work the wall time says how busy it was, the CPU what the run
cost), the load average before and after, and the CPU each kind of recording costs (from the
one-process run's summary: what ``docs/scale.md`` budgets with). Target: the pool checks 10,000 recordings in at
most 15 s (scaled to ``--count``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from callscope.benchmarks import BenchError
from callscope.benchmarks.cli import callscope_command

WHAT = "callscope check on a generated corpus: recordings/s in one process and in the pool, side by side"
DEFAULT_COUNT = 10_000
#: Seconds the pool may take for 10,000 recordings (scaled linearly to --count).
TARGET_SECONDS_PER_10K = 15.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT,
                        help=f"recordings in the generated corpus (default {DEFAULT_COUNT:,})")
    parser.add_argument("--jobs", type=int, help="the pool's workers (default: every core)")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (default 1)")
    parser.add_argument("--corpus", metavar="DIR", help="check this folder instead of generating a corpus")
    parser.add_argument("--keep", metavar="DIR", help="generate the corpus into DIR and keep it")
    parser.add_argument("--ray", action="store_true", help="also run the Ray executor on a local instance")


def run(args: argparse.Namespace) -> int:
    if args.count < 1 or args.rounds < 1 or (args.jobs is not None and args.jobs < 1):
        raise BenchError("--count, --rounds and --jobs must be at least 1")
    if args.ray:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise BenchError("--ray needs Ray: pip install 'callscope[ray]'") from None
    with tempfile.TemporaryDirectory(prefix="callscope-bench-check-") as scratch:
        corpus, generated_s = _corpus(args, Path(scratch))
        result = measure(corpus, args.jobs, args.rounds, args.ray, Path(scratch))
    result["generated_s"] = generated_s
    print(json.dumps(result, indent=2) if args.json else "\n".join(report_lines(result)))
    return 0 if result["ok"] else 1


def _corpus(args: argparse.Namespace, scratch: Path) -> tuple[str, float | None]:
    if args.corpus:
        if not os.path.isdir(args.corpus):
            raise BenchError(f"--corpus {args.corpus}: no such folder")
        return args.corpus, None
    from callscope.benchmarks.corpus import generate

    out = Path(args.keep) if args.keep else scratch / "corpus"
    began = time.perf_counter()
    generate(out, args.count)
    return str(out), round(time.perf_counter() - began, 2)


def commands(corpus: str, jobs: int | None, with_ray: bool) -> dict[str, list[str]]:
    base = [*callscope_command(), "check", corpus]
    pool = ["--jobs", str(jobs)] if jobs else []
    found = {"one process": [*base, "--jobs", "1"], "pool": [*base, *pool]}
    if with_ray:
        found["ray"] = [*base, "--executor", "ray", "--ray-address", "local", *pool]
    return found


def measure(corpus: str, jobs: int | None, rounds: int, with_ray: bool, scratch: Path) -> dict[str, Any]:
    argvs = commands(corpus, jobs, with_ray)
    names = list(argvs)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    cpu: dict[str, list[float]] = {name: [] for name in names}
    summaries: dict[str, dict[str, Any]] = {}
    load = [os.getloadavg()[0]]
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            out = scratch / f"{name.replace(' ', '-')}.json"
            wall, used = _time(argvs[name] + ["--summary-json", str(out)])
            seconds[name].append(wall)
            cpu[name].append(used)
            summaries[name] = json.loads(out.read_text(encoding="utf-8"))
    load.append(os.getloadavg()[0])
    result = summarize(seconds, summaries, argvs, jobs)
    for name, values in cpu.items():
        if name != "ray":  # Ray's workers are the raylet's children, not this process's: their CPU is not seen here
            result["runs"][name]["cpu_s"] = round(statistics.median(values), 3)
    result["load_average"] = [round(x, 2) for x in load]  # before and after: how busy the machine was
    return result


def _time(argv: list[str]) -> tuple[float, float]:
    """Wall seconds of the whole process and the CPU seconds it and its children used (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise BenchError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace').strip()}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def summarize(seconds: dict[str, list[float]], summaries: dict[str, dict[str, Any]],
              argvs: dict[str, list[str]], jobs: int | None) -> dict[str, Any]:
    recordings = summaries["one process"]["recordings"]
    one = statistics.median(seconds["one process"])
    runs: dict[str, Any] = {}
    for name, values in seconds.items():
        median = statistics.median(values)
        runs[name] = {"command": argvs[name], "seconds": round(median, 3), "runs_s": [round(v, 3) for v in values],
                      "recordings_per_s": round(recordings / median, 1), "speedup": round(one / median, 2)}
    target = TARGET_SECONDS_PER_10K * recordings / 10_000
    kinds = summaries["one process"]["by_kind"]
    cost = {kind: round(t["cpu_ms"] / t["recordings"], 3) for kind, t in kinds.items() if t["recordings"]}
    single = summaries["one process"]
    return {
        "bench": "check",
        "recordings": recordings,
        "jobs": jobs or os.cpu_count(),
        "runs": runs,
        "cpu_ms_per_recording": round(single["cpu_ms"] / max(recordings, 1), 3),
        "cpu_ms_by_kind": cost,
        "recordings_by_kind": {kind: t["recordings"] for kind, t in kinds.items()},
        "target_s": round(target, 2),
        "ok": runs["pool"]["seconds"] <= target,
    }


def report_lines(r: dict[str, Any]) -> list[str]:
    load = r.get("load_average")
    busy = f", load average {load[0]:g} -> {load[1]:g} on {os.cpu_count()} cores" if load else ""
    lines = [f"check bench: {r['recordings']:,} recordings, whole processes, pool of {r['jobs']} "
             f"(medians of {len(r['runs']['pool']['runs_s'])} round(s){busy})"]
    for name, run in r["runs"].items():
        cpu = f"  {run['cpu_s']:7.2f} s CPU" if "cpu_s" in run else ""
        lines.append(f"  {name:<12} {run['seconds']:8.2f} s  {run['recordings_per_s']:9,.0f} recordings/s  "
                     f"{run['speedup']:5.2f}x one process{cpu}")
    verdict = "ok" if r["ok"] else "ABOVE TARGET"
    lines.append(f"  pool target <= {r['target_s']:g} s for {r['recordings']:,} (15 s per 10,000): {verdict}")
    kinds = ", ".join(f"{kind} {ms:.2f} ms ({r['recordings_by_kind'][kind]:,})"
                      for kind, ms in sorted(r["cpu_ms_by_kind"].items()))
    lines.append(f"  CPU per recording: {r['cpu_ms_per_recording']:.2f} ms on average; by kind: {kinds}")
    return lines
