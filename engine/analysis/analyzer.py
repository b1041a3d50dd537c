"""One stream analysed: steps in, parse events, wire chunks, reconciliation and TTFD out.

:class:`Analyzer` is fed live (the decode loop, one token at a time) or from a
recording (a trace, an imported fixture, a text split into steps); it runs the
chosen policy and, side by side, the atomic baseline, and :meth:`Analyzer.finish`
returns an :class:`Analysis`: the plain data every report, test and GUI pane is
computed from. Nothing here keeps a snapshot per step; a parse at any step is
folded from the event log on demand (:meth:`Analysis.parse_at`).
"""

from __future__ import annotations

import bisect
import codecs
from dataclasses import dataclass, field
from typing import Any

from callscope.engine.core import rules
from callscope.engine.core.causes import STOP, UNFINISHED
from callscope.engine.core.json_text import check
from callscope.engine.core.parse_model import (
    CallNamed,
    CallRevised,
    Parse,
    ParseAccumulator,
    ParseEvent,
    ParseFailed,
    diff_parses,
)
from callscope.engine.core.wire import StreamIdentity, Violation, WireChunk
from callscope.engine.formats import FormatParser, UndecidedReasoning
from callscope.engine.policies import make_policy
from callscope.engine.policies.atomic import AtomicPolicy
from callscope.engine.policies.base import StreamingPolicy

#: One decoded token as a live source hands it over: its bytes, ms since the start, its id.
TokenItem = tuple[bytes, float | None, int]
#: ``finish_cause`` of an analysis whose stream has not ended yet (a live run or capture, still growing);
#: the real causes are :data:`~callscope.engine.core.causes.END_CAUSES`. Here because every source's
#: analyzer sets it and every view reads it.
RUNNING = "running"


@dataclass(frozen=True, slots=True)
class StepTime:
    step: int | None = None
    ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "ms": self.ms}


@dataclass(slots=True)
class StepRecord:
    """One piece fed to the parser: its number, time, the bytes it added, its token ids."""

    step: int
    ms: float | None
    data: bytes = b""
    tokens: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class SourceInfo:
    kind: str  # fixture | trace | text | model | capture
    path: str | None
    format: str | None
    policy: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": self.path, "format": self.format, "policy": self.policy, **self.extra}


@dataclass(slots=True)
class CallReport:
    index: int
    id: str
    name: str
    streamed_arguments: str
    final_arguments: str | None
    reconstructs: bool
    first_delta: StepTime
    name_complete: StepTime
    #: A capture's verdicts by client profile (what each real client assembled for this call), if judged.
    clients: list[dict[str, Any]] = field(default_factory=list)
    #: The stream ended (cancelled, the token limit, an error) while this call was being written: its
    #: arguments stop part-way (not whole JSON), so reconstructing it only means both sides hold half a call.
    cut: bool = False

    def to_json(self) -> dict[str, Any]:
        out = {
            "index": self.index,
            "id": self.id,
            "name": self.name,
            "streamed_arguments": self.streamed_arguments,
            "final_arguments": self.final_arguments,
            "reconstructs": self.reconstructs,
            "first_delta": self.first_delta.to_json(),
            "name_complete": self.name_complete.to_json(),
        }
        if self.clients:
            out["clients"] = self.clients
        if self.cut:
            out["cut"] = True
        return out


