"""What the client sees: two chat clients at the cursor, one fed the streaming policy's chunks, one the atomic baseline's.

Each panel is what a chat client would have on screen after receiving the
chunks that went out by the cursor's step: the content so far, and per tool
call its name and its arguments so far, assembled as a client assembles
``delta.tool_calls`` (by ``index``; the header's id and name, then the
argument fragments appended in order). The streaming panel fills in as the
deltas arrive; the atomic one stays empty, waiting, until the whole call
lands at the end. Both carry the elapsed time since the request, so the
picture reads as it happened.

Moving the cursor is cheap: each stream keeps per-kind prefix lengths over
its chunk list (a live run appends to it; :meth:`ClientView.sync` indexes the
new chunks), so a panel is a few bisections and string slices, never a
re-join of every fragment.

Arguments are shown as a client UI would show a call being written: the
top-level fields of the JSON object so far, string values decoded (``\\n`` as
a line break), the last one possibly unfinished (:func:`partial_fields`).
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field

from callscope.engine.analysis.analyzer import Analysis, headline_times
from callscope.engine.core.wire import ARGUMENTS, CONTENT, FINISH, HEADER, REASONING, WireChunk
from callscope.engine.inspector.timebase import Timebase
from callscope.engine.inspector.ttfd import describe_first, ttfd_label
from callscope.engine.recordings.quirks import Cell, predicted_cells

#: Braille spinner frames; the frame shown is a function of the elapsed time, so a paused cursor is a still
#: picture and every exported frame of an animation is reproducible.
SPINNER = "◐◓◑◒"
SPINNER_FRAME_MS = 150.0


def spinner_frame(elapsed_ms: float | None) -> str:
    """The spinner glyph at ``elapsed_ms`` since the request (the first frame when untimed)."""
    if elapsed_ms is None:
        return SPINNER[0]
    return SPINNER[int(max(0.0, elapsed_ms) // SPINNER_FRAME_MS) % len(SPINNER)]


def clock_text(ms: float | None, unit: str, step: int) -> str:
    """The big elapsed clock: ``4.1 s`` for a timed source, ``token 120`` otherwise."""
    if ms is None:
        return f"{unit} {step}"
    return f"{ms / 1000:.1f} s"


# ------------------------------------------------------------------ one stream, assembled


class _Appended:
    """One growing text made of fragments, answerable at any chunk count by a bisection."""

    __slots__ = ("numbers", "ends", "parts", "_joined", "_joined_parts")

    def __init__(self) -> None:
        self.numbers: list[int] = []  # chunk number of each fragment
        self.ends: list[int] = []  # text length after each fragment
        self.parts: list[str] = []
        self._joined = ""
        self._joined_parts = 0

    def add(self, number: int, text: str) -> None:
        if not text:
            return
        self.numbers.append(number)
        self.ends.append((self.ends[-1] if self.ends else 0) + len(text))
        self.parts.append(text)

    def until(self, count: int) -> str:
        """The text of the fragments among the first ``count`` chunks."""
        k = bisect.bisect_left(self.numbers, count)
        if k == 0:
            return ""
        if self._joined_parts < len(self.parts):  # join once per growth, slice per cursor move
            self._joined = "".join(self.parts)
            self._joined_parts = len(self.parts)
        return self._joined[: self.ends[k - 1]]


@dataclass(slots=True)
class _CallTrack:
    header_number: int
    call_id: str
    name: str
    arguments: _Appended = field(default_factory=_Appended)


class ClientStream:
    """One chunk list (it may grow) assembled as a chat client would, answerable at any chunk count."""

    def __init__(self, chunks: list[WireChunk]) -> None:
        self.chunks = chunks
        self.steps: list[int] = []
        self.content = _Appended()
        self.reasoning = _Appended()
        self.calls: dict[int, _CallTrack] = {}
        self.first_tool_number: int | None = None
        self.first_number: int | None = None  # first chunk carrying anything a user sees
        self.finish_number: int | None = None
        self.finish_reason: str | None = None
        self.sync()

    def sync(self) -> int:
        """Index chunks appended since the last call; returns how many."""
        start = len(self.steps)
        for number in range(start, len(self.chunks)):
            self._take(number, self.chunks[number])
        return len(self.chunks) - start

    def _take(self, number: int, chunk: WireChunk) -> None:
        self.steps.append(chunk.step)
        kind = chunk.kind
        if kind in (CONTENT, REASONING, HEADER, ARGUMENTS) and self.first_number is None:
            self.first_number = number
        if kind == CONTENT:
            self.content.add(number, chunk.text)
        elif kind == REASONING:
            self.reasoning.add(number, chunk.text)
        elif kind == HEADER and chunk.index is not None:
            if self.first_tool_number is None:
                self.first_tool_number = number
            track = self.calls.setdefault(chunk.index, _CallTrack(number, chunk.call_id or "", chunk.name or ""))
            track.arguments.add(number, chunk.text)
        elif kind == ARGUMENTS and chunk.index is not None:
            track = self.calls.get(chunk.index)
            if track is None:  # fragments before a header: a client would file them under the index anyway
                track = self.calls[chunk.index] = _CallTrack(number, "", "")
            track.arguments.add(number, chunk.text)
        elif kind == FINISH:
            self.finish_number, self.finish_reason = number, chunk.finish_reason

    def count_until(self, step: int) -> int:
        return bisect.bisect_right(self.steps, step)

    def calls_until(self, count: int) -> list[ClientCall]:
        return [
            ClientCall(index, track.call_id, track.name, track.arguments.until(count))
            for index, track in sorted(self.calls.items())
            if track.header_number < count
        ]


# ------------------------------------------------------------------ what a panel shows


@dataclass(frozen=True, slots=True)
class ClientCall:
    """A tool call as the client has it so far."""

    index: int
    id: str
    name: str
    arguments: str

    def fields(self) -> list[ArgumentField]:
        return partial_fields(self.arguments)


@dataclass(frozen=True, slots=True)
class ArgumentField:
    """One top-level argument as a client shows it: its key, its value (a string decoded), finished or not."""

    key: str
    value: str
    is_string: bool
    complete: bool


WAITING = "waiting"
RECEIVING = "receiving"
DONE = "done"


@dataclass(frozen=True, slots=True)
class ClientPanel:
    """One chat client at the cursor."""

    title: str  # "Streaming" (the incremental policy; another names itself) / "Atomic"
    policy: str
    clock: str  # the elapsed time since the request ("4.1 s"), or the step when untimed
    elapsed_ms: float | None
    content: str
    reasoning: str
    calls: tuple[ClientCall, ...]
    chunks: int  # chunks received so far (the role chunk included)
    first_ms: float | None  # when the first thing a user sees arrived, if it has
    first_step: int | None
    finish_reason: str | None  # once the finish chunk has arrived
    state: str  # WAITING | RECEIVING | DONE
    spinner: str  # the spinner glyph while waiting ("" otherwise)
    status: str  # one line under the clock

    @property
    def waiting(self) -> bool:
        return self.state == WAITING

    @property
    def argument_chars(self) -> int:
        return sum(len(c.arguments) for c in self.calls)


@dataclass(frozen=True, slots=True)
class ClientScene:
    """Both panels at one cursor position, and the headline under which they stand."""

    streaming: ClientPanel
    atomic: ClientPanel
    headline: str
    live: bool
    #: What each client library ends with, side by side (a captured stream, once it ended): ``(profile, cell)``.
    clients: tuple[tuple[str, Cell], ...] = ()


class ClientView:
    """The client view of one analysis: the policy's chunks on the left, the atomic baseline's on the right."""

    def __init__(self, analysis: Analysis, timebase: Timebase) -> None:
        self.analysis = analysis
        self.timebase = timebase
        self.streaming = ClientStream(analysis.chunks)
        self.atomic = ClientStream(analysis.baseline_chunks)

    def sync(self) -> None:
        """A live run grew: index the chunks both sides emitted since."""
        # a live analysis may hand over new chunk lists (provisional analyses): follow them
        if self.streaming.chunks is not self.analysis.chunks:
            self.streaming = ClientStream(self.analysis.chunks)
        if self.atomic.chunks is not self.analysis.baseline_chunks:
            self.atomic = ClientStream(self.analysis.baseline_chunks)
        self.streaming.sync()
        self.atomic.sync()

    def at(self, index: int) -> ClientScene:
        tb = self.timebase
        index = tb.clamp(index)
        step = tb.step(index)
        ms = tb.x(index) if tb.timed else None
        ended = index >= tb.last and not self.analysis.running
        a = self.analysis
        policy = a.source.policy
        streaming = self._panel(self.streaming, _side_title(policy), policy, step, ms, ended)
        atomic = self._panel(self.atomic, "Atomic", "atomic", step, ms, ended)
        headline = "generating…" if a.running else ttfd_label(a)
        clients = tuple(predicted_cells(a).items()) if ended and a.source.kind == "capture" else ()
        return ClientScene(streaming, atomic, headline, a.running, clients)

    def _panel(self, stream: ClientStream, title: str, policy: str, step: int, ms: float | None, ended: bool) -> ClientPanel:
        count = len(stream.steps) if ended else stream.count_until(step)
        calls = tuple(stream.calls_until(count))
        first = stream.first_number if stream.first_number is not None and stream.first_number < count else None
        first_chunk = stream.chunks[first] if first is not None else None
        finished = stream.finish_number is not None and stream.finish_number < count
        state = DONE if finished else (RECEIVING if first is not None else WAITING)
        clock = clock_text(ms, self.analysis.unit, step)
        content, reasoning = stream.content.until(count), stream.reasoning.until(count)
        return ClientPanel(
            title=title,
            policy=policy,
            clock=clock,
            elapsed_ms=ms,
            content=content,
            reasoning=reasoning,
            calls=calls,
            chunks=count,
            first_ms=first_chunk.ms if first_chunk is not None else None,
            first_step=first_chunk.step if first_chunk is not None else None,
            finish_reason=stream.finish_reason if finished else None,
            state=state,
            spinner=spinner_frame(ms) if state == WAITING else "",
            status=self._status(state, calls, stream, ended, bool(content), bool(reasoning)),
        )

    def _status(self, state: str, calls: tuple[ClientCall, ...], stream: ClientStream, ended: bool,
                content: bool, reasoning: bool) -> str:
        """One line under the clock; its time is the headline badge's (:func:`headline_times`), never another."""
        if state == WAITING:
            return f"nothing arrived (the stream ended: {self.analysis.finish_cause})" if ended else "nothing yet"
        chars = sum(len(c.arguments) for c in calls)
        if calls:
            times = headline_times(self.analysis)
            at = times.atomic if stream is self.atomic else times.first_delta
            what = "whole call at" if stream is self.atomic else "first delta at"
            since = f"{what} {describe_first(at, self.analysis.unit)}" if at.step is not None else what.rsplit(" ", 1)[0]
        else:
            kinds = " and ".join(k for k, shown in (("reasoning", reasoning), ("content", content)) if shown)
            since = f"{kinds or 'text'} only" + ("" if state == DONE else ", no call yet")
        if state == DONE:
            reason = stream.finish_reason or "none"
            return f"{since} · {chars:,} chars · finish {reason}" if calls else f"{since} · finish {reason}"
        return f"{since} · {chars:,} characters so far" if calls else since


