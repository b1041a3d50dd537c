"""What a client assembles from a captured stream, and every way the stream breaks the contract.

Input: the received lines, each stamped with its receive time (live from
:mod:`engine.capture.client`, or read back from a capture trace). Output: an
:class:`~engine.analysis.Analysis` like any other source's, so the report and
the GUI panes need nothing capture-specific: one step per received ``data:``
line (unit ``chunk``), ``chunks`` = what was received, ``parse_events`` = what
a client assembles (content appended, call opened/named, arguments appended:
per ``index``, concatenating ``function.arguments``), ``terminal`` = the
assembled final message.

The streaming contract, each rule with its stable id (tests pin every one):

- ``invalid-chunk-json``: a ``data:`` line that is not a JSON object (capture continues);
- ``id-repeated`` / ``id-changed``: a later fragment of an index carries the id again / another id
  (clients that concatenate string fields, like openai-python's stream helper, get ``call_xcall_x``);
- ``name-repeated``: a later fragment carries ``function.name`` again (``name += ...`` gives garbage);
- ``index-missing``: a tool-call delta without ``index``;
- ``index-reused``: a second call (new id or name after complete arguments) sent on an index in use;
- ``invalid-json-arguments``: the concatenated arguments do not parse;
- ``duplicated-arguments``: a fragment re-sends arguments already sent (a final flush repeating them);
- ``marker-in-content``: tool-call markers or special tokens leaked into ``delta.content``;
- ``atomic-tool-call``: a call whose arguments came in one chunk after a long silence;
- ``finish-reason-mismatch``: ``tool_calls`` without any tool-call delta, or tool calls ending in ``stop``;
- ``stream-truncated``: no finish chunk or no ``[DONE]`` (connection lost, stalled, cancelled);
- ``stream-error``: the server sent an error object inside the stream.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from callscope.engine.analysis.analyzer import RUNNING, Analysis, CallReport, SourceInfo, StepRecord, StepTime
from callscope.engine.core import rules
from callscope.engine.core.json_text import check, dumps, loads
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
class _Call:
    """One tool call as the client assembles it, plus what the checker needs to judge it."""

    slot: int  # position in the assembled message (order of first appearance)
    index: int  # the wire index (the slot when the server sent none)
    id: str | None = None
    name: str | None = None
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

    def arguments(self) -> str:
        return joined(self.pieces)

    def append(self, text: str, step: int) -> None:
        self.pieces.append(text)
        self.length += len(text)
        self.boundaries.append((self.length, step))


class CaptureAnalyzer:
    """Feed received lines with :meth:`feed_line`; :meth:`analysis` gives the Analysis so far or final.

    Incremental so the GUI can show a live capture: it is a
    :class:`~engine.analysis.live.LiveAnalysis` (:meth:`feed`, :meth:`provisional`,
    :meth:`refresh`, :meth:`finish`), driven like a live model run. The command
    line and trace replay feed all lines then finish (:func:`analyze_capture_lines`).
    """

    def __init__(
        self,
        name: str = "capture",
        path: str | None = None,
        *,
        url: str | None = None,
        atomic_silence_ms: float = DEFAULT_ATOMIC_SILENCE_MS,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.path = path
        self.url = url
        self.atomic_silence_ms = atomic_silence_ms
        self.extra = dict(extra or {})
        self.steps: list[StepRecord] = []
        self.parse_events: list[tuple[int, ParseEvent]] = []
        self.chunks: list[WireChunk] = []
        self.violations: list[Violation] = []
        self.calls: list[_Call] = []
        self._by_index: dict[int, _Call] = {}
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._content_tail = ""
        self._markers_seen: set[str] = set()
        self._identity: StreamIdentity | None = None
        self._prev_ms = 0.0
        self.finish_reason: str | None = None
        self.finish_step: StepTime = StepTime()
        self.done_step: int | None = None
        self._index_missing_reported = False
        self._finished: Analysis | None = None

    # ------------------------------------------------------------ feeding

    def feed_lines(self, lines: Iterable[tuple[float | None, str]]) -> None:
        for ms, line in lines:
            self.feed_line(ms, line)

    def feed(self, item: tuple[float | None, str]) -> None:
        """One received line as the client stamps it, ``(ms, line)``: the live feed."""
        self.feed_line(item[0], item[1])

    def feed_line(self, ms: float | None, line: str) -> None:
        """One received line. Only ``data:`` lines are steps; comments and ``event:`` lines are skipped."""
        if not line.startswith("data:"):
            if line.startswith("error:"):  # llama.cpp-style error event line
                self._violate(rules.STREAM_ERROR, len(self.steps) or None, f"server sent an error line: {_clip(line[6:].strip())}")
            return
        if self._finished is not None:
            raise RuntimeError("capture analysis already finished")
        step = len(self.steps) + 1
        self.steps.append(StepRecord(step, ms, (line + "\n").encode("utf-8")))
        silence = (ms - self._prev_ms) if ms is not None else 0.0
        if ms is not None:
            self._prev_ms = ms
        payload = line[5:]
        payload = payload.removeprefix(" ")
        if payload.strip() == "[DONE]":
            if self.done_step is None:
                self.done_step = step
            return
        try:
            obj = loads(payload)
        except ValueError as exc:
            self._violate(rules.INVALID_CHUNK_JSON, step, f"not JSON ({exc}): {_clip(payload)}")
            return
        if not isinstance(obj, dict):
            self._violate(rules.INVALID_CHUNK_JSON, step, f"expected a JSON object, got {type(obj).__name__}: {_clip(payload)}")
            return
        self._chunk(step, ms, silence, obj)

    def _chunk(self, step: int, ms: float | None, silence: float, obj: dict[str, Any]) -> None:
        if self._identity is None and isinstance(obj.get("id"), str):
            created = obj.get("created")
            model = obj.get("model")
            self._identity = StreamIdentity(
                obj["id"], created if isinstance(created, int) else 0, model if isinstance(model, str) else ""
            )
        if obj.get("error") is not None and not obj.get("choices"):
            error = obj["error"]
            message = error.get("message", error) if isinstance(error, dict) else error
            self._violate(rules.STREAM_ERROR, step, f"server sent an error in the stream: {_clip(str(message))}")
            return
        choices = obj.get("choices")
        if not isinstance(choices, list) or not choices:
            return  # a usage-only chunk (stream_options.include_usage) or similar: nothing to assemble
        choice = next((c for c in choices if isinstance(c, dict) and c.get("index", 0) == 0), None)
        if choice is None:
            return
        delta = choice.get("delta")
        if isinstance(delta, dict):
            self._delta(step, ms, silence, delta)
        reason = choice.get("finish_reason")
        if isinstance(reason, str) and reason:
            self.finish_reason = reason
            self.finish_step = StepTime(step, ms)
            self.chunks.append(WireChunk(step, ms, FINISH, finish_reason=reason))

    def _delta(self, step: int, ms: float | None, silence: float, delta: dict[str, Any]) -> None:
        if delta.get("role"):
            self.chunks.append(WireChunk(step, ms, ROLE))
        reasoning = delta.get("reasoning_content")
        if reasoning is None:
            reasoning = delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            self._reasoning.append(reasoning)
            self.parse_events.append((step, ReasoningAppended(reasoning)))
            self.chunks.append(WireChunk(step, ms, REASONING, reasoning))
        content = delta.get("content")
        if isinstance(content, str) and content:
            self._content.append(content)
            self.parse_events.append((step, ContentAppended(content)))
            self.chunks.append(WireChunk(step, ms, CONTENT, content))
            self._check_markers(step, content)
        tool_calls = delta.get("tool_calls")
        if isinstance(tool_calls, list):
            for entry in tool_calls:
                if isinstance(entry, dict):
                    self._tool_delta(step, ms, silence, entry)

    # ------------------------------------------------------------ tool calls

    def _tool_delta(self, step: int, ms: float | None, silence: float, entry: dict[str, Any]) -> None:
        function = entry.get("function") if isinstance(entry.get("function"), dict) else {}
        call_id = entry.get("id") if isinstance(entry.get("id"), str) and entry.get("id") else None
        name = function.get("name") if isinstance(function.get("name"), str) and function.get("name") else None
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            self._violate(
                rules.INVALID_JSON_ARGUMENTS, step,
                f"function.arguments sent as {type(arguments).__name__}, not a string; clients concatenate strings",
                entry.get("index") if isinstance(entry.get("index"), int) else None,
            )
            arguments = dumps(arguments, ensure_ascii=False)
        arguments = arguments or ""
        index = entry.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            call = self._call_without_index(step, call_id)
        else:
            call = self._by_index.get(index)
        if call is None:
            self._open(step, ms, silence, index if isinstance(index, int) else len(self.calls), call_id, name, arguments)
            return
        if self._reused(step, call, call_id, name, arguments):
            self._append(step, ms, silence, call, arguments, call_id=call_id, name=name)
            return
        if call_id is not None:
            if call.id is None:
                call.id = call_id
            elif call_id == call.id:
                self._once(call, rules.ID_REPEATED, step,
                           f"id {_clip(call_id, 40)} sent again on a later fragment; clients that concatenate "
                           "string fields (openai-python's stream helper) get it twice")
            elif call_id not in call.ids_reported:
                call.ids_reported.add(call_id)
                self._violate(rules.ID_CHANGED, step, f"id changed from {call.id!r} to {call_id!r} mid-call", call.index)
        if name is not None:
            if call.name is None:
                call.name = name
                call.named = StepTime(step, ms)
                self.parse_events.append((step, CallNamed(call.slot, name)))
            elif name == call.name:
                self._once(call, rules.NAME_REPEATED, step,
                           f"function.name {name!r} sent again on a later fragment; a client doing name += ... "
                           f"gets {(name * 2)!r}")
            else:
                self._once(call, rules.NAME_REPEATED, step,
                           f"function.name sent again with different text ({call.name!r} then {name!r}); "
                           f"clients that set the name and clients that concatenate it now disagree")
        self._append(step, ms, silence, call, arguments, call_id=call_id, name=name)

    def _call_without_index(self, step: int, call_id: str | None) -> _Call | None:
        """Which call an index-less delta belongs to, the way lenient clients guess: by id, else the last one."""
        if not self._index_missing_reported:
            self._index_missing_reported = True
            self._violate(rules.INDEX_MISSING, step, "tool-call delta without an index; clients cannot tell which call it extends")
        if call_id is not None:
            for call in self.calls:
                if call.id == call_id:
                    return call
            return None  # an unseen id: a new call
        return self.calls[-1] if self.calls else None

    def _open(self, step: int, ms: float | None, silence: float, index: int, call_id: str | None,
              name: str | None, arguments: str) -> None:
        call = _Call(slot=len(self.calls), index=index, id=call_id, name=name, first=StepTime(step, ms))
        self.calls.append(call)
        self._by_index.setdefault(index, call)
        self.parse_events.append((step, CallOpened(call.slot, call_id)))
        if name is not None:
            call.named = StepTime(step, ms)
            self.parse_events.append((step, CallNamed(call.slot, name)))
        self.chunks.append(WireChunk(step, ms, HEADER, arguments, index, call_id, name))
        call.silence_ms = silence
        if arguments:
            self._add_arguments(step, ms, silence, call, arguments)

    def _reused(self, step: int, call: _Call, call_id: str | None, name: str | None, arguments: str) -> bool:
        """A second call on an index whose arguments are already complete: another id, another name,
        or the same name opening new, different arguments. (The same header repeated with no new
        arguments is ``id-repeated``/``name-repeated``; the same arguments again are ``duplicated-arguments``.)"""
        if not call.length or (call_id is None and name is None):
            return False
        other_id = call_id is not None and call.id is not None and call_id != call.id
        other_name = name is not None and call.name is not None and name != call.name
        opens = name is not None and arguments.lstrip()[:1] in ("{", "[")
        if not (other_id or other_name or opens):
            return False  # the usual case, kept cheap: no join, no JSON parse per fragment
        sent = call.arguments()
        if not (other_id or other_name) and (sent.startswith(arguments) or arguments.startswith(sent)):
            return False  # the same arguments again: duplicated-arguments, not a second call
        if not _is_json(sent):
            return False
        call.corrupted = True
        what = f"id {call_id!r}" if call_id is not None and call_id != call.id else f"name {name!r}"
        self._violate(
            rules.INDEX_REUSED, step,
            f"a second call ({what}) was sent on index {call.index} after call {call.id or call.name!r} was complete; "
            "clients merge both into one",
            call.index,
        )
        return True

    def _append(self, step: int, ms: float | None, silence: float, call: _Call, arguments: str,
                call_id: str | None, name: str | None) -> None:
        self.chunks.append(WireChunk(step, ms, ARGUMENTS, arguments, call.index, call_id, name))
        call.silence_ms = max(call.silence_ms, silence)
        if arguments:
            self._add_arguments(step, ms, silence, call, arguments)

    def _add_arguments(self, step: int, ms: float | None, silence: float, call: _Call, text: str) -> None:
        if call.length >= 2 and len(text) >= call.length and text.startswith(call.arguments()):
            call.corrupted = True
            self._violate(
                rules.DUPLICATED_ARGUMENTS, step,
                f"fragment re-sends all {call.length} chars of arguments already sent ({_clip(call.arguments(), 40)}); "
                "the concatenation repeats them",
                call.index,
            )
        call.append(text, step)
        call.argument_chunks += 1
        call.silence_ms = max(call.silence_ms, silence)
        call.last_fragment = StepTime(step, ms)
        self.parse_events.append((step, ArgumentsAppended(call.slot, text)))

    # ------------------------------------------------------------ content

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
                self._violate(rules.MARKER_IN_CONTENT, step, f"{marker!r} in delta.content: {_clip(window, 60)}")
        self._content_tail = window[-(_MARKER_WINDOW - 1):]

    # ------------------------------------------------------------ verdicts

    def _violate(self, rule: str, step: int | None, detail: str, call_index: int | None = None) -> None:
        self.violations.append(Violation(rule, step, detail, call_index))

    def _once(self, call: _Call, rule: str, step: int, detail: str) -> None:
        if rule not in call.reported:
            call.reported.add(rule)
            self._violate(rule, step, detail, call.index)

    def _end_violations(self, error: str | None, cancelled: bool) -> list[Violation]:
        found: list[Violation] = []
        last = self.steps[-1].step if self.steps else None
        truncated = self.done_step is None or self.finish_reason is None
        for call in self.calls:
            found.extend(self._call_verdicts(call, skip_json=truncated and call is self.calls[-1]))
        if self.finish_reason == "tool_calls" and not self.calls:
            found.append(Violation(rules.FINISH_REASON_MISMATCH, self.finish_step.step,
                                   "finish_reason is tool_calls but no tool-call delta was sent"))
        elif self.calls and self.finish_reason == "stop":
            found.append(Violation(rules.FINISH_REASON_MISMATCH, self.finish_step.step,
                                   f"{len(self.calls)} tool call(s) were sent but finish_reason is stop; "
                                   "clients that dispatch on finish_reason ignore them"))
        if truncated:
            missing = [what for what, ok in (("finish_reason", self.finish_reason is not None),
                                             ("[DONE]", self.done_step is not None)) if not ok]
            if cancelled:
                why = "capture stopped by the user"
            elif error:
                why = error
            elif not self.steps:
                why = "the server ended the response without sending a single data line"
            else:
                why = "the server ended the response there"
            found.append(Violation(rules.STREAM_TRUNCATED, last, f"no {' and no '.join(missing)}: {why}"))
        return found

    def _without_cut_line(self, violations: list[Violation]) -> list[Violation]:
        """A stream that ended early may end in a line cut off mid-way (the client keeps it, as received):
        its not being JSON is the truncation's doing, reported by ``stream-truncated``, not the server's."""
        if not violations or not self.steps:
            return violations
        last = violations[-1]
        if last.rule == rules.INVALID_CHUNK_JSON and last.step == self.steps[-1].step:
            return violations[:-1]
        return violations

    def _call_verdicts(self, call: _Call, skip_json: bool) -> list[Violation]:
        found: list[Violation] = []
        arguments = call.arguments()
        if not call.corrupted and not skip_json and not _is_json(arguments):
            duplicated = _duplicated_tail(arguments, call.boundaries)
            if duplicated is not None:
                call.corrupted = True
                found.append(Violation(
                    rules.DUPLICATED_ARGUMENTS, duplicated,
                    f"arguments were complete, then {_clip(arguments[_boundary_before(call.boundaries, duplicated):], 40)} "
                    "re-sent text already sent",
                    call.index,
                ))
            else:
                found.append(Violation(
                    rules.INVALID_JSON_ARGUMENTS, call.last_fragment.step or call.first.step,
                    f"assembled arguments are not valid JSON ({_json_error(arguments)}): {_clip(arguments, 60)}",
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

    # ------------------------------------------------------------ results

    def analysis(
        self,
        *,
        final: bool = True,
        error: str | None = None,
        cancelled: bool = False,
        cause: str | None = None,
    ) -> Analysis:
        """The Analysis so far (``final=False``: no end-of-stream verdicts) or the final one.

        ``error`` is why the capture ended early (it becomes part of the truncation
        verdict); ``cause`` overrides the finish cause (``stop|length|cancelled|error``).
        """
        if self._finished is not None:
            return self._finished
        violations = list(self.violations)
        if final:
            if error is not None or cancelled:
                violations = self._without_cut_line(violations)
            violations.extend(self._end_violations(error, cancelled))
            violations.sort(key=lambda v: (v.step if v.step is not None else 1 << 60))
        truncated = final and (error is not None or cancelled or self.done_step is None)
        if cause is None:
            if cancelled:
                cause = "cancelled"
            elif error is not None:
                cause = "error"
            else:
                cause = "length" if self.finish_reason == "length" else "stop"
        extra = dict(self.extra)
        if self.url is not None:
            extra.setdefault("url", self.url)
        if error is not None:
            extra["error"] = error
        content = "".join(self._content)
        terminal = Parse(
            content,
            "".join(self._reasoning),
            tuple(ParsedCall(c.name, c.arguments(), c.id) for c in self.calls),
            partial=not final,
        )
        result = Analysis(
            name=self.name,
            source=SourceInfo("capture", self.path, None, CAPTURE_POLICY, extra),
            unit="chunk",
            timed=True,
            steps=self.steps,
            parse_events=self.parse_events,
            terminal_events_from=len(self.parse_events),
            terminal=terminal,
            chunks=self.chunks,
            baseline_chunks=self._baseline_chunks(),
            calls=[self._report(c, final) for c in self.calls],
            violations=violations,
            finish_reason=self.finish_reason,
            finish_cause=cause,
            ttfd_streaming=self._first_tool_chunk(),
            ttfd_atomic=self._atomic_time(truncated),
            identity=self._identity or StreamIdentity.for_run(self.name),
            content_streamed=content,
            truncated=truncated,
        )
        if final:
            self._finished = result
        return result

    def finish(self, cause: str | None = None, *, error: str | None = None) -> Analysis:
        """End the capture, return the final Analysis: ``cause`` ``cancelled`` (the user stopped it),
        ``error`` (it broke off; ``error`` says why), or None (whatever the stream's finish_reason says)."""
        return self.analysis(final=True, error=error, cancelled=cause == "cancelled", cause=cause)

    # ------------------------------------------------------------ live view

    def provisional(self) -> Analysis:
        """A growing Analysis for a live capture: it shares this analyzer's lists
        (steps, events, chunks, violations), so panes built on it see new lines after :meth:`refresh`."""
        return Analysis(
            name=self.name,
            source=SourceInfo("capture", self.path, None, CAPTURE_POLICY, {**self.extra, "url": self.url}),
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
            identity=self._identity or StreamIdentity.for_run(self.name),
            content_streamed="",
        )

    def refresh(self, analysis: Analysis) -> None:
        """Update the values (not the shared lists) of a :meth:`provisional` analysis."""
        analysis.terminal_events_from = len(self.parse_events)
        analysis.terminal = Parse(
            "".join(self._content),
            "".join(self._reasoning),
            tuple(ParsedCall(c.name, c.arguments(), c.id) for c in self.calls),
            partial=True,
        )
        analysis.content_streamed = analysis.terminal.content
        analysis.ttfd_streaming = self._first_tool_chunk()
        analysis.finish_reason = self.finish_reason
        if self._identity is not None:
            analysis.identity = self._identity

    def _report(self, call: _Call, final: bool) -> CallReport:
        arguments = call.arguments()
        usable = (
            final
            and call.name is not None
            and not call.corrupted
            and _is_json(arguments)
        )
        return CallReport(
            index=call.index,
            id=call.id or "",
            name=call.name or "",
            streamed_arguments=arguments,
            final_arguments=arguments,
            reconstructs=usable,
            first_delta=call.first,
            name_complete=call.named,
        )

    def _first_tool_chunk(self) -> StepTime:
        return self.calls[0].first if self.calls else StepTime()

    def _atomic_time(self, truncated: bool = False) -> StepTime:
        """When an atomic server would have shown the first call: when its last fragment arrived.

        Unknown (None) when the stream was cut while that call was still the last one:
        its last fragment may never have come.
        """
        if not self.calls or (truncated and len(self.calls) == 1):
            return StepTime()
        call = self.calls[0]
        return call.last_fragment if call.length else call.first

    def _baseline_chunks(self) -> list[WireChunk]:
        """What an atomic server would have sent: the same text, each call whole when its last fragment came."""
        chunks = [c for c in self.chunks if c.kind in (ROLE, CONTENT, REASONING, FINISH)]
        for call in self.calls:
            at = call.last_fragment if call.length else call.first
            chunks.append(WireChunk(at.step or 0, at.ms, HEADER, call.arguments(), call.index, call.id, call.name))
        chunks.sort(key=lambda c: (c.step, c.kind == FINISH))
        return chunks


# ---------------------------------------------------------------- helpers


def analyze_capture_lines(
    lines: Iterable[tuple[float | None, str]],
    name: str = "capture",
    path: str | None = None,
    *,
    url: str | None = None,
    error: str | None = None,
    cancelled: bool = False,
    cause: str | None = None,
    atomic_silence_ms: float = DEFAULT_ATOMIC_SILENCE_MS,
    extra: dict[str, Any] | None = None,
) -> Analysis:
    """The final Analysis of received ``(ms, line)`` pairs: what ``callscope capture`` reports, live or replayed.

    ``error``: why the capture ended early (connection lost, stalled...), from the
    live client or a trace's end record; ``cancelled``: the user stopped it.
    """
    analyzer = CaptureAnalyzer(name, path, url=url, atomic_silence_ms=atomic_silence_ms, extra=extra)
    analyzer.feed_lines(lines)
    return analyzer.analysis(final=True, error=error, cancelled=cancelled, cause=cause)


def _is_json(text: str) -> bool:
    try:
        check(text)
    except ValueError:
        return False
    return True


def _json_error(text: str) -> str:
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
        if not head.rstrip().endswith(("}", "]")) or not _is_json(head):
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


def _clip(text: str, limit: int = 80) -> str:
    text = text.replace("\n", "\\n")
    return repr(text) if len(text) <= limit else repr(text[: limit - 1] + "…")