@dataclass(slots=True)
class Analysis:
    """Everything known about one analysed stream. Plain data; the GUI adapts it."""

    name: str
    source: SourceInfo
    unit: str
    timed: bool
    steps: list[StepRecord]
    parse_events: list[tuple[int, ParseEvent]]
    terminal_events_from: int  # parse_events[terminal_events_from:] belong to the terminal parse
    terminal: Parse
    chunks: list[WireChunk]
    baseline_chunks: list[WireChunk]  # what the atomic baseline emitted
    calls: list[CallReport]
    violations: list[Violation]
    finish_reason: str | None
    finish_cause: str
    ttfd_streaming: StepTime
    ttfd_atomic: StepTime
    identity: StreamIdentity
    content_streamed: str
    truncated: bool = False

    # ------------------------------------------------------------ lookups

    @property
    def running(self) -> bool:
        """The stream is still arriving: lists grow, the verdict is not in yet."""
        return self.finish_cause == RUNNING

    @property
    def step_count(self) -> int:
        return len(self.steps)

    @property
    def last_step(self) -> int:
        return self.steps[-1].step if self.steps else 0

    def step_numbers(self) -> list[int]:
        return [s.step for s in self.steps]

    def chunks_until(self, step: int) -> list[WireChunk]:
        """Chunks emitted at or before ``step``."""
        keys = [c.step for c in self.chunks]
        return self.chunks[: bisect.bisect_right(keys, step)]

    def parse_at(self, step: int) -> Parse:
        """The parse the server held after ``step`` (terminal parse at or after the last step)."""
        keys = [s for s, _ in self.parse_events]
        end = bisect.bisect_right(keys, step)
        final = step >= self.last_step
        if not final:
            end = min(end, self.terminal_events_from)
        acc = ParseAccumulator()
        for _, event in self.parse_events[:end]:
            acc.apply(event)
        return acc.snapshot(partial=not final)

    def text_until(self, step: int) -> str:
        """The generated text after ``step`` (whole byte prefix decoded at once)."""
        data = b"".join(s.data for s in self.steps if s.step <= step)
        return data.decode("utf-8", errors="replace")


