"""`callscope bench decode`: callscope's live loop against a bare ``Llama.generate`` loop.

Same model, prompt, grammar, sampler and seed; the two loops alternate in one
process (ABBA order, after one warm-up of each) so machine noise hits both.
The bare loop only pulls tokens and checks for end-of-generation; callscope's
loop also detokenizes the whole prefix, parses, runs the policy and the atomic
baseline, and records a trace. Reported: steady decode tokens/s of each and
their ratio (target >= 0.97), time to first token, and callscope's own
per-token cost (analysis + recording). Both loops must produce the same
tokens, which is checked and printed.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, TextIO

from callscope.engine.decode.loop import SamplerSettings
from callscope.engine.decode.messages import default_messages
from callscope.engine.decode.model import LoadedModel, load_model
from callscope.engine.decode.session import LiveRun, RunSettings
from callscope.engine.shipped import resource
from callscope.engine.tools import load_tools

TARGET_RATIO = 0.97


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


def measure(
    model_path: str | None = None,
    rounds: int = 6,
    max_tokens: int = 160,
    format_id: str = "hermes",
    seed: int = 1,
) -> dict[str, Any]:
    """Run the comparison and return the numbers (see module docstring)."""
    model = load_model(model_path, seed=seed)
    settings = RunSettings(
        messages=default_messages(),
        tools=load_tools(resource("tools", "default.json")),
        format_id=format_id,
        max_calls=2,
        max_tokens=max_tokens,
        sampler=SamplerSettings(seed=seed),
        name="bench",
    )
    live = LiveRun(model, settings)
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


def run(as_json: bool = False, out: TextIO | None = None, **options: Any) -> dict[str, Any]:
    """Entry point for ``callscope bench decode``; ``options`` go to :func:`measure`."""
    out = out or sys.stdout
    result = measure(**options)
    if as_json:
        json.dump(result, out, indent=2)
        out.write("\n")
    else:
        out.write("\n".join(report_lines(result)) + "\n")
    return result
