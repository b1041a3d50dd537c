"""The timeline's lanes: what happened at which x, grouped by lane and kind.

Lanes, top to bottom: tokens; parse events (call opened, name complete,
arguments growing, content, reasoning, revisions, failures); the chunks the
current policy emitted, by kind; the atomic baseline's emission; violations.
Each lane is a dict ``kind -> Series`` (parallel lists of x, step, label) so the
GUI turns each series into one plot item (20,000 tokens are one item, not
20,000), and the legend names every kind. Dense kinds (tokens, appended text)
carry no label: the hover preview describes a position on demand instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.analysis.units import step_noun
from callscope.engine.core.parse_model import (
    ArgumentsAppended,
    CallNamed,
    CallOpened,
    CallRevised,
    CallsDropped,
    ContentAppended,
    ContentRevised,
    ParseFailed,
    ReasoningAppended,
)
from callscope.engine.core.wire import WireChunk
from callscope.engine.inspector.timebase import Timebase

TOKENS = "tokens"
PARSE = "parse"
WIRE = "wire"
ATOMIC = "atomic"
VIOLATIONS = "violations"
LANE_KEYS = (TOKENS, PARSE, WIRE, ATOMIC, VIOLATIONS)

#: Parse-event kinds (each event class's ``kind``) in legend order.
PARSE_KINDS = ("content", "reasoning", "call opened", "name complete", "arguments", "revised", "failed")
WIRE_KINDS = ("role", "content", "reasoning", "header", "arguments", "finish")

_DENSE = {"content", "reasoning", "arguments"}  # one mark per token: no label (see module doc)

@dataclass(slots=True)
class Series:
    """Marks of one kind in one lane."""

    xs: list[float] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def add(self, x: float, step: int, label: str = "") -> None:
        self.xs.append(x)
        self.steps.append(step)
        if label:
            self.labels.append(label)

    def __len__(self) -> int:
        return len(self.xs)


@dataclass(slots=True)
class Lane:
    key: str
    title: str
    series: dict[str, Series] = field(default_factory=dict)

    def kind(self, kind: str) -> Series:
        return self.series.setdefault(kind, Series())

    @property
    def count(self) -> int:
        return sum(len(s) for s in self.series.values())


@dataclass(slots=True)
class CallSpan:
    """A call's life on the timeline: opened, named, arguments from first to last growth."""

    index: int
    opened_x: float
    named_x: float | None
    args_first_x: float | None
    args_last_x: float | None
    name: str | None