class Analyzer:
    """Feeds one stream through a parser and a policy (plus the atomic baseline).

    Recordings call :meth:`feed_bytes`/:meth:`feed_parse` and :meth:`finish`. A live
    model run also uses the :class:`~callscope.engine.analysis.live.LiveAnalysis` side
    (:meth:`feed`, :meth:`provisional`, :meth:`refresh`) so the GUI can show it grow.
    """

    def __init__(
        self,
        name: str,
        source: SourceInfo,
        unit: str,
        timed: bool,
        parser: FormatParser | None,
        identity: StreamIdentity | None = None,
    ) -> None:
        self.name = name
        self.source = source
        self.unit = unit
        self.timed = timed
        self.parser = parser
        self.identity = identity or StreamIdentity.for_run(name)
        self.policy: StreamingPolicy = make_policy(source.policy, self.identity.completion_id)
        self.baseline: StreamingPolicy | None = (
            None if source.policy == AtomicPolicy.policy_id else AtomicPolicy(self.identity.completion_id)
        )
        self.steps: list[StepRecord] = []
        self.parse_events: list[tuple[int, ParseEvent]] = []
        self._named: dict[int, StepTime] = {}
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._previous_parse = Parse()
        self._step = 0
        self._finished: Analysis | None = None
        #: The parser reads the reasoning state from the text (``--thinking auto``) and has not decided yet.
        self._undecided = isinstance(parser, UndecidedReasoning)
        self.policy.start(0.0 if timed else None)
        if self.baseline is not None:
            self.baseline.start(0.0 if timed else None)

    # ------------------------------------------------------------ feeding

    @property
    def chunks(self) -> list[WireChunk]:
        return self.policy.chunks

    def feed_bytes(self, data: bytes, ms: float | None = None, tokens: tuple[int, ...] = (), step: int | None = None) -> None:
        """A text source's next piece: the bytes it added (may end inside a UTF-8 character)."""
        assert self.parser is not None, "feed_bytes needs a format parser"
        number = self._next_step(step)
        self.steps.append(StepRecord(number, ms, data, tokens))
        text = self._decoder.decode(data)
        self._advance(number, ms, self.parser.feed(text) if text else [])

    def feed_text(self, text: str, ms: float | None = None, step: int | None = None) -> None:
        self.feed_bytes(text.encode("utf-8"), ms, (), step)

    def feed_parse(self, parse: Parse | ParseFailed, ms: float | None = None, step: int | None = None) -> None:
        """A parse-carrying source's next record (imported fixtures): a whole parse or a failure."""
        number = self._next_step(step)
        self.steps.append(StepRecord(number, ms))
        if isinstance(parse, ParseFailed):
            events: list[ParseEvent] = [parse]
        else:
            events = diff_parses(self._previous_parse, parse)
            self._previous_parse = parse
        self._advance(number, ms, events)

    def feed(self, item: TokenItem) -> None:
        """One decoded token as the decode worker hands it over: ``(bytes, ms, token id)``."""
        data, ms, token = item
        self.feed_bytes(data, ms, (token,))

    def _next_step(self, step: int | None) -> int:
        if self._finished is not None:
            raise RuntimeError("stream already finished")
        self._step = self._step + 1 if step is None else step
        return self._step

    def _advance(self, step: int, ms: float | None, events: list[ParseEvent]) -> None:
        if self._undecided:
            self._note_thinking(step)
        for event in events:
            self.parse_events.append((step, event))
            if isinstance(event, (CallNamed, CallRevised)) and event.name is not None:
                self._named.setdefault(event.index, StepTime(step, ms))
        self.policy.step(step, ms, events)
        if self.baseline is not None:
            self.baseline.step(step, ms, events)

    def _note_thinking(self, step: int) -> None:
        """Once an undecided parser has read the reasoning state from the text: the source says what and where."""
        decision = getattr(self.parser, "decision", None)
        if decision is not None:
            self._undecided = False
            self.source.extra["thinking_inferred"] = {**decision.to_json(), "step": step}

    # ------------------------------------------------------------ live view

    def provisional(self) -> Analysis:
        """The analysis of what was fed so far, still :data:`RUNNING`.

        It wraps this analyzer's own lists (steps, events, chunks, violations; no copy), so
        every inspector structure built on it sees new steps; :meth:`refresh` updates the
        fields that are values. :meth:`finish` later returns the real Analysis.
        """
        return self._analysis(
            terminal_events_from=len(self.parse_events),
            terminal=self.parser.snapshot() if self.parser is not None else Parse(),
            calls=[],
            violations=self.policy.violations,
            finish_reason=None,
            finish_cause=RUNNING,
            ttfd_streaming=_first_tool_chunk(self.policy.chunks),
            ttfd_atomic=StepTime(),
            content_streamed="",
        )

    def refresh(self, analysis: Analysis) -> None:
        """Update the values (not the shared lists) of a :meth:`provisional` analysis."""
        analysis.terminal_events_from = len(self.parse_events)
        if analysis.ttfd_streaming.step is None:
            analysis.ttfd_streaming = _first_tool_chunk(self.policy.chunks)
        if self.parser is not None:
            analysis.terminal = self.parser.snapshot()

    # ------------------------------------------------------------ ending

    def finish(
        self,
        cause: str = "stop",
        terminal: Parse | None = None,
        truncated: bool = False,
        extra_violations: list[Violation] | None = None,
    ) -> Analysis:
        """Terminal parse, reconciliation, verdict. ``terminal`` is given by parse-carrying sources."""
        if self._finished is not None:
            return self._finished
        step = self._step
        ms = self.steps[-1].ms if self.steps else (0.0 if self.timed else None)
        start = len(self.parse_events)
        if terminal is None and cause in UNFINISHED:
            # A cut stream never reaches the terminal parse: what the parser held back (a half-typed
            # marker, a call being written) stays held, never flushed as content. Its last parse stands.
            assert self.parser is not None
            events = []
            terminal = self.parser.snapshot()
        elif terminal is None:
            assert self.parser is not None
            tail = self._decoder.decode(b"", final=True)
            events = (self.parser.feed(tail) if tail else []) + self.parser.finish()
            terminal = self.parser.snapshot()
        else:
            events = diff_parses(self._previous_parse, terminal)
        terminal = Parse(terminal.content, terminal.reasoning, terminal.calls, partial=False)
        if self._undecided:
            self._note_thinking(step)
        for event in events:
            self.parse_events.append((step, event))
            if isinstance(event, (CallNamed, CallRevised)) and event.name is not None:
                self._named.setdefault(event.index, StepTime(step, ms))
        policy_cause = "error" if truncated else cause
        self.policy.finish(step, ms, events, terminal, policy_cause)
        if self.baseline is not None:
            self.baseline.finish(step, ms, events, terminal, policy_cause)
        violations = list(extra_violations or [])
        if truncated:
            violations.append(Violation(rules.STREAM_TRUNCATED, step or None, "the recording has no end record; analysed what is there"))
        violations.extend(self.policy.violations)
        violations.extend(_invalid_json_arguments(terminal, step))
        self._finished = self._analysis(
            terminal_events_from=start,
            terminal=terminal,
            calls=self._call_reports(terminal, cause),
            violations=violations,
            finish_reason=self.policy.finish_reason,
            finish_cause=cause,
            ttfd_streaming=_first_tool_chunk(self.policy.chunks),
            ttfd_atomic=_first_tool_chunk((self.baseline or self.policy).chunks),
            content_streamed=self.policy.content.sent_text(),
            truncated=truncated,
        )
        return self._finished

    def _analysis(self, **verdict: Any) -> Analysis:
        """An Analysis of this stream: what it is and what was fed (shared lists), plus ``verdict``'s fields."""
        return Analysis(
            name=self.name,
            source=self.source,
            unit=self.unit,
            timed=self.timed,
            steps=self.steps,
            parse_events=self.parse_events,
            chunks=self.policy.chunks,
            baseline_chunks=(self.baseline or self.policy).chunks,
            identity=self.identity,
            **verdict,
        )

    def _call_reports(self, terminal: Parse, cause: str) -> list[CallReport]:
        first: dict[int, StepTime] = {}
        for chunk in self.policy.chunks:
            if chunk.is_tool_call and chunk.index is not None and chunk.index not in first:
                first[chunk.index] = StepTime(chunk.step, chunk.ms)
        reports = []
        for index, call_id, name, streamed in self.policy.wire_calls():
            final = terminal.calls[index] if index < len(terminal.calls) else None
            reports.append(
                CallReport(
                    index=index,
                    id=call_id,
                    name=name,
                    streamed_arguments=streamed,
                    final_arguments=final.arguments if final else None,
                    reconstructs=final is not None and final.name == name and final.arguments == streamed,
                    first_delta=first.get(index, StepTime()),
                    name_complete=self._named.get(index, StepTime()),
                    cut=cause != STOP and not _whole_json(final.arguments if final else streamed),
                )
            )
        return reports


