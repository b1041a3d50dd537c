"""What a stream means, assembled as it arrives, and the Analysis the panes and the report show of it.

Every protocol (:mod:`.chat`, :mod:`.responses`, :mod:`.anthropic`) reads its
own events, but they all say the same few things: text was appended, a call
was opened (id, name), arguments were appended, the turn finished. A
:class:`StreamBuilder` keeps those as steps, wire chunks and parse events
(the vocabulary every pane already draws), judges what every protocol shares
(markers leaked into content, a call sent atomically, arguments that do not
parse, an end without its proper finish), and builds the
:class:`~callscope.engine.analysis.analyzer.Analysis`. What it assembles is *the call
the stream meant* (a split name joined, a repeated id taken once): client
profiles (:mod:`.clients`) are compared against it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from callscope.engine.analysis.analyzer import RUNNING, Analysis, CallReport, SourceInfo, StepRecord, StepTime
from callscope.engine.core import rules
from callscope.engine.core.json_text import check
from callscope.engine.core.parse_model import (
    ArgumentsAppended,
    CallNamed,
    CallOpened,
    ContentAppended,
    Parse,
    ParsedCall,
    ParseEvent,
    ReasoningAppended,
)
from callscope.engine.core.pieces import joined
from callscope.engine.core.wire import (
    ARGUMENTS,
    CONTENT,
    FINISH,
    HEADER,
    REASONING,
    ROLE,
    StreamIdentity,
    Violation,
    WireChunk,
)
from callscope.engine.formats import markers_view

CAPTURE_POLICY = "server"  # source.policy of a capture: the server decided what went out
DEFAULT_ATOMIC_SILENCE_MS = 1000.0
#: Shorter calls are not flagged atomic: a streaming server may well send ``{}`` in one chunk.
ATOMIC_MIN_CHARS = 16

#: Tool-call markers and special tokens that must never reach a client as content: every wire format's
#: (its spec's ``markers.leak``; kept current when a format is registered), plus the ``<tool_calls>``
#: wrapper of servers whose format callscope does not parse.
CONTENT_MARKERS: Sequence[str] = markers_view(extra=("<tool_calls>", "</tool_calls>"))
#: ``<|im_end|>``, ``<|eot_id|>``, ``<|tool_call_begin|>``, ``<|channel|>``...: any special token in that form.
_SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z0-9_.\-]{1,48}\|>")
_MARKER_WINDOW = max(max(len(m) for m in CONTENT_MARKERS), 52)


@dataclass(slots=True)
class ClientVerdict:
    """What one client profile ended with for one call, and whether that is the call the stream meant."""

    profile: str
    id: str | None = None
    name: str | None = None
    arguments: str | None = None
    error: str | None = None  # the exception it raised ("TypeError: ..."), if it did
    matches: bool = False
    invalid: bool = False  # the library flagged the call unusable (LangChain's invalid_tool_calls, the AI SDK)

    def to_json(self) -> dict[str, Any]:
        found = {"profile": self.profile, "id": self.id, "name": self.name, "arguments": self.arguments,
                 "error": self.error, "matches": self.matches}
        if self.invalid:
            found["invalid"] = True
        return found


@dataclass(slots=True)
class Call:
    """One call as the stream meant it, plus what the checks need to judge it."""

    slot: int  # position in the assembled message (order of first appearance)
    index: int  # the wire index (the slot when the server sent none, or a bad one)
    id: str | None = None
    name_pieces: list[str] = field(default_factory=list)
    pieces: list[str] = field(default_factory=list)
    length: int = 0
    boundaries: list[tuple[int, int]] = field(default_factory=list)  # (length after fragment, step)
    first: StepTime = field(default_factory=StepTime)
    named: StepTime = field(default_factory=StepTime)
    last_fragment: StepTime = field(default_factory=StepTime)
    argument_chunks: int = 0
    silence_ms: float = 0.0  # longest silence before a chunk of this call
    reported: set[str] = field(default_factory=set)
    ids_reported: set[str] = field(default_factory=set)
    corrupted: bool = False  # arguments knowingly spoiled (duplicated, index reused): skip the JSON check
    done: bool = False  # the protocol said the call is complete (Responses .done, Anthropic block stop)
    clients: list[ClientVerdict] = field(default_factory=list)

    @property
    def name(self) -> str | None:
        return joined(self.name_pieces) if self.name_pieces else None

    def arguments(self) -> str:
        return joined(self.pieces)


class StreamBuilder:
    """One assembled message (one choice of one stream) and its shared verdicts.

    Protocol readers call :meth:`open_call`, :meth:`name_more`, :meth:`add_arguments`,
    :meth:`content`, :meth:`reasoning`, :meth:`finish_reason_at` and :meth:`violate`;
    the capture analyzer builds the :class:`Analysis` with :meth:`analysis`.
    ``steps`` may be shared by several builders (one per choice of an ``n > 1`` stream).
    """

    def __init__(self, steps: list[StepRecord], atomic_silence_ms: float = DEFAULT_ATOMIC_SILENCE_MS) -> None:
        self.steps = steps
        self.atomic_silence_ms = atomic_silence_ms
        self.parse_events: list[tuple[int, ParseEvent]] = []
        self.chunks: list[WireChunk] = []
        self.violations: list[Violation] = []
        self.calls: list[Call] = []
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._content_tail = ""
        self._markers_seen: set[str] = set()
        self.finish_reason: str | None = None
        self.finish_step: StepTime = StepTime()
        self.reported: set[str] = set()  # stream-wide rules reported once

    # ------------------------------------------------------------ what arrived

    def role(self, step: int, ms: float | None) -> None:
        self.chunks.append(WireChunk(step, ms, ROLE))

    def content(self, step: int, ms: float | None, text: str) -> None:
        self._content.append(text)
        self.parse_events.append((step, ContentAppended(text)))
        self.chunks.append(WireChunk(step, ms, CONTENT, text))
        self._check_markers(step, text)

    def reasoning(self, step: int, ms: float | None, text: str) -> None:
        self._reasoning.append(text)
        self.parse_events.append((step, ReasoningAppended(text)))
        self.chunks.append(WireChunk(step, ms, REASONING, text))

    def open_call(self, step: int, ms: float | None, silence: float, index: int, call_id: str | None,
                  name: str | None, arguments: str = "") -> Call:
        """A new call (its header chunk), with whatever arguments came with it."""
        call = Call(slot=len(self.calls), index=index, id=call_id, first=StepTime(step, ms))
        self.calls.append(call)
        self.parse_events.append((step, CallOpened(call.slot, call_id)))
        if name:
            self.name_more(step, ms, call, name)
        self.chunks.append(WireChunk(step, ms, HEADER, arguments, index, call_id, name))
        call.silence_ms = silence
        if arguments:
            self.add_arguments(step, ms, silence, call, arguments)
        return call

    def name_more(self, step: int, ms: float | None, call: Call, text: str) -> None:
        """More of a call's name (a name split over chunks is shown whole: the event carries the name so far)."""
        call.name_pieces.append(text)
        if call.named.step is None:
            call.named = StepTime(step, ms)
        self.parse_events.append((step, CallNamed(call.slot, joined(call.name_pieces))))

    def fragment(self, step: int, ms: float | None, silence: float, call: Call, arguments: str,
                 call_id: str | None = None, name: str | None = None) -> None:
        """A later chunk of a call (its arguments chunk; ``call_id``/``name`` as re-sent on it, for ``--chunks``)."""
        self.chunks.append(WireChunk(step, ms, ARGUMENTS, arguments, call.index, call_id, name))
        call.silence_ms = max(call.silence_ms, silence)
        if arguments:
            self.add_arguments(step, ms, silence, call, arguments)

    def add_arguments(self, step: int, ms: float | None, silence: float, call: Call, text: str) -> None:
        if call.length >= 2 and len(text) >= call.length and text.startswith(call.arguments()):
            call.corrupted = True
            self.violate(
                rules.DUPLICATED_ARGUMENTS, step,
                f"fragment re-sends all {call.length} chars of arguments already sent ({clip(call.arguments(), 40)}); "
                "the concatenation repeats them",
                call.index,
            )
        call.pieces.append(text)
        call.length += len(text)
        call.boundaries.append((call.length, step))
        call.argument_chunks += 1
        call.silence_ms = max(call.silence_ms, silence)
        call.last_fragment = StepTime(step, ms)
        self.parse_events.append((step, ArgumentsAppended(call.slot, text)))

    def finish_reason_at(self, step: int, ms: float | None, reason: str) -> None:
        self.finish_reason = reason
        self.finish_step = StepTime(step, ms)
        self.chunks.append(WireChunk(step, ms, FINISH, finish_reason=reason))

    @property
    def content_text(self) -> str:
        return "".join(self._content)

    # ------------------------------------------------------------ verdicts

    def violate(self, rule: str, step: int | None, detail: str, call_index: int | None = None) -> None:
        self.violations.append(Violation(rule, step, detail, call_index))

    def once(self, call: Call | None, rule: str, step: int | None, detail: str) -> None:
        """Report ``rule`` once per call (or once per stream when ``call`` is None)."""
        seen = call.reported if call is not None else self.reported
        if rule not in seen:
            seen.add(rule)
            self.violate(rule, step, detail, call.index if call is not None else None)

    def _check_markers(self, step: int, text: str) -> None:
        """Markers may be split over chunks: search the tail of earlier content plus the new text."""
        window = self._content_tail + text
        fresh_from = len(self._content_tail)
        found: list[tuple[int, str]] = []
        for marker in CONTENT_MARKERS:
            pos = window.find(marker)
            while pos >= 0:
                if pos + len(marker) > fresh_from:
                    found.append((pos, marker))
                    break
                pos = window.find(marker, pos + 1)
        for match in _SPECIAL_TOKEN.finditer(window):
            if match.end() > fresh_from:
                found.append((match.start(), match.group()))
        for _, marker in sorted(found):
            if marker not in self._markers_seen:
                self._markers_seen.add(marker)
                self.violate(rules.MARKER_IN_CONTENT, step, f"{marker!r} in delta.content: {clip(window, 60)}")
        self._content_tail = window[-(_MARKER_WINDOW - 1):]

    def call_verdicts(self, call: Call, skip_json: bool) -> list[Violation]:
        """What is wrong with one assembled call: arguments that do not parse (or a repeat), or an atomic send."""
        found: list[Violation] = []
        arguments = call.arguments()
        if not call.corrupted and not skip_json and not is_json(arguments):
            duplicated = _duplicated_tail(arguments, call.boundaries)
            if duplicated is not None:
                call.corrupted = True
                found.append(Violation(
                    rules.DUPLICATED_ARGUMENTS, duplicated,
                    f"arguments were complete, then {clip(arguments[_boundary_before(call.boundaries, duplicated):], 40)} "
                    "re-sent text already sent",
                    call.index,
                ))
            else:
                found.append(Violation(
                    rules.INVALID_JSON_ARGUMENTS, call.last_fragment.step or call.first.step,
                    f"assembled arguments are not valid JSON ({json_error(arguments)}): {clip(arguments, 60)}",
                    call.index,
                ))
        if (
            call.argument_chunks == 1
            and call.length >= ATOMIC_MIN_CHARS
            and call.silence_ms >= self.atomic_silence_ms
        ):
            found.append(Violation(
                rules.ATOMIC_TOOL_CALL, call.last_fragment.step,
                f"all {call.length} chars of arguments arrived in one chunk after {call.silence_ms / 1000:.2f} s "
                "of silence: the call was not streamed",
                call.index,
            ))
        return found

    def usable(self, call: Call) -> bool:
        """The stream meant a complete call: named, with an id to answer it by, not knowingly spoiled,
        arguments that parse."""
        return call.name is not None and call.id is not None and not call.corrupted and is_json(call.arguments())

    # ------------------------------------------------------------ results

    def terminal(self, partial: bool) -> Parse:
        return Parse(
            "".join(self._content),
            "".join(self._reasoning),
            tuple(ParsedCall(c.name, c.arguments(), c.id) for c in self.calls),
            partial=partial,
        )

    def report(self, call: Call, final: bool) -> CallReport:
        arguments = call.arguments()
        clients_right = all(v.matches for v in call.clients)
        report = CallReport(
            index=call.index,
            id=call.id or "",
            name=call.name or "",
            streamed_arguments=arguments,
            final_arguments=arguments,
            reconstructs=final and self.usable(call) and clients_right,
            first_delta=call.first,
            name_complete=call.named,
        )
        if call.clients:
            report.clients = [v.to_json() for v in call.clients]
        return report

    def first_tool_chunk(self) -> StepTime:
        return self.calls[0].first if self.calls else StepTime()

    def atomic_time(self, truncated: bool = False) -> StepTime:
        """When an atomic server would have shown the first call: when its last fragment arrived.

        Unknown (None) when the stream was cut while that call was still the last one:
        its last fragment may never have come.
        """
        if not self.calls or (truncated and len(self.calls) == 1):
            return StepTime()
        call = self.calls[0]
        return call.last_fragment if call.length else call.first

    def baseline_chunks(self) -> list[WireChunk]:
        """What an atomic server would have sent: the same text, each call whole when its last fragment came."""
        chunks = [c for c in self.chunks if c.kind in (ROLE, CONTENT, REASONING, FINISH)]
        for call in self.calls:
            at = call.last_fragment if call.length else call.first
            chunks.append(WireChunk(at.step or 0, at.ms, HEADER, call.arguments(), call.index, call.id, call.name))
        chunks.sort(key=lambda c: (c.step, c.kind == FINISH))
        return chunks

    def build(
        self,
        *,
        name: str,
        source: SourceInfo,
        identity: StreamIdentity,
        violations: list[Violation],
        final: bool,
        truncated: bool,
        cause: str,
    ) -> Analysis:
        content = "".join(self._content)
        return Analysis(
            name=name,
            source=source,
            unit="chunk",
            # a stream recorded without times (a raw SSE dump) is untimed: steps, not seconds
            timed=not self.steps or any(step.ms is not None for step in self.steps),
            steps=self.steps,
            parse_events=self.parse_events,
            terminal_events_from=len(self.parse_events),
            terminal=self.terminal(partial=not final),
            chunks=self.chunks,
            baseline_chunks=self.baseline_chunks(),
            calls=[self.report(c, final) for c in self.calls],
            violations=violations,
            finish_reason=self.finish_reason,
            finish_cause=cause,
            ttfd_streaming=self.first_tool_chunk(),
            ttfd_atomic=self.atomic_time(truncated),
            identity=identity,
            content_streamed=content,
            truncated=truncated,
        )

    def provisional(self, name: str, source: SourceInfo, identity: StreamIdentity) -> Analysis:
        """A growing Analysis sharing this builder's lists; :meth:`refresh` updates its values."""
        return Analysis(
            name=name,
            source=source,
            unit="chunk",
            timed=True,
            steps=self.steps,
            parse_events=self.parse_events,
            terminal_events_from=len(self.parse_events),
            terminal=Parse(),
            chunks=self.chunks,
            baseline_chunks=[],
            calls=[],
            violations=self.violations,
            finish_reason=None,
            finish_cause=RUNNING,
            ttfd_streaming=StepTime(),
            ttfd_atomic=StepTime(),
            identity=identity,
            content_streamed="",
        )

    def refresh(self, analysis: Analysis) -> None:
        analysis.terminal_events_from = len(self.parse_events)
        analysis.terminal = self.terminal(partial=True)
        analysis.content_streamed = analysis.terminal.content
        analysis.ttfd_streaming = self.first_tool_chunk()
        analysis.finish_reason = self.finish_reason


# ---------------------------------------------------------------- helpers


def is_json(text: str) -> bool:
    try:
        check(text)
    except ValueError:
        return False
    return True


def json_error(text: str) -> str:
    if not text.strip():
        return "empty"
    try:
        check(text)
    except ValueError as exc:
        return str(exc)
    return "ok"


def _duplicated_tail(arguments: str, boundaries: list[tuple[int, int]]) -> int | None:
    """Step of the first fragment sent after the arguments were already complete JSON, if what it
    (and what followed) sent repeats text already there; else None."""
    for length, _ in boundaries[:-1]:
        head = arguments[:length]
        if not head.rstrip().endswith(("}", "]")) or not is_json(head):
            continue
        rest = arguments[length:].strip()
        if rest and (rest in head or head.strip().startswith(rest[: max(2, len(rest) // 2)])):
            return next(step for end, step in boundaries if end > length)
        return None
    return None


def _boundary_before(boundaries: list[tuple[int, int]], step: int) -> int:
    before = 0
    for length, at in boundaries:
        if at >= step:
            return before
        before = length
    return before


def clip(text: str, limit: int = 80) -> str:
    text = text.replace("\n", "\\n")
    return repr(text) if len(text) <= limit else repr(text[: limit - 1] + "…")
