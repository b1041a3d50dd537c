"""A captured stream judged: received lines in, the same Analysis as any other source's out.

Input: the received lines, each stamped with its receive time (live from
:mod:`callscope.engine.capture.client`, read back from a capture trace, or recorded by
anything else that kept the lines). They become server-sent events
(:mod:`.sse`, the WHATWG rules); the events are read by the stream's protocol
(:mod:`.protocols`: Chat Completions, OpenAI Responses or Anthropic Messages,
named by the request or recognised from the first events; an unknown one is
reported as such); client profiles (:mod:`callscope.engine.streams.clients`: emulations of
the client libraries people use) read the same events as they arrive, and each call's
verdict says what each of them ended with.

Output: an :class:`~callscope.engine.analysis.analyzer.Analysis` like any other source's, so the
report and the GUI panes need nothing capture-specific: one step per event
with data (unit ``chunk``), ``chunks`` = what was received, ``parse_events`` =
what the stream meant (content appended, call opened/named, arguments
appended), ``terminal`` = the assembled final message. A call
``reconstructs`` only if the stream meant a complete call *and* every client
profile assembled exactly that call. A stream with ``n > 1`` choices gives
one Analysis per choice (:meth:`CaptureAnalyzer.analyses`). A profile that raises on
the library's own verdict on a well-formed stream (openai-python's ``LengthFinishReasonError``
on a turn cut by ``max_tokens``) is recorded, but raises no ``client-error``. Every rule has its
stable id in :mod:`callscope.engine.core.rules`; each protocol module lists its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from callscope.engine.analysis.analyzer import Analysis, SourceInfo, StepRecord
from callscope.engine.core import rules
from callscope.engine.core.json_text import loads
from callscope.engine.core.wire import StreamIdentity, Violation
from callscope.engine.streams.assembly import (
    CAPTURE_POLICY,
    CONTENT_MARKERS,
    DEFAULT_ATOMIC_SILENCE_MS,
    Call,
    ClientVerdict,
    StreamBuilder,
    clip,
)
from callscope.engine.streams.clients import (
    GENERATED_ID,
    AssembledCall,
    ClientRun,
    ProfileRuns,
    default_profiles,
    plain_fragment,
    start_runs,
)
from callscope.engine.streams.protocols import all_protocols, detect, get_protocol
from callscope.engine.streams.reader import ProtocolReader
from callscope.engine.streams.spec import NOT_JSON
from callscope.engine.streams.sse import EVENTS, EventReader, SseEvent, read_events

__all__ = [
    "CAPTURE_POLICY",
    "CONTENT_MARKERS",
    "DEFAULT_ATOMIC_SILENCE_MS",
    "CaptureAnalyzer",
    "analyze_capture_lines",
    "analyze_capture_streams",
    "stream_ended",
]

UNKNOWN = "unknown"
#: How many of the last events :func:`stream_ended` reads (keep-alives and usage chunks may follow the end).
_END_LOOK_BACK = 8


class CaptureAnalyzer:
    """Feed received lines with :meth:`feed_line`; :meth:`analysis` gives the Analysis so far or final.

    Incremental so the GUI can show a live capture: it is a
    :class:`~callscope.engine.analysis.live.LiveAnalysis` (:meth:`feed`, :meth:`provisional`,
    :meth:`refresh`, :meth:`finish`), driven like a live model run. The command
    line and trace replay feed all lines then finish (:func:`analyze_capture_lines`).

    ``protocol``: the request's (``chat``, ``responses``, ``anthropic``), or None to
    recognise it from the events. ``framing``: ``events`` (blank lines end events, as
    received) or ``lines`` (an old recording: one event per ``data:`` line).
    ``clients``: the client profiles to run (default: every default profile).
    ``expected_choices``: the request's ``n``. ``tools``: the names of the tools the request offered
    (a client that checks names, the AI SDK, marks a call to any other invalid); None when unknown.
    """

    def __init__(
        self,
        name: str = "capture",
        path: str | None = None,
        *,
        url: str | None = None,
        atomic_silence_ms: float = DEFAULT_ATOMIC_SILENCE_MS,
        extra: dict[str, Any] | None = None,
        protocol: str | None = None,
        framing: str = EVENTS,
        clients: tuple[str, ...] | None = None,
        expected_choices: int = 1,
        tools: frozenset[str] | None = None,
    ) -> None:
        if protocol is not None:
            get_protocol(protocol)  # a ValueError naming the known ones
        self.name = name
        self.path = path
        self.url = url
        self.atomic_silence_ms = atomic_silence_ms
        self.extra = dict(extra or {})
        self.hint = protocol
        self.clients = default_profiles() if clients is None else clients
        self.expected_choices = expected_choices
        self.tools = tools
        #: The selected profiles reading the stream as it arrives (made once its protocol is known).
        self.runs: ProfileRuns | None = None
        self._early: list[tuple[int, SseEvent]] = []  # events before the protocol was recognised
        self.steps: list[StepRecord] = []
        self.events: list[tuple[int, SseEvent]] = []
        self._sse = EventReader(framing)
        #: Choice 0's message, made now so a live view (:meth:`provisional`) shares its lists from the start.
        self._live = StreamBuilder(self.steps, atomic_silence_ms)
        self.reader: ProtocolReader | None = None
        self._prev_ms = 0.0
        self._finished: list[Analysis] | None = None

    # ------------------------------------------------------------ feeding

    def feed_lines(self, lines: Iterable[tuple[float | None, str]]) -> None:
        for ms, line in lines:
            self.feed_line(ms, line)

    def feed(self, item: tuple[float | None, str]) -> None:
        """One received line as the client stamps it, ``(ms, line)``: the live feed."""
        self.feed_line(item[0], item[1])

    def feed_line(self, ms: float | None, line: str) -> None:
        """One received line (blank lines end events; comments and other fields are the SSE layer's)."""
        if self._finished is not None:
            raise RuntimeError("capture analysis already finished")
        if line.startswith("error:"):  # llama.cpp-style error line (not an SSE field: it would be ignored)
            self._live.violate(rules.STREAM_ERROR, len(self.steps) or None,
                               f"server sent an error line: {clip(line[6:].strip())}")
            return
        event = self._sse.feed(ms, line)
        if event is not None:
            self._event(event)

    def _event(self, event: SseEvent) -> None:
        if not event.data:
            return  # an event with empty data is not a chunk
        step = len(self.steps) + 1
        raw = "\n".join(event.lines) + "\n"
        self.steps.append(StepRecord(step, event.ms, raw.encode("utf-8")))
        ms = event.ms
        silence = (ms - self._prev_ms) if ms is not None else 0.0
        if ms is not None:
            self._prev_ms = ms
        self.events.append((step, event))
        reader = self._reader_for(event)
        if reader is None:
            self._early.append((step, event))
            return
        reader.event(step, ms, silence, event)
        if event.terminated and self.runs:  # an event the stream left unterminated is dispatched by no client
            decoded = reader.decoded
            self.runs.feed(step, event, decoded, plain_fragment(decoded) if reader.protocol == "chat" else None)

    def _reader_for(self, event: SseEvent) -> ProtocolReader | None:
        if self.reader is None:
            protocol = detect(event, self.hint)
            if protocol is None:
                return None
            self.reader = get_protocol(protocol).reader(self.steps, self.atomic_silence_ms, self.expected_choices)
            self.reader._choices[0] = self._live
            self._start_clients(protocol)
        return self.reader

    def _start_clients(self, protocol: str) -> None:
        """The profiles start reading; the events that came before the protocol was known are theirs too."""
        self.runs = start_runs(protocol, self.clients, self.tools)
        for step, event in self._early:
            if event.terminated:
                self.runs.feed(step, event, _decoded(event), None)
        self._early = []

    @property
    def protocol(self) -> str:
        return self.reader.protocol if self.reader is not None else (self.hint or UNKNOWN)

    # ------------------------------------------------------------ results

    def analyses(
        self,
        *,
        error: str | None = None,
        cancelled: bool = False,
        cause: str | None = None,
    ) -> list[Analysis]:
        """The final Analysis of every choice, the primary one first; computed once."""
        if self._finished is not None:
            return self._finished
        last = self._sse.finish()
        if last is not None:
            self._event(last)
        reader = self.reader
        if reader is None:
            self._finished = [self._unknown(error, cancelled, cause)]
            return self._finished
        choices = reader.choices()
        verdicts = {choice: self._verdicts(reader, builder, choice, error, cancelled) for choice, builder in choices}
        runs = self._run_clients(reader)
        for run in runs:
            self._judge(reader, run, verdicts)
        primary = reader.primary
        results = []
        for choice, builder in sorted(choices, key=lambda item: item[1] is not primary):
            truncated, found = verdicts[choice][0], verdicts[choice][1:]
            if builder is primary and builder is not self._live:  # stream-level verdicts ride on the primary
                found = self._live.violations + found
            results.append(self._build(reader, builder, choice, found, truncated, runs, error, cancelled, cause))
        self._finished = results
        return results

    def analysis(
        self,
        *,
        final: bool = True,
        error: str | None = None,
        cancelled: bool = False,
        cause: str | None = None,
    ) -> Analysis:
        """The Analysis so far (``final=False``: no end-of-stream verdicts) or the final one (the primary choice).

        ``error`` is why the capture ended early (it becomes part of the truncation
        verdict); ``cause`` overrides the finish cause (``stop|length|cancelled|error``).
        """
        if final or self._finished is not None:
            return self.analyses(error=error, cancelled=cancelled, cause=cause)[0]
        builder = self.reader.primary if self.reader is not None else self._live
        return builder.build(name=self.name, source=self._source(None), identity=self._identity(),
                             violations=list(builder.violations), final=False, truncated=False,
                             cause=self._cause(builder, None, False, None))

    def finish(self, cause: str | None = None, *, error: str | None = None) -> Analysis:
        """End the capture, return the final Analysis: ``cause`` ``cancelled`` (the user stopped it),
        ``error`` (it broke off; ``error`` says why), or None (whatever the stream's end says)."""
        return self.analysis(final=True, error=error, cancelled=cause == "cancelled", cause=cause)

    # ------------------------------------------------------------ live view

    def provisional(self) -> Analysis:
        """A growing Analysis for a live capture: it shares choice 0's lists
        (steps, events, chunks, violations), so panes built on it see new lines after :meth:`refresh`."""
        return self._live.provisional(self.name, self._source(None), self._identity())

    def refresh(self, analysis: Analysis) -> None:
        """Update the values (not the shared lists) of a :meth:`provisional` analysis."""
        self._live.refresh(analysis)
        analysis.source.extra["protocol"] = self.protocol
        if self.reader is not None and self.reader.identity is not None:
            analysis.identity = self.reader.identity

    # ------------------------------------------------------------ verdicts

    def _verdicts(self, reader: ProtocolReader, builder: StreamBuilder, choice: int, error: str | None,
                  cancelled: bool) -> list[Any]:
        """``[truncated, violation...]`` of one choice: its own, each call's, the protocol's end, truncation."""
        truncated = reader.truncated(builder)
        found: list[Any] = list(builder.violations)
        if error is not None or cancelled:
            found = self._without_cut_line(found)
        for call in builder.calls:
            found.extend(builder.call_verdicts(call, skip_json=truncated and call is builder.calls[-1]))
        found.extend(reader.end(builder, choice, truncated))
        if truncated and not cancelled:  # stopped by the user or the client: cut, but not by the server
            missing = reader.missing_end()
            if error:
                why = error
            elif not self.steps:
                why = "the server ended the response without sending a single event"
            else:
                why = "the server ended the response there"
            what = " and no ".join(missing) if missing else "proper end for this choice"
            found.append(Violation(rules.STREAM_TRUNCATED, self.steps[-1].step if self.steps else None,
                                   f"no {what}: {why}"))
        return [truncated or error is not None or cancelled, *found]

    def _without_cut_line(self, violations: list[Violation]) -> list[Violation]:
        """A stream that ended early may end in an event cut off mid-way (kept as received): its not being
        JSON is the truncation's doing, reported by ``stream-truncated``, not the server's."""
        if not violations or not self.steps:
            return violations
        last = violations[-1]
        if last.rule == rules.INVALID_CHUNK_JSON and last.step == self.steps[-1].step:
            return violations[:-1]
        return violations

    def _run_clients(self, reader: ProtocolReader) -> list[ClientRun]:
        """What every selected client profile ended with (they read the events as they came)."""
        last = self._last_served()
        return self.runs.results(last) if self.runs is not None else []

    def _last_served(self) -> int | None:
        """The step of the last event a client read (a raise at the end of the stream is reported there)."""
        return next((step for step, event in reversed(self.events) if event.terminated), None)

    def _judge(self, reader: ProtocolReader, run: ClientRun, verdicts: dict[int, list[Any]]) -> None:
        """One profile's result against what the stream meant: a verdict per call, violations where they differ."""
        if run.unavailable is not None:
            return
        primary_choice = next(c for c, b in reader.choices() if b is reader.primary)
        if run.error is not None:
            for _, builder in reader.choices():
                for call in builder.calls:
                    call.clients.append(ClientVerdict(run.profile, error=run.error))
            errors = {v.step for v in verdicts[primary_choice][1:] + self._live.violations if v.rule == rules.STREAM_ERROR}
            cut_short = verdicts[primary_choice][0] and run.error_step == self._last_served()
            if run.error_step in errors or run.deliberate or cut_short:
                # the client raised on the server's own error event, gave its own verdict on a finish, or said at
                # the end that the stream was cut short (stream-truncated says so): that is how it should end
                return
            verdicts[primary_choice].append(Violation(
                rules.CLIENT_ERROR, run.error_step,
                f"{run.profile} raised {run.error}" + (f" reading {_chunk_name(reader)} {run.error_step}"
                                                       if run.error_step is not None else "")))
            return
        for choice, builder in reader.choices():
            got_calls = run.calls.get(choice, [])
            cut = verdicts[choice][0]  # the stream ended early: its last call was cut off mid-way
            for call in builder.calls:
                got = got_calls[call.slot] if call.slot < len(got_calls) else None
                verdict = _verdict(run.profile, call, got)
                call.clients.append(verdict)
                if not verdict.matches and not (cut and call is builder.calls[-1] and _same_header(call, got)):
                    # (what a client makes of the arguments of a call cut off mid-way is the cut's doing)
                    verdicts[choice].append(Violation(
                        rules.CLIENT_MISMATCH, call.last_fragment.step or call.first.step,
                        f"{run.profile} assembles {_shown(got)}; the stream meant {_shown_call(call)}", call.index))
            if len(got_calls) > len(builder.calls):
                verdicts[choice].append(Violation(
                    rules.CLIENT_MISMATCH, None,
                    f"{run.profile} assembles {len(got_calls)} calls; the stream meant {len(builder.calls)}"))
            content = run.content.get(choice, "") or ""
            if content != builder.content_text:
                verdicts[choice].append(Violation(
                    rules.CLIENT_MISMATCH, None,
                    f"{run.profile} assembles content {clip(content, 40)}; the stream meant "
                    f"{clip(builder.content_text, 40)}"))

    # ------------------------------------------------------------ building

    def _build(self, reader: ProtocolReader, builder: StreamBuilder, choice: int, found: list[Violation],
               truncated: bool, runs: list[ClientRun], error: str | None, cancelled: bool,
               cause: str | None) -> Analysis:
        # a stream cut short (by the server, a client or the user) explains a call that does not reconstruct
        ended = cancelled or any(v.rule in rules.STREAM_ENDERS or v.rule == rules.CLIENT_ERROR for v in found)
        for call in builder.calls:
            wrong = not builder.usable(call) or not all(v.matches for v in call.clients)
            if wrong and not ended and not any(v.call_index == call.index for v in found):
                # a safety net: every path that spoils a call raises its own rule; none may go unexplained
                found.append(Violation(rules.NOT_RECONSTRUCTED, call.first.step,
                                       f"call {call.slot} does not reconstruct", call.index))
        # by step; at one step the stream's end comes last (it is the last thing that happened there)
        found.sort(key=lambda v: (v.step if v.step is not None else 1 << 60, v.rule == rules.STREAM_TRUNCATED))
        name = self.name if builder is reader.primary else f"{self.name}#choice{choice}"
        source = self._source(error, choice=choice if builder is not reader.primary or choice else None, runs=runs)
        return builder.build(name=name, source=source, identity=self._identity(), violations=found, final=True,
                             truncated=truncated, cause=self._cause(builder, error, cancelled, cause))

    def _unknown(self, error: str | None, cancelled: bool, cause: str | None) -> Analysis:
        """No event looked like any protocol callscope reads: say so (not "truncated")."""
        found = list(self._live.violations)
        if self.steps:
            first = self.events[0][1]
            found.append(Violation(
                rules.PROTOCOL_UNKNOWN, 1,
                f"the stream is not {_labels()}: its first event is "
                f"{first.type!r} with data {clip(first.data, 60)}; callscope cannot judge it"))
        elif error is None and not cancelled:
            found.append(Violation(rules.STREAM_TRUNCATED, None,
                                   "the server ended the response without sending a single event"))
        elif not cancelled:  # stopped by the user or the client before anything came: nobody's rule
            found.append(Violation(rules.STREAM_TRUNCATED, None, f"no event arrived: {error}"))
        truncated = not self.steps or error is not None or cancelled
        return self._live.build(name=self.name, source=self._source(error), identity=self._identity(),
                                violations=found, final=True, truncated=truncated,
                                cause=self._cause(self._live, error, cancelled, cause))

    def _cause(self, builder: StreamBuilder, error: str | None, cancelled: bool, cause: str | None) -> str:
        if cause is not None:
            return cause
        if cancelled:
            return "cancelled"
        if error is not None:
            return "error"
        return self.reader.finish_cause(builder) if self.reader is not None else "stop"

    def _source(self, error: str | None, choice: int | None = None, runs: list[ClientRun] | None = None) -> SourceInfo:
        extra = dict(self.extra)
        if self.url is not None:
            extra.setdefault("url", self.url)
        extra["protocol"] = self.protocol
        if choice is not None:
            extra["choice"] = choice
        if runs is not None:
            extra["clients"] = [r.profile for r in runs if r.unavailable is None]
            missing = {r.profile: r.unavailable for r in runs if r.unavailable is not None}
            if missing:
                extra["clients_unavailable"] = missing
        if error is not None:
            extra["error"] = error
        return SourceInfo("capture", self.path, None, CAPTURE_POLICY, extra)

    def _identity(self) -> StreamIdentity:
        if self.reader is not None and self.reader.identity is not None:
            return self.reader.identity
        return StreamIdentity.for_run(self.name)


# ---------------------------------------------------------------- verdict helpers


def _same_arguments(meant: str, got: str | None, parsed: bool) -> bool:
    if got is None:
        return False
    if got == meant:
        return True
    if not parsed:
        return False
    try:
        return loads(got) == loads(meant)
    except ValueError:
        return False


def _verdict(profile: str, call: Call, got: AssembledCall | None) -> ClientVerdict:
    if got is None:
        return ClientVerdict(profile, error=None, matches=False)
    same_id = (got.id or "") == (call.id or "") or (got.id == GENERATED_ID and call.id is None)
    matches = (same_id and (got.name or "") == (call.name or "") and not got.not_string and not got.invalid
               and _same_arguments(call.arguments(), got.arguments, got.parsed))
    return ClientVerdict(profile, got.id, got.name, got.arguments, None, matches, invalid=got.invalid)


def _same_header(call: Call, got: AssembledCall | None) -> bool:
    """Whether a client has the call's id and name right (whatever it made of its arguments)."""
    return got is not None and ((got.id or "") == (call.id or "") or (got.id == GENERATED_ID and call.id is None)) \
        and (got.name or "") == (call.name or "")


def _decoded(event: SseEvent) -> object:
    """An event's data as a client decodes it (NOT_JSON when it is not JSON)."""
    if event.data.startswith("[DONE]"):
        return None
    try:
        return loads(event.data)
    except ValueError:
        return NOT_JSON


def _shown(got: AssembledCall | None) -> str:
    if got is None:
        return "no such call"
    flagged = " (flagged invalid)" if got.invalid else " (not a string)" if got.not_string else ""
    return (f"id {clip(got.id or '', 40)}, name {clip(got.name or '', 60)}, "
            f"arguments {clip(got.arguments or '', 40)}{flagged}")


def _shown_call(call: Call) -> str:
    return (f"id {clip(call.id or '', 40)}, name {clip(call.name or '', 60)}, "
            f"arguments {clip(call.arguments(), 40)}")


def _chunk_name(reader: ProtocolReader) -> str:
    return get_protocol(reader.protocol).unit


def _labels() -> str:
    """``Chat Completions, OpenAI Responses or Anthropic Messages``: every protocol callscope reads."""
    labels = [spec.label for spec in all_protocols()]
    return ", ".join(labels[:-1]) + " or " + labels[-1] if len(labels) > 1 else labels[0]


# ---------------------------------------------------------------- entry points


def analyze_capture_streams(
    lines: Iterable[tuple[float | None, str]],
    name: str = "capture",
    path: str | None = None,
    *,
    error: str | None = None,
    cancelled: bool = False,
    cause: str | None = None,
    **options: Any,
) -> list[Analysis]:
    """Every choice's final Analysis of received ``(ms, line)`` pairs (``options``: :class:`CaptureAnalyzer`'s)."""
    analyzer = CaptureAnalyzer(name, path, **options)
    analyzer.feed_lines(lines)
    return analyzer.analyses(error=error, cancelled=cancelled, cause=cause)


def analyze_capture_lines(
    lines: Iterable[tuple[float | None, str]],
    name: str = "capture",
    path: str | None = None,
    *,
    error: str | None = None,
    cancelled: bool = False,
    cause: str | None = None,
    **options: Any,
) -> Analysis:
    """The final Analysis of received ``(ms, line)`` pairs: what ``callscope capture`` reports, live or replayed.

    ``error``: why the capture ended early (connection lost, stalled...), from the
    live client or a trace's end record; ``cancelled``: the user stopped it.
    """
    return analyze_capture_streams(lines, name, path, error=error, cancelled=cancelled, cause=cause, **options)[0]


def stream_ended(lines: Iterable[tuple[float | None, str]], protocol: str | None = None,
                 framing: str = EVENTS) -> bool:
    """Whether recorded lines end the way their protocol ends a response (or are of a protocol nobody knows:
    then nobody can say it was cut). The capture client asks this when the server closes the connection."""
    events = [event for event in read_events(lines, framing) if event.data]
    found = next((p for p in (detect(event, protocol) for event in events) if p is not None), None)
    if found is None:
        return True
    reader = get_protocol(found).reader([])
    for step, event in enumerate(events[-_END_LOOK_BACK:], 1):  # every protocol's end is in its last events
        reader.event(step, event.ms, 0.0, event)
    return reader.finished_properly()