@dataclass(frozen=True, slots=True)
class HeadlineTimes:
    """The two times every pane quotes (:func:`headline_times`)."""

    #: The shown policy's first tool-call delta (a header or argument fragment; content and reasoning do not count).
    first_delta: StepTime
    #: When the atomic baseline sends the call whole (unknown while a live run grows or when a cut stream never ended it).
    atomic: StepTime


def headline_times(analysis: Analysis) -> HeadlineTimes:
    """The first tool-call delta and the atomic emission of ``analysis``: the headline badge's two times.

    The report, the badge, the client view, presenter mode, the TTFD plot and the
    compare view all read them here, so they cannot quote different moments (the
    client view once took the first chunk of reasoning for the first delta). A live
    analysis whose value has not been refreshed yet is read from its chunks.
    """
    first = analysis.ttfd_streaming
    if first.step is None and analysis.running:
        first = _first_tool_chunk(analysis.chunks)
    return HeadlineTimes(first, analysis.ttfd_atomic)


def _first_tool_chunk(chunks: list[WireChunk]) -> StepTime:
    for chunk in chunks:
        if chunk.is_tool_call:
            return StepTime(chunk.step, chunk.ms)
    return StepTime()


def _whole_json(text: str) -> bool:
    """``text`` is one whole JSON value (the grammar only, as :func:`_invalid_json_arguments` checks)."""
    try:
        check(text)
    except ValueError:
        return False
    return True


def _invalid_json_arguments(terminal: Parse, step: int) -> list[Violation]:
    found = []
    for index, call in enumerate(terminal.calls):
        try:
            check(call.arguments)  # the grammar only: deep nesting and long integers are valid JSON
        except ValueError as exc:
            found.append(
                Violation(rules.INVALID_JSON_ARGUMENTS, step or None, f"final arguments are not valid JSON: {exc}", index)
            )
    return found
