"""`callscope bench decode`: callscope's live loop against a bare ``Llama.generate`` loop.

Same model, prompt, grammar, sampler and seed; the two loops alternate in one
process (ABBA order, after one warm-up of each) so machine noise hits both.
The bare loop only pulls tokens and checks for end-of-generation; callscope's
loop also detokenizes the whole prefix, parses, runs the policy and the atomic
baseline, and records a trace. Reported: steady decode tokens/s of each and
their ratio (target >= 0.97), time to first token, and callscope's own
per-token cost (analysis + recording). Both loops must produce the same
tokens, which is checked and printed.

``--builds portable,native`` compares llama.cpp builds instead: each runs the
bare loop in its own child process (``python -m callscope.benchmarks.decode
--child-bare ...`` with that build first on the path), alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from callscope.benchmarks import BenchError, child_argv

if TYPE_CHECKING:
    from callscope.engine.decode.model import LoadedModel
    from callscope.engine.decode.session import LiveRun

WHAT = "callscope's decode loop against a bare Llama.generate loop"
TARGET_RATIO = 0.97
DEFAULT_ROUNDS = 6
DEFAULT_MAX_TOKENS = 160


@dataclass(slots=True)
class LoopTiming:
    tokens: list[int]
    ttft_ms: float
    end_ms: float

    @property
    def tokens_per_s(self) -> float:
        n = len(self.tokens)
        span = self.end_ms - self.ttft_ms
        return (n - 1) * 1000.0 / span if n > 1 and span > 0 else 0.0


def bare_loop(model: LoadedModel, live: LiveRun) -> LoopTiming:
    """The baseline: ``Llama.generate`` with the same prompt, grammar and sampler; nothing else per token."""
    import llama_cpp

    llama = model.llama
    vocab = llama._model.vocab
    settings = live.settings
    tokens: list[int] = []
    start = time.monotonic()
    ttft = end = 0.0
    llama.reset()
    llama.set_seed(settings.sampler.seed)
    stream = llama.generate(live.prompt_tokens, grammar=live._llama_grammar, **settings.sampler.generate_kwargs())
    try:
        for token in stream:
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                break
            end = (time.monotonic() - start) * 1000.0
            if not tokens:
                ttft = end
            tokens.append(token)
            if len(tokens) >= settings.max_tokens:
                break
    finally:
        stream.close()
    return LoopTiming(tokens, ttft, end)


def callscope_loop(live: LiveRun, record: str) -> tuple[LoopTiming, list[float]]:
    live.settings.record = record
    result = live.run()
    stats = result.stats
    return LoopTiming(list(stats.token_ids), stats.ttft_ms or 0.0, stats.end_ms or 0.0), result.process_us


def _live_run(model_path: str | None, max_tokens: int, format_id: str, seed: int) -> tuple[LoadedModel, LiveRun]:
    """The model and the run both loops decode: the default request, forced to 1-2 tool calls."""
    from callscope.engine.core.shipped import resource
    from callscope.engine.core.tools import load_tools
    from callscope.engine.decode.loop import SamplerSettings
    from callscope.engine.decode.messages import default_messages
    from callscope.engine.decode.model import load_model
    from callscope.engine.decode.session import LiveRun, RunSettings

    model = load_model(model_path, seed=seed)
    settings = RunSettings(
        messages=default_messages(demo="quick"),  # the two-call request the bench has always decoded
        tools=load_tools(resource("tools", "default.json")),
        format_id=format_id,
        max_calls=2,
        max_tokens=max_tokens,
        sampler=SamplerSettings(seed=seed),
        name="bench",
    )
    return model, LiveRun(model, settings)


def measure(
    model_path: str | None = None,
    rounds: int = DEFAULT_ROUNDS,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    format_id: str = "hermes",
    seed: int = 1,
) -> dict[str, Any]:
    """Run the comparison and return the numbers (see module docstring)."""
    model, live = _live_run(model_path, max_tokens, format_id, seed)
    bare: list[LoopTiming] = []
    ours: list[LoopTiming] = []
    work_us: list[float] = []
    with tempfile.TemporaryDirectory(prefix="callscope-bench-") as tmp:
        record = os.path.join(tmp, "bench.jsonl")
        bare_loop(model, live)  # warm-up (page cache, allocator, CPU clocks)
        callscope_loop(live, record)
        for r in range(rounds):
            order = ("bare", "callscope") if r % 2 == 0 else ("callscope", "bare")
            for which in order:
                if which == "bare":
                    bare.append(bare_loop(model, live))
                else:
                    timing, us = callscope_loop(live, record)
                    ours.append(timing)
                    work_us.extend(us)
    bare_rate = statistics.median(t.tokens_per_s for t in bare)
    our_rate = statistics.median(t.tokens_per_s for t in ours)
    # Each round's two runs are back to back: their ratio cancels slow drift in machine load.
    pair_ratios = [o.tokens_per_s / b.tokens_per_s for o, b in zip(ours, bare) if b.tokens_per_s]
    token_ms = 1000.0 / our_rate if our_rate else None
    work_sorted = sorted(work_us)
    p95 = work_sorted[int(0.95 * (len(work_sorted) - 1))] if work_sorted else None
    return {
        "model": model.info.describe(),
        "format": live.plan.format_id,
        "forced": live.grammar.describe() if live.grammar else None,
        "prompt_tokens": len(live.prompt_tokens),
        "max_tokens": max_tokens,
        "seed": seed,
        "rounds": rounds,
        "tokens": len(ours[0].tokens),
        "same_tokens": all(t.tokens == bare[0].tokens for t in bare + ours),
        "bare": {
            "tokens_per_s": round(bare_rate, 2),
            "ttft_ms": round(statistics.median(t.ttft_ms for t in bare), 1),
            "runs_tokens_per_s": [round(t.tokens_per_s, 2) for t in bare],
        },
        "callscope": {
            "tokens_per_s": round(our_rate, 2),
            "ttft_ms": round(statistics.median(t.ttft_ms for t in ours), 1),
            "runs_tokens_per_s": [round(t.tokens_per_s, 2) for t in ours],
        },
        "ratio": round(statistics.median(pair_ratios), 4) if pair_ratios else None,
        "ratio_of_medians": round(our_rate / bare_rate, 4) if bare_rate else None,
        "target_ratio": TARGET_RATIO,
        "per_token_work_us": {
            "median": round(statistics.median(work_us), 1) if work_us else None,
            "mean": round(statistics.fmean(work_us), 1) if work_us else None,
            "p95": round(p95, 1) if p95 is not None else None,
            "share_of_token": round(statistics.fmean(work_us) / (token_ms * 1000.0), 4)
            if work_us and token_ms
            else None,
        },
    }


def report_lines(r: dict[str, Any]) -> list[str]:
    work = r["per_token_work_us"]
    ok = "ok" if r["ratio"] is not None and r["ratio"] >= r["target_ratio"] else "BELOW TARGET"
    return [
        f"decode bench: {r['model']}",
        (
            f"  format {r['format']}, forced {r['forced']}; {r['prompt_tokens']} prompt tokens, "
            f"{r['tokens']} generated (max {r['max_tokens']}), seed {r['seed']}; {r['rounds']} rounds of both, ABBA order"
        ),
        f"  bare Llama.generate   {r['bare']['tokens_per_s']:7.1f} tok/s   time to first token {r['bare']['ttft_ms']:7.1f} ms",
        f"  callscope loop        {r['callscope']['tokens_per_s']:7.1f} tok/s   time to first token {r['callscope']['ttft_ms']:7.1f} ms",
        f"  ratio {r['ratio']:.3f} (median of per-round ratios; of medians {r['ratio_of_medians']:.3f}), "
        f"target >= {r['target_ratio']}: {ok}; same tokens in every run: " + ("yes" if r["same_tokens"] else "NO"),
        (
            f"  callscope work per token (parse + policy + baseline + trace write): median {work['median']} us, "
            f"p95 {work['p95']} us, mean {work['mean']} us = {100 * (work['share_of_token'] or 0):.2f}% of a token"
        ),
    ]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", metavar="GGUF", help="model file (default: the packaged SmolLM2-135M)")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help=f"rounds of both loops (default {DEFAULT_ROUNDS})")
    parser.add_argument("--max-tokens", type=int, default=DEFAULT_MAX_TOKENS,
                        help=f"tokens per run at most (default {DEFAULT_MAX_TOKENS})")
    parser.add_argument("--format", default="hermes", help="wire format the grammar forces (default hermes)")
    parser.add_argument("--seed", type=int, default=1, help="sampler seed (default 1)")
    parser.add_argument(
        "--builds", metavar="A,B", help="compare llama.cpp builds side by side instead (flag sets built by "
        "scripts/llama_wheel.py, e.g. portable,native, or wheel files), alternating processes")


def run(args: argparse.Namespace) -> int:
    """``callscope bench decode``: the loop comparison, or with ``--builds`` the builds; 0 when on target."""
    if args.rounds < 1 or args.max_tokens < 2:
        raise BenchError("--rounds must be positive and --max-tokens at least 2")
    if args.builds is not None:
        return _run_builds(args)
    result = measure(args.model, args.rounds, args.max_tokens, args.format, args.seed)
    _print(result, args.json, report_lines)
    return 0 if result["ratio"] is not None and result["ratio"] >= TARGET_RATIO and result["same_tokens"] else 1


def _run_builds(args: argparse.Namespace) -> int:
    specs = [s.strip() for s in args.builds.split(",") if s.strip()]
    if len(specs) < 2:
        raise BenchError("--builds needs at least two builds, e.g. portable,native")
    try:
        result = measure_builds(specs, max_tokens=args.max_tokens, seed=args.seed)
    except (ValueError, RuntimeError) as exc:
        raise BenchError(str(exc)) from None
    _print(result, args.json, builds_report_lines)
    return 0


def _print(result: dict[str, Any], as_json: bool, lines: Callable[[dict[str, Any]], list[str]]) -> None:
    print(json.dumps(result, indent=2) if as_json else "\n".join(lines(result)))


# ------------------------------------------------- llama.cpp builds side by side (`bench decode --builds`)


def wheel_cache_root() -> str:
    """Where scripts/llama_wheel.py keeps one wheel per flag set."""
    env = os.environ.get("CALLSCOPE_WHEEL_CACHE")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "callscope", "wheels")


def find_build(spec: str) -> str:
    """A build to benchmark: a wheel file, a folder holding one, or a flag-set name in the wheel cache."""
    import glob

    if os.path.isfile(spec):
        return spec
    folders = [spec] if os.path.isdir(spec) else sorted(
        glob.glob(os.path.join(wheel_cache_root(), f"llama-cpp-python-*-{spec}-*")), key=os.path.getmtime)
    for folder in reversed(folders):
        wheels = sorted(glob.glob(os.path.join(folder, "llama_cpp_python-*.whl")))
        if wheels:
            return wheels[-1]
    raise ValueError(f"no llama-cpp-python wheel for {spec!r} (a wheel, a folder, or a flag set built by "
                     f"scripts/llama_wheel.py under {wheel_cache_root()})")


def _unpack(wheel: str, into: str) -> str:
    import zipfile

    with zipfile.ZipFile(wheel) as z:
        z.extractall(into)
    return into


def _child_bare(max_tokens: int, seed: int, runs: int) -> dict[str, Any]:
    """In a child with one build first on sys.path: bare decode tok/s and prompt time, ``runs`` times."""
    import llama_cpp

    model, live = _live_run(None, max_tokens, "hermes", seed)
    bare_loop(model, live)  # warm-up
    timings = [bare_loop(model, live) for _ in range(runs)]
    return {
        "llama_cpp": os.path.dirname(llama_cpp.__file__),
        "tokens_per_s": [t.tokens_per_s for t in timings],
        "ttft_ms": [t.ttft_ms for t in timings],
        "tokens": [t.tokens for t in timings],
    }


def measure_builds(specs: list[str], rounds: int = 4, max_tokens: int = 160, seed: int = 1,
                   runs_per_round: int = 2) -> dict[str, Any]:
    """Decode speed of several llama.cpp builds, alternating child processes round by round (ABBA)."""
    import subprocess

    wheels = {spec: find_build(spec) for spec in specs}
    samples: dict[str, list[dict[str, Any]]] = {spec: [] for spec in specs}
    with tempfile.TemporaryDirectory(prefix="callscope-builds-") as tmp:
        paths = {spec: _unpack(w, os.path.join(tmp, str(i))) for i, (spec, w) in enumerate(wheels.items())}
        for r in range(rounds):
            for spec in (specs if r % 2 == 0 else list(reversed(specs))):
                env = dict(os.environ, PYTHONPATH=os.pathsep.join([paths[spec], os.environ.get("PYTHONPATH", "")]))
                cmd = child_argv("decode", "--child-bare", str(max_tokens), str(seed), str(runs_per_round))
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
                if proc.returncode != 0:
                    raise RuntimeError(f"build {spec} failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
                samples[spec].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    out: dict[str, Any] = {"rounds": rounds, "runs_per_round": runs_per_round, "max_tokens": max_tokens, "builds": {}}
    first_tokens = None
    for spec in specs:
        rates = [x for s in samples[spec] for x in s["tokens_per_s"]]
        ttft = [x for s in samples[spec] for x in s["ttft_ms"]]
        tokens = samples[spec][0]["tokens"][0]
        first_tokens = first_tokens or tokens
        out["builds"][spec] = {
            "wheel": wheels[spec],
            "tokens_per_s": round(statistics.median(rates), 2),
            "ttft_ms": round(statistics.median(ttft), 1),
            "runs_tokens_per_s": [round(x, 1) for x in rates],
            "generated": len(tokens),
            "same_tokens_as_first": tokens == first_tokens,
        }
    base = out["builds"][specs[0]]["tokens_per_s"]
    for spec in specs:
        out["builds"][spec]["vs_first"] = round(out["builds"][spec]["tokens_per_s"] / base, 3) if base else None
    return out


def builds_report_lines(r: dict[str, Any]) -> list[str]:
    lines = [f"llama.cpp builds, bare decode, {r['rounds']} rounds x {r['runs_per_round']} runs, alternating processes:"]
    for spec, b in r["builds"].items():
        lines.append(f"  {spec:<10} {b['tokens_per_s']:7.1f} tok/s  ({b['vs_first']:.3f} of the first)  "
                     f"time to first token {b['ttft_ms']:6.1f} ms  same tokens: {'yes' if b['same_tokens_as_first'] else 'NO'}")
    return lines


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child-bare":
        print(json.dumps(_child_bare(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))))
        sys.exit(0)
    print("usage: python -m callscope.benchmarks.decode --child-bare MAX_TOKENS SEED RUNS", file=sys.stderr)
    sys.exit(2)
