"""A live run: prompt, forced-call grammar, token loop, live analysis and trace recording together.

Each token goes to :meth:`callscope.engine.analysis.analyzer.Analyzer.feed_bytes` the moment it
is decoded, with its real time, so the report's ``ttfd.streaming`` is when the
first tool-call chunk would have left the server and ``ttfd.atomic`` when the
old emit-at-the-end path would have sent it. With ``record`` set, the same
bytes, times and token ids are written to a ``callscope.trace/1`` file as they
arrive; ``callscope replay`` of that file reproduces the report exactly (times
are rounded to the trace's microsecond precision before analysis for that).

Everything that can be wrong with the inputs fails in :class:`LiveRun`'s
constructor with a :class:`~callscope.engine.core.errors.DecodeError`, before any token
is generated. Run it on the thread that owns the model.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callscope.engine.analysis.analyzer import Analysis, Analyzer, SourceInfo
from callscope.engine.core.errors import DecodeError
from callscope.engine.core.wire import StreamIdentity
from callscope.engine.decode.grammar import ANY, ForcedGrammar, build_tool_grammar, compile_grammar
from callscope.engine.decode.loop import Generation, GenerationStats, SamplerSettings, TokenStep, tokenize_prompt
from callscope.engine.decode.model import LoadedModel, file_sha256
from callscope.engine.decode.progress import NO_PROGRESS, DecodeProgress
from callscope.engine.decode.prompting import AUTO, PromptPlan, plan_prompt
from callscope.engine.formats import make_parser, prompt_opens_reasoning, resolve_thinking
from callscope.engine.policies import POLICY_IDS
from callscope.engine.recordings.trace import TraceHeader, TraceWriter
from callscope.engine.templates.chat import ChatTemplate

#: Called after each token was analysed (and recorded): the GUI's hook; may set the stop flag.
TokenCallback = Callable[[TokenStep, Analyzer], None]


@dataclass(slots=True)
class RunSettings:
    """What to run: the request, how to force a call, how to sample, where to record."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    format_id: str = AUTO
    template: ChatTemplate | None = None
    force_tool: str = ANY
    max_calls: int = 2
    min_calls: int = 1
    content_chars: int = 40
    #: Longest string a forced argument may hold unless its schema says otherwise (``grammar.tighten``);
    #: a schema's own ``minLength`` still wins. The write-file demo raises it for its long ``content``.
    max_string: int = 24
    #: The forced syntax per format that has several (format id -> form, ``grammar.form_choices()``),
    #: e.g. Mistral's ``array`` ([TOOL_CALLS][{...}]) or ``args`` ([TOOL_CALLS]NAME[ARGS]{...}); default: the first.
    forms: dict[str, str] = field(default_factory=dict)
    policy: str = "incremental"
    max_tokens: int = 256
    sampler: SamplerSettings = field(default_factory=SamplerSettings)
    record: str | None = None
    name: str = "run"
    #: A raw GBNF grammar used instead of the forced-call one (experiments, tests); ``force_tool`` is then ignored.
    grammar: str | None = None
    #: ``--thinking``: auto (the text decides when the prompt opened reasoning), on or off.
    thinking: str = "auto"


@dataclass(slots=True)
class LiveResult:
    analysis: Analysis
    stats: GenerationStats
    plan: PromptPlan
    grammar: ForcedGrammar | None
    record: str | None
    #: Per-token cost of callscope's own work (analysis + recording), microseconds.
    process_us: list[float] = field(default_factory=list)


