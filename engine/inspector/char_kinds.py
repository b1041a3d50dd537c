"""What every character of the generated text became, derived from the parser's own events.

The text pane colours markers, argument text, content and reasoning. A regular
expression over the text cannot do that honestly: ``</tool_call>`` inside a
JSON string, ``</parameter>`` quoted inside a Qwen3-Coder value, or
``[TOOL_CALLS]`` read by another format's parser are what the *parser* says
they are (argument text, content), not markers. So the kinds come from the
events: each step's appended content, reasoning and argument text is located in
the text that step made available, and what the parser consumed between two
such pieces (text that became neither content, reasoning nor arguments) is
markup. This needs nothing from a format beyond the events every parser
already reports, so a format added elsewhere is coloured correctly at once.

Locating a piece: its own text, searched in the window between the end of the
previous piece and the end of the step's text, from the right (markup comes
before the value it introduces). A piece that is not in the text verbatim was
rewritten by the parser: JSON-escaped (a Qwen3-Coder string value), unescaped
(llama.cpp's generic ``"response"``), or wrapped in JSON the parser
synthesised (``{"city": "`` from ``<parameter=city>``): its core is searched
instead, and synthesised JSON alone (``{``, ``"``, a key) is located nowhere.

Held text: at any step, what the parser has read but nothing has come of yet
(a half-typed marker, JSON punctuation, a value it must see whole) is the text
after the last piece that went out (:meth:`CharKinds.resolved_at`). A stream
that was cut (cancelled, failed) never resolves its tail: it stays held.
"""

from __future__ import annotations

import bisect
import json
import re
from array import array
from dataclasses import dataclass

from callscope.engine.core.parse_model import (
    ArgumentsAppended,
    CallNamed,
    CallOpened,
    CallRevised,
    ContentAppended,
    ReasoningAppended,
)

ARGUMENTS = "arguments"
MARKUP = "call"  # markup is shown as tool-call markup (the text pane's "call" colour)
CONTENT = "content"
REASONING = "reasoning"
HELD = "held"

#: A JSON object key at the start of a synthesised fragment: ``,"city":`` or ``{"city": ``.
_LEADING_KEY = re.compile(r'^[\s,{\[]*(?:"(?:[^"\\]|\\.)*"\s*:\s*)?"?')
_TRAILING = re.compile(r'"?[\s}\],]*$')
#: Text kept unmatched (held or not yet located) before it is given up as markup: bounds the search.
MAX_PENDING = 1 << 20


@dataclass(slots=True)
class Run:
    """Characters ``[start, end)`` of one kind (``call``: which call's arguments or markup).

    Mutable: the last run grows in place as each step extends it (a new object per step was
    100,000 allocations when a long call opens).
    """

    start: int
    end: int
    kind: str
    call: int | None = None


def _unescape(text: str) -> str | None:
    """``text`` as the inside of a JSON string, decoded (None when it is not one)."""
    if "\\" not in text:
        return None
    try:
        return json.loads('"' + text + '"')
    except ValueError:
        return None


def _core(text: str) -> str:
    """A synthesised fragment minus the JSON around its value: ``,"city":"Par`` -> ``Par``."""
    head = _LEADING_KEY.match(text)
    start = head.end() if head else 0
    tail = _TRAILING.search(text, start)
    end = tail.start() if tail else len(text)
    core = text[start:end]
    return _unescape(core) or core


def locate(window: str, piece: str, limit: int) -> tuple[int, int] | None:
    """Where ``piece`` came from in ``window[:limit]`` (rightmost), or None when it was synthesised."""
    if not piece:
        return None
    at = window.rfind(piece, 0, limit)
    if at >= 0:
        return at, at + len(piece)
    for variant in (_unescape(piece), json.dumps(piece, ensure_ascii=False)[1:-1], _core(piece)):
        if variant and variant != piece:
            at = window.rfind(variant, 0, limit)
            if at >= 0:
                return at, at + len(variant)
    return None


def _pieces(events: list) -> list[tuple[str, int | None, str]]:
    """The text-carrying events of one step, in order: ``(kind, call, text)``."""
    out = []
    for event in events:
        if isinstance(event, ArgumentsAppended):
            out.append((ARGUMENTS, event.index, event.text))
        elif isinstance(event, ContentAppended):
            out.append((CONTENT, None, event.text))
        elif isinstance(event, ReasoningAppended):
            out.append((REASONING, None, event.text))
    return out


def _structural(events: list) -> int | None:
    """The call a step opened or named after its last text piece (that text is markup), else None."""
    call = None
    for event in events:
        if isinstance(event, (CallOpened, CallNamed, CallRevised)):
            call = event.index
        elif isinstance(event, (ArgumentsAppended, ContentAppended, ReasoningAppended)):
            call = None
    return call