def _side_title(policy: str) -> str:
    """Short: it shares a line with the clock in a narrow tab."""
    if policy == "incremental":
        return "Streaming"
    if policy == "atomic":
        return "Atomic (shown policy)"
    return f"Streaming ({policy})"


# ------------------------------------------------------------------ partial JSON, as a client UI shows it

_WS = re.compile(r"\s*")
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)(")?', re.DOTALL)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[{}\[\],]|[^"{}\[\],]+', re.DOTALL)
_PARTIAL_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{0,3})?$")


def decode_partial_string(body: str) -> str:
    """A JSON string body (between the quotes, maybe cut anywhere) as text; a cut escape is dropped."""
    body = _PARTIAL_ESCAPE.sub("", body)
    try:
        return json.loads(f'"{body}"')
    except ValueError:
        return body  # raw control characters or a bad escape: show it as written


def partial_fields(arguments: str) -> list[ArgumentField]:
    """The top-level fields of a JSON object prefix; ``[]`` when it is not one (the raw text is then shown)."""
    pos = _WS.match(arguments).end()
    if pos >= len(arguments) or arguments[pos] != "{":
        return []
    pos += 1
    fields: list[ArgumentField] = []
    n = len(arguments)
    while True:
        pos = _WS.match(arguments, pos).end()
        if pos >= n or arguments[pos] == "}":
            return fields
        if arguments[pos] == ",":
            pos += 1
            continue
        key = _STRING.match(arguments, pos)
        if key is None or key.group(2) is None:
            return fields  # a key still being written
        pos = _WS.match(arguments, key.end()).end()
        if pos >= n or arguments[pos] != ":":
            return fields
        pos = _WS.match(arguments, pos + 1).end()
        name = decode_partial_string(key.group(1))
        if pos >= n:
            fields.append(ArgumentField(name, "", False, False))
            return fields
        if arguments[pos] == '"':
            value = _STRING.match(arguments, pos)
            assert value is not None  # a quote always starts a (maybe unfinished) string
            done = value.group(2) is not None
            fields.append(ArgumentField(name, decode_partial_string(value.group(1)), True, done))
            if not done:
                return fields
            pos = value.end()
        else:
            end, done = _scalar_or_nested_end(arguments, pos)
            fields.append(ArgumentField(name, arguments[pos:end].rstrip(), False, done))
            if not done:
                return fields
            pos = end


def _scalar_or_nested_end(text: str, pos: int) -> tuple[int, bool]:
    """Where a non-string value starting at ``pos`` ends (at its top-level ``,`` or ``}``), and whether it did."""
    depth = 0
    for match in _TOKEN.finditer(text, pos):
        token = match.group()
        if token in "{[":
            depth += 1
        elif token in "}]":
            if depth == 0:
                return match.start(), True
            depth -= 1
        elif token == "," and depth == 0:
            return match.start(), True
    return len(text), False