class Lanes:
    """All lanes of one analysis; :meth:`sync` extends them as a live run grows."""

    def __init__(self, analysis: Analysis, timebase: Timebase) -> None:
        self.analysis = analysis
        self.timebase = timebase
        policy = analysis.source.policy
        self.lanes: dict[str, Lane] = {
            TOKENS: Lane(TOKENS, "tokens" if analysis.unit == "token" else f"steps ({step_noun(analysis)})"),
            PARSE: Lane(PARSE, "parse events"),
            WIRE: Lane(WIRE, f"wire · {policy}"),
            # Under the atomic policy the wire lane is already "wire · atomic": the baseline says what it is.
            ATOMIC: Lane(ATOMIC, "baseline · atomic" if policy == "atomic" else "wire · atomic"),
            VIOLATIONS: Lane(VIOLATIONS, "violations"),
        }
        self.calls: dict[int, CallSpan] = {}
        self._positions = 1
        self._events = 0
        self._chunks = 0
        self.sync()

    def __getitem__(self, key: str) -> Lane:
        return self.lanes[key]

    def sync(self) -> None:
        tb = self.timebase
        tokens = self.lanes[TOKENS].kind("token")
        tokens.xs.extend(tb.xs[self._positions :])
        tokens.steps.extend(tb.steps[self._positions :])
        self._positions = len(tb)
        # Events and chunks come in step order: a step's x is looked up once, not per mark (a 100,000-step
        # trace has two marks a step), and a dense mark is two appends.
        parse = self.lanes[PARSE]
        events = self.analysis.parse_events
        x_at = _XOf(tb)
        track = self._track_call
        for step, event in events[self._events :] if self._events else events:
            kind = event.kind
            x = x_at(step)
            series = parse.series.get(kind) or parse.kind(kind)
            if kind in _DENSE:
                series.xs.append(x)
                series.steps.append(step)
                if kind == "arguments":
                    track(event, x)
            else:
                series.add(x, step, _event_label(event))
                track(event, x)
        self._events = len(events)
        wire = self.lanes[WIRE]
        chunks = self.analysis.chunks
        for chunk in chunks[self._chunks :] if self._chunks else chunks:
            kind = chunk.kind
            if kind == "finish" and chunk.finish_reason is None:
                continue  # not sent (:func:`_sent`)
            series = wire.series.get(kind) or wire.kind(kind)
            if kind in _DENSE:
                series.xs.append(x_at(chunk.step))
                series.steps.append(chunk.step)
            else:
                series.add(x_at(chunk.step), chunk.step, _chunk_label(chunk))
        self._chunks = len(chunks)
        self._rebuild_finished_lanes()

    def _rebuild_finished_lanes(self) -> None:
        """Atomic baseline and violations are short lists: rebuilt whole."""
        tb = self.timebase
        atomic = Lane(ATOMIC, self.lanes[ATOMIC].title)
        for chunk in self.analysis.baseline_chunks:
            if chunk.kind in ("header", "arguments", "finish") and _sent(chunk):
                atomic.kind(chunk.kind).add(tb.x_of_step(chunk.step), chunk.step, _chunk_label(chunk))
        self.lanes[ATOMIC] = atomic
        violations = Lane(VIOLATIONS, self.lanes[VIOLATIONS].title)
        for v in self.analysis.violations:
            step = v.step if v.step is not None else tb.steps[-1]
            violations.kind("violation").add(tb.x_of_step(step), step, f"{v.rule}: {v.detail}")
        self.lanes[VIOLATIONS] = violations

    def _track_call(self, event: object, x: float) -> None:
        if isinstance(event, CallOpened):
            self.calls[event.index] = CallSpan(event.index, x, None, None, None, None)
        elif isinstance(event, CallNamed) and event.index in self.calls:
            span = self.calls[event.index]
            span.named_x, span.name = x, event.name
        elif isinstance(event, (ArgumentsAppended, CallRevised)):
            span = self.calls.get(event.index)
            if span is None:
                span = self.calls[event.index] = CallSpan(event.index, x, None, None, None, None)
            if isinstance(event, CallRevised) and event.name and span.named_x is None:
                span.named_x, span.name = x, event.name
            if span.args_first_x is None:
                span.args_first_x = x
            span.args_last_x = x


class _XOf:
    """A step's x on ``timebase``, remembering the last step asked (marks come in step order)."""

    __slots__ = ("timebase", "step", "x")

    def __init__(self, timebase: Timebase) -> None:
        self.timebase = timebase
        self.step: int | None = None
        self.x = 0.0

    def __call__(self, step: int) -> float:
        if step != self.step:
            self.step, self.x = step, self.timebase.x_of_step(step)
        return self.x


def _sent(chunk: WireChunk) -> bool:
    """False for the finish record of a stream that ended without a finish_reason: no glyph for it."""
    return chunk.kind != "finish" or chunk.finish_reason is not None


def _clip(text: str, limit: int = 60) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _event_label(event: object) -> str:
    if isinstance(event, (ContentAppended, ReasoningAppended)):
        return repr(_clip(event.text))
    if isinstance(event, CallOpened):
        return f"call {event.index} opened" + (f" (id {event.id})" if event.id else "")
    if isinstance(event, CallNamed):
        return f"call {event.index} named {event.name!r}"
    if isinstance(event, ArgumentsAppended):
        return f"call {event.index} += {_clip(event.text)!r}"
    if isinstance(event, CallRevised):
        return f"call {event.index} revised: {event.name} {_clip(event.arguments)!r}"
    if isinstance(event, CallsDropped):
        return f"calls dropped to {event.count}"
    if isinstance(event, ContentRevised):
        return "content revised"
    if isinstance(event, ParseFailed):
        return f"parser threw: {event.message}"
    return type(event).__name__


def _chunk_label(chunk: WireChunk) -> str:
    if chunk.kind == "header":
        return f"[{chunk.index}] {chunk.name} header {_clip(chunk.text)!r}"
    if chunk.kind == "arguments":
        return f"[{chunk.index}] += {_clip(chunk.text)!r}"
    if chunk.kind == "finish":
        return f"finish_reason={chunk.finish_reason}"
    if chunk.kind == "role":
        return "role: assistant"
    return f"{chunk.kind} {_clip(chunk.text)!r}"