class CharKinds:
    """Runs of kinds over the generated text, fed step by step (live runs grow it)."""

    def __init__(self) -> None:
        self.runs: list[Run] = []
        self._starts: list[int] = []
        self._located = 0  # characters before this offset are classified
        self._tail = ""  # text[self._located:]
        self._end = 0  # length of the text fed so far
        self._last_call: int | None = None  # the call of the last piece (markup after it is its closer)
        self._pending_call: int | None = None  # a call opened or named since the last piece
        # (step, offset) pairs, as two columns: by ``step`` the text before ``offset`` had produced something
        self._resolved_steps = array("q", [0])
        self._resolved_offsets = array("q", [0])
        self.finished = False

    # ------------------------------------------------------------ feeding

    def step(self, step: int, text: str, events: list) -> None:
        """A step added ``text`` and the parser reported ``events`` (its terminal events at the last step)."""
        if len(events) == 1 and text and not self._tail:
            event = events[0]
            if type(event) is ArgumentsAppended and event.text == text:  # noqa: E721 - the exact class, fast
                self._arguments_step(step, text, event.index)
                return
        if text:
            self._tail += text
            self._end += len(text)
        pieces = _pieces(events)
        placed: list[tuple[int, int, str, int | None]] = []
        limit = len(self._tail)
        unlocated_last = False  # the step's last piece was synthesised: the step's text produced it
        for number, (kind, call, piece) in enumerate(reversed(pieces)):
            found = locate(self._tail, piece, limit)
            if found is not None:
                placed.append((found[0], found[1], kind, call))
                limit = found[0]
            elif number == 0:
                unlocated_last = True
        placed.reverse()
        opened = _structural(events)
        if opened is not None:
            self._pending_call = opened
        resolved = self._located
        if placed:
            base = self._located
            at = 0
            for lo, hi, kind, call in placed:
                if lo > at:
                    self._add(base + at, base + lo, MARKUP, call if kind == ARGUMENTS else self._gap_call())
                self._add(base + lo, base + hi, kind, call)
                self._last_call = call if kind == ARGUMENTS else None
                self._pending_call = None
                at = hi
            self._tail = self._tail[at:]
            self._located = base + at
            resolved = self._located
        if opened is not None or unlocated_last:
            resolved = self._end  # a call's header, or JSON the parser wrote for it: that text produced them
        elif len(self._tail) > MAX_PENDING:
            self._give_up(len(self._tail) - MAX_PENDING)
        self._resolve(step, resolved)

    def _arguments_step(self, step: int, text: str, call: int) -> None:
        """The common step, taken as :meth:`step` takes it: all of its text became one call's arguments."""
        start = self._located
        end = start + len(text)
        self._end = end
        self._add(start, end, ARGUMENTS, call)
        self._last_call = call
        self._pending_call = None
        self._located = end
        self._resolve(step, end)

    def _resolve(self, step: int, offset: int) -> None:
        if offset > self._resolved_offsets[-1]:
            self._resolved_steps.append(step)
            self._resolved_offsets.append(offset)

    def finish(self, step: int, cut: bool) -> None:
        """The stream ended at ``step``: its unlocated tail is markup the parser consumed, or, if ``cut``, held."""
        if self.finished:
            return
        self.finished = True
        if cut:
            return
        if self._tail:
            self._add(self._located, self._end, MARKUP, self._gap_call())
            self._located = self._end
            self._tail = ""
        self._resolve(step, self._end)

    def extend(self, text: str) -> None:
        """Text with no step of its own (a UTF-8 tail flushed at the end): it joins the unlocated tail."""
        self._tail += text
        self._end += len(text)

    def _gap_call(self) -> int | None:
        return self._pending_call if self._pending_call is not None else self._last_call

    def _give_up(self, count: int) -> None:
        self._add(self._located, self._located + count, MARKUP, self._gap_call())
        self._located += count
        self._tail = self._tail[count:]

    def _add(self, start: int, end: int, kind: str, call: int | None) -> None:
        if end <= start:
            return
        if self.runs:
            last = self.runs[-1]
            if last.end == start and last.kind == kind and last.call == call:
                last.end = end
                return
        self.runs.append(Run(start, end, kind, call))
        self._starts.append(start)

    # ------------------------------------------------------------ queries

    @property
    def run_starts(self) -> list[int]:
        """Where each run starts (sorted): find the run at an offset by bisection."""
        return self._starts

    @property
    def located(self) -> int:
        """Characters classified so far (the rest is held, or not yet decided)."""
        return self._located

    def resolved_at(self, step: int) -> int:
        """Offset before which the text had produced something (a piece, a call's header) by ``step``."""
        i = bisect.bisect_right(self._resolved_steps, step) - 1
        return self._resolved_offsets[max(0, i)]

    def kinds(self, start: int, end: int) -> list[tuple[int, int, str, int | None]]:
        """``(start, end, kind, call)`` over characters ``[start, end)``; unclassified text is ``held``."""
        out: list[tuple[int, int, str, int | None]] = []
        if end <= start:
            return out
        i = max(0, bisect.bisect_right(self._starts, start) - 1)
        at = start
        runs = self.runs
        while i < len(runs) and runs[i].start < end:
            run = runs[i]
            lo, hi = max(run.start, start), min(run.end, end)
            if hi > lo:
                if lo > at:
                    out.append((at, lo, HELD, None))
                out.append((lo, hi, run.kind, run.call))
                at = hi
            i += 1
        if at < end:
            out.append((at, end, HELD, None))
        return out