class LiveRun:
    """One prepared live generation; :meth:`run` executes it on the calling (model-owning) thread."""

    def __init__(self, model: LoadedModel, settings: RunSettings) -> None:
        if settings.policy not in POLICY_IDS:
            raise DecodeError(f"unknown policy {settings.policy!r}; known policies: {', '.join(POLICY_IDS)}")
        self.model = model
        # One completion id per run (as a server mints one per request); recorded, so replays reuse it.
        self.identity = StreamIdentity.for_run(f"{settings.name}@{time.time_ns()}")
        self.settings = settings
        self.plan = plan_prompt(settings.messages, settings.tools, settings.format_id, settings.template, model.info)
        self.grammar = (
            None
            if settings.grammar is not None
            else build_tool_grammar(
                self.plan.format_id,
                settings.tools,
                settings.force_tool,
                max_calls=settings.max_calls,
                content_chars=settings.content_chars,
                max_string=settings.max_string,
                min_calls=settings.min_calls,
                forms=settings.forms,
            )
        )
        gbnf = settings.grammar if settings.grammar is not None else (self.grammar.gbnf if self.grammar else None)
        self._llama_grammar = compile_grammar(gbnf, model.llama) if gbnf else None
        self.gbnf = gbnf
        self.prompt_tokens = tokenize_prompt(model, self.plan.prompt)
        # Fails now (PromptTooLong) rather than after the user pressed Run.
        self._check = Generation(model, self.prompt_tokens, settings.max_tokens, settings.sampler)

    # ------------------------------------------------------------ running

    @property
    def thinking(self) -> bool | str:
        """How the parser starts: ``--thinking on``/``off`` as told; ``auto``: undecided when the prompt
        left the model inside a reasoning block (the text then decides), else outside reasoning."""
        return resolve_thinking(self.settings.thinking, prompt_opens_reasoning(self.plan.prompt, self.plan.format_id))

    def source_info(self) -> SourceInfo:
        s = self.settings
        extra = {
            "model": self.model.to_json(),
            "template": self.plan.template.name,
            "template_origin": self.plan.template.origin,
            "template_reason": self.plan.template_reason,
            "format_reason": self.plan.format_reason,
            "force_tool": s.force_tool,
            "forced": self.grammar.describe() if self.grammar else ("a custom grammar" if s.grammar else None),
            "sampler": s.sampler.to_json(),
            "max_tokens": s.max_tokens,
            "thinking": self.thinking,
        }
        return SourceInfo("model", self.model.info.path, self.plan.format_id, s.policy, extra)

    def trace_header(self) -> TraceHeader:
        s = self.settings
        return TraceHeader(
            source="model",
            format=self.plan.format_id,
            template=self.plan.template.name,
            tools=s.tools,
            messages=s.messages,
            model_file=self.model.info.file_name,
            model_sha256=file_sha256(self.model.info.path),
            sampler={**s.sampler.to_json(), "max_tokens": s.max_tokens},
            description=f"callscope run: {self.model.info.name}, {self.grammar.describe() if self.grammar else 'no forced call'}",
            unit="token",
            extra={
                "recorded_policy": s.policy,
                "force_tool": s.force_tool,
                "prompt": self.plan.prompt,
                "prompt_tokens": len(self.prompt_tokens),
                "grammar": self.gbnf,
                "thinking": self.thinking,
                "completion_id": self.identity.completion_id,
            },
        )

    def run(
        self,
        stop: threading.Event | None = None,
        on_token: TokenCallback | None = None,
        progress: DecodeProgress | None = None,
    ) -> LiveResult:
        """Generate, analysing (and recording) each token as it arrives; returns the finished analysis.

        ``progress`` hears of the slow steps before the first token (hashing the model for a
        recording, evaluating the prompt) and of every token, for a status line."""
        s = self.settings
        progress = NO_PROGRESS if progress is None else progress
        analyzer = Analyzer(
            s.name,
            self.source_info(),
            "token",
            True,
            make_parser(self.plan.format_id, s.tools, thinking=self.thinking),
            self.identity,
        )
        # Buffered, not flushed per token: a flush is a write syscall per token on the hot path (about a
        # third of callscope's per-token cost); a crash still leaves a readable, truncated trace.
        writer = None
        if s.record:
            progress.hashing_model(self.model.info)  # the header carries the model's sha256
            writer = TraceWriter(s.record, self.trace_header(), flush_each=False)
        generation = Generation(
            self.model,
            self.prompt_tokens,
            s.max_tokens,
            s.sampler,
            self._llama_grammar,
            stop,
            time.monotonic(),
            progress,
        )
        process_us: list[float] = []
        feed = analyzer.feed_bytes
        clock = time.perf_counter_ns
        try:
            for step in generation:
                began = clock()
                feed(step.data, step.ms, (step.token,))
                if writer is not None:
                    writer.write_step(step.ms, step.data, (step.token,))
                process_us.append((clock() - began) / 1000.0)
                if on_token is not None:
                    on_token(step, analyzer)
            stats = generation.stats
            cause = stats.cause or "error"
            analysis = analyzer.finish(cause)
            detail = stats.error if cause == "error" else None
            if writer is not None:
                writer.end(cause, stats.end_ms, detail)
        finally:
            if writer is not None:
                writer.close()
        analysis.source.extra["decode"] = stats.to_json()  # type: ignore[index]
        if detail:
            analysis.source.extra["end_detail"] = detail  # type: ignore[index]
        if s.record:
            analysis.source.extra["record"] = str(Path(s.record))  # type: ignore[index]
        return LiveResult(analysis, stats, self.plan, self.grammar, s.record, process_us)
