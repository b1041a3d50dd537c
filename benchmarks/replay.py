"""`callscope bench replay`: load and analyse generated 10k- and 100k-step traces; seconds and peak RSS.

Analysis must stay linear in the number of steps (no snapshot per step). This
benchmark writes a trace whose single tool call is ``steps * piece`` bytes long
(100,000 steps x 4 bytes = a 400 KB call), then, in a fresh subprocess per size
so that peak RSS belongs to that size alone, reads it and analyses it exactly
as ``callscope replay`` does. Targets: 100k steps in <= 3 s, <= 300 MB peak
RSS, and time growing linearly (100k/10k <= 12).

Usage: ``callscope bench replay [--sizes 10000,100000] [--format hermes]
[--policy incremental] [--repeat N] [--keep DIR] [--json]``. Each measurement
runs as ``python -m callscope.benchmarks.replay --child TRACE``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from callscope.benchmarks import BenchError, child_argv
from callscope.benchmarks.workload import WRITE_FILE_TOOLS, filler, write_file_text

WHAT = "load and analyse 10k/100k-step traces: seconds, peak RSS"
TARGET_SECONDS = 3.0
TARGET_RSS_MB = 300.0
TARGET_RATIO = 12.0
TARGET_STEPS = 100_000
REFERENCE_STEPS = 10_000


def generation(steps: int, piece: int = 4, format_id: str = "hermes") -> bytes:
    """A generation of exactly ``steps * piece`` bytes: one write_file call with a long ``content``."""

    def text(content: str) -> str:
        return write_file_text(format_id, {"path": "/tmp/big.txt", "content": content})

    overhead = len(text("").encode("utf-8"))
    total = steps * piece
    if total < overhead:
        raise ValueError(f"{steps} steps of {piece} bytes cannot hold the {overhead}-byte call envelope")
    data = text(filler(total - overhead)).encode("utf-8")
    assert len(data) == total
    return data


def generate_trace(
    path: str | os.PathLike[str], steps: int, piece: int = 4, format_id: str = "hermes", rate: float = 24.0
) -> int:
    """Write the benchmark trace (``piece`` bytes per step at ``rate`` steps/s); returns its size in bytes."""
    from callscope.engine.recordings.trace import TraceHeader, TraceWriter

    data = generation(steps, piece, format_id)
    header = TraceHeader(
        source="model",
        format=format_id,
        tools=WRITE_FILE_TOOLS,
        unit="token",
        description=f"benchmark: one {len(data)}-byte tool call in {steps} steps",
    )
    with TraceWriter(path, header, flush_each=False) as writer:
        for k in range(steps):
            writer.write_step((k + 1) * 1000.0 / rate, data[k * piece : (k + 1) * piece], (k,))
        writer.end("stop", steps * 1000.0 / rate)
    return Path(path).stat().st_size


# ------------------------------------------------------------------ child: one measurement


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # pragma: no cover - not Linux
        return float("nan")


def _peak_rss_mb() -> float:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 2**20


def measure(path: str, policy: str, format_id: str | None) -> dict[str, Any]:
    """Load + analyse ``path`` in this process; the caller runs this in a fresh interpreter."""
    from callscope.engine.recordings.replay import default_name  # imports before the baseline RSS reading
    from callscope.engine.recordings.trace import read_trace
    from callscope.engine.recordings.trace_io import analyze_trace

    baseline = _rss_mb()
    t0 = time.perf_counter()
    trace = read_trace(path)
    t1 = time.perf_counter()
    analysis = analyze_trace(trace, policy, format_id, default_name(path))
    t2 = time.perf_counter()
    call = analysis.calls[0] if analysis.calls else None
    return {
        "steps": analysis.step_count,
        "load_s": t1 - t0,
        "analyse_s": t2 - t1,
        "seconds": t2 - t0,
        "peak_rss_mb": _peak_rss_mb(),
        "baseline_rss_mb": baseline,
        "chunks": len(analysis.chunks),
        "call_bytes": len(call.streamed_arguments) if call else 0,
        "reconstructs": bool(call and call.reconstructs),
        "finish_reason": analysis.finish_reason,
    }


def measure_in_subprocess(path: str, policy: str, format_id: str | None) -> dict[str, Any]:
    cmd = child_argv("replay", "--child", path, "--policy", policy)
    if format_id:
        cmd += ["--format", format_id]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"benchmark child failed ({out.returncode}): {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout)


# ------------------------------------------------------------------ driver


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sizes", default=f"{REFERENCE_STEPS},{TARGET_STEPS}", help="comma-separated step counts")
    parser.add_argument("--piece", type=int, default=4, help="bytes per step (default 4: 100k steps = 400 KB)")
    parser.add_argument("--format", default="hermes", help="wire format of the generated trace (default hermes)")
    parser.add_argument("--policy", default="incremental", help="streaming policy (default incremental)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size; the fastest is reported")
    parser.add_argument("--keep", metavar="DIR", help="write the generated traces here and keep them")


def run(args: argparse.Namespace) -> int:
    """Generate, measure, print; 0 when every target is met, 1 otherwise (bad options: :class:`BenchError`)."""
    try:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        raise BenchError(f"--sizes takes comma-separated integers, not {args.sizes!r}") from None
    if not sizes or min(sizes) < 1 or args.repeat < 1 or args.piece < 1:
        raise BenchError("sizes, --piece and --repeat must be positive")
    try:
        return _run(args, sizes)
    except ValueError as exc:
        raise BenchError(str(exc)) from None


def _run(args: argparse.Namespace, sizes: list[int]) -> int:
    with tempfile.TemporaryDirectory(prefix="callscope-bench-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        results = []
        for steps in sizes:
            path = folder / f"replay-{steps}.jsonl"
            size = generate_trace(path, steps, args.piece, args.format)
            runs = [measure_in_subprocess(str(path), args.policy, None) for _ in range(args.repeat)]
            best = min(runs, key=lambda r: r["seconds"])
            best["trace_mb"] = size / 2**20
            results.append(best)
    verdict = _verdict(results)
    if args.json:
        json.dump(
            {"format": args.format, "policy": args.policy, "results": results, "targets": verdict}, sys.stdout, indent=2
        )
        sys.stdout.write("\n")
    else:
        _print_table(args, results, verdict)
    return 0 if all(v["ok"] for v in verdict) else 1


def _verdict(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_steps = {r["steps"]: r for r in results}
    checks = []
    big = by_steps.get(TARGET_STEPS)
    if big is not None:
        checks.append(
            {
                "target": f"{TARGET_STEPS} steps <= {TARGET_SECONDS} s",
                "value": big["seconds"],
                "ok": big["seconds"] <= TARGET_SECONDS,
            }
        )
        checks.append(
            {
                "target": f"{TARGET_STEPS} steps <= {TARGET_RSS_MB:.0f} MB peak RSS",
                "value": big["peak_rss_mb"],
                "ok": big["peak_rss_mb"] <= TARGET_RSS_MB,
            }
        )
        small = by_steps.get(REFERENCE_STEPS)
        if small is not None:
            ratio = big["seconds"] / max(small["seconds"], 1e-9)
            checks.append(
                {
                    "target": f"time {TARGET_STEPS}/{REFERENCE_STEPS} <= {TARGET_RATIO:.0f}",
                    "value": ratio,
                    "ok": ratio <= TARGET_RATIO,
                }
            )
    for r in results:
        checks.append(
            {
                "target": f"{r['steps']} steps: the call reconstructs",
                "value": r["reconstructs"],
                "ok": r["reconstructs"],
            }
        )
    return checks


def _print_table(args: argparse.Namespace, results: list[dict[str, Any]], verdict: list[dict[str, Any]]) -> None:
    print(f"bench replay: format {args.format}, policy {args.policy}, {args.piece} bytes/step, best of {args.repeat}")
    print(
        f"{'steps':>8} {'trace':>8} {'load':>8} {'analyse':>8} {'total':>8} {'peak RSS':>9} {'(python)':>9} {'chunks':>7}"
    )
    for r in results:
        print(
            f"{r['steps']:>8} {r['trace_mb']:>6.1f}MB {r['load_s']:>7.2f}s {r['analyse_s']:>7.2f}s {r['seconds']:>7.2f}s"
            f" {r['peak_rss_mb']:>7.0f}MB {r['baseline_rss_mb']:>7.0f}MB {r['chunks']:>7}"
        )
    for check in verdict:
        value = check["value"]
        shown = f"{value:.2f}" if isinstance(value, float) else str(value)
        print(f"  [{'ok' if check['ok'] else 'FAIL'}] {check['target']}: {shown}")


def _child(argv: list[str]) -> int:
    """``--child TRACE [--policy P] [--format F]``: one measurement, as JSON on stdout (a fresh process per size)."""
    child = argparse.ArgumentParser()
    child.add_argument("--child", required=True)
    child.add_argument("--policy", default="incremental")
    child.add_argument("--format")
    cargs = child.parse_args(argv)
    json.dump(measure(cargs.child, cargs.policy, cargs.format), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
