"""The generated text and where each token sits in it, with what each token produced.

The text is the whole byte prefix decoded at once (a token may end inside a
UTF-8 character: it then owns no character and the next token owns it).
Each token is classified by the parse events it triggered, which is how the
text pane colours tool-call markers, argument spans, content and reasoning
without knowing the wire format:

- ``arguments`` (with the call index): the token grew a call's arguments;
- ``call``: the token opened or named a call (marker and name text);
- ``content`` / ``reasoning``: the token grew that field;
- ``held``: the token produced nothing yet (a partial marker, JSON punctuation
  the parser holds back, whitespace between calls).

For display, a run of ``held`` tokens right before a token that opens a call,
or right after a call's tokens, is tool-call markup and is shown as ``call``
(:attr:`TextSpans.display`, the token's kind in previews and chunk spans).

A token's events say what it produced, not which of its characters did: one
token can close a marker and start a value (``>\n``). So the pane colours per
character (:meth:`TextSpans.pieces`), from :class:`~.char_kinds.CharKinds`:
where each piece of content, reasoning and argument text came from, the text
consumed between them being markup. Never from a pattern over the text: a
marker the parser kept as argument text is argument text.
"""

from __future__ import annotations

import bisect
import codecs
from array import array
from dataclasses import dataclass

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.core.causes import UNFINISHED
from callscope.engine.core.parse_model import (
    ArgumentsAppended,
    CallNamed,
    CallOpened,
    CallRevised,
    ContentAppended,
    ContentRevised,
    ReasoningAppended,
)
from callscope.engine.core.pieces import joined
from callscope.engine.core.wire import CONTENT, FINISH, HEADER, REASONING, ROLE, WireChunk
from callscope.engine.inspector.char_kinds import CharKinds
from callscope.engine.inspector.timebase import Timebase

ARGUMENTS = "arguments"
CALL = "call"
CONTENT_KIND = "content"
REASONING_KIND = "reasoning"
HELD = "held"
SPAN_KINDS = (ARGUMENTS, CALL, CONTENT_KIND, REASONING_KIND, HELD)

def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units: what Qt counts as a text position.

    An astral-plane character (emoji, rare CJK) is one Python character but two
    Qt positions; mixing the two units shifts every highlight after it.
    """
    return len(text) + sum(1 for ch in text if ch > "\uffff") if not text.isascii() else len(text)


@dataclass(frozen=True, slots=True)
class TokenSpan:
    """Characters ``[start, end)`` of the text, added at cursor position ``position``."""

    position: int
    start: int
    end: int
    kind: str
    call_index: int | None = None


def opens_call(events: list) -> int | None:
    """The index of the call ``events`` open (the text before it is that call's opening marker), or None."""
    for event in events:
        if isinstance(event, CallOpened):
            return event.index
    return None


def classify(events: list) -> tuple[str, int | None]:
    """The kind of a token from the events it triggered (strongest first)."""
    kind, index = HELD, None
    for event in events:
        if isinstance(event, (ArgumentsAppended, CallRevised)):
            return ARGUMENTS, event.index
        if isinstance(event, (CallOpened, CallNamed)):
            kind, index = CALL, event.index
        elif isinstance(event, ReasoningAppended) and kind == HELD:
            kind = REASONING_KIND
        elif isinstance(event, (ContentAppended, ContentRevised)) and kind in (HELD, REASONING_KIND):
            kind = CONTENT_KIND
    return kind, index


class TextSpans:
    """Token boundaries (character offsets per cursor position) and each token's kind."""

    def __init__(self, analysis: Analysis, timebase: Timebase) -> None:
        self.analysis = analysis
        self.timebase = timebase
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pieces: list[str] = []
        # Machine integers, not int objects: two per step of a 100,000-step trace were 8 MB.
        self.ends = array("q", [0])  # character offset after each position (position 0: nothing yet)
        self.ends16 = array("q", [0])  # the same boundaries in UTF-16 code units (Qt text positions)
        self.kinds: list[str] = [HELD]
        self.display: list[str] = [HELD]  # kinds with tool-call markup runs relabelled as ``call``
        self.call_index: list[int | None] = [None]
        self._events_seen = 0  # parse events before this one belong to steps already taken in
        self._records_seen = 0
        self._clean = True  # the UTF-8 decoder holds no partial character: an ASCII step decodes as itself
        self.has_text = False
        #: Some character is outside the BMP: two Qt positions for one character, so ``ends16`` differs from ``ends``.
        self.astral = False
        self.chars = CharKinds()
        self.sync()

    def sync(self) -> str:
        """Take in new steps; returns the text they added (the text pane appends it).

        One pass over the new step records beside the parse events (both in step order): a step's
        events are the run of events with its number, read where the last step's ended. This runs
        once per step of a 100,000-step trace when it opens, so the common cases go first: an ASCII
        step (its text is its bytes) and a step that only grew one call's arguments.
        """
        added: list[str] = []
        events = self.analysis.parse_events
        event_count = len(events)
        at = self._events_seen
        positions = self.timebase.steps
        position_count = len(positions)
        records = self.analysis.steps
        ends, ends16, chars = self.ends, self.ends16, self.chars
        decoder = self._decoder
        clean = self._clean
        for record in records[self._records_seen :] if self._records_seen else records:
            data = record.data
            if not data:
                piece = ""
            elif clean and data.isascii():
                piece = data.decode("ascii")
            else:
                piece = decoder.decode(data)
                clean = not decoder.buffer
            if piece:
                self.has_text = True
                added.append(piece)
            elif data:
                self.has_text = True
            step = record.step
            while at < event_count and events[at][0] < step:
                at += 1  # events of a step that is no position (none here; kept as before: not classified)
            first = at
            while at < event_count and events[at][0] == step:
                at += 1
            position = len(ends)
            size = len(piece)
            size16 = size if piece.isascii() else utf16_len(piece)
            if size16 != size:
                self.astral = True
            if position < position_count and positions[position] == step:
                ends.append(ends[-1] + size)
                ends16.append(ends16[-1] + size16)
                if at - first == 1 and type(events[first][1]) is ArgumentsAppended:  # noqa: E721 - the usual step
                    event = events[first][1]
                    self._append_kind(ARGUMENTS, event.index)
                    chars.step(step, piece, [event])
                    continue
                events_here = [event for _, event in events[first:at]] if at > first else []
                kind, index = classify(events_here)
                self._append_kind(kind, index, opens_call(events_here))
                chars.step(step, piece, events_here)
            else:  # a step that is not a position (duplicate number): fold into the last token
                ends[-1] += size
                ends16[-1] += size16
                chars.extend(piece)
        self._clean = clean
        self._events_seen = at
        self._records_seen = len(records)
        text = "".join(added)
        if text:
            self._pieces.append(text)
        return text

    def _append_kind(self, kind: str, index: int | None, opened: int | None = None) -> None:
        if kind == ARGUMENTS and opened is None and self.kinds[-1] == ARGUMENTS and self.call_index[-1] == index:
            self.kinds.append(kind)  # the common step: more of the same call's arguments (nothing to relabel)
            self.display.append(kind)
            self.call_index.append(index)
            return
        previous = self.display[-1]
        display = kind
        if kind == HELD and previous in (CALL, ARGUMENTS) and len(self.display) > 1:
            display = CALL  # closing markup after a call's text
            index = self.call_index[-1]
        elif kind == CALL or opened is not None:
            back = len(self.display) - 1
            while back > 0 and self.kinds[back] == HELD and self.display[back] == HELD:
                self.display[back] = CALL  # the opening marker the parser held back
                self.call_index[back] = index if opened is None else opened
                back -= 1
        if kind == ARGUMENTS:
            back = len(self.display) - 1
            while back > 0 and self.kinds[back] == HELD and self.call_index[back] == index:
                back -= 1
            if back < len(self.display) - 1 and self.kinds[back] == ARGUMENTS and self.call_index[back] == index:
                for held in range(back + 1, len(self.display)):
                    self.display[held] = ARGUMENTS  # whitespace the parser held inside the arguments
        self.kinds.append(kind)
        self.display.append(display)
        self.call_index.append(index)

    def pieces(self, position: int) -> list[tuple[int, int, str, int | None]]:
        """The token at ``position`` as ``(start, end, kind, call index)`` character ranges, as the parser read them."""
        span = self.span(position)
        if span.end <= span.start:
            return []
        return self.chars.kinds(span.start, span.end)

    def char_kinds(self) -> list[tuple[str, int | None]]:
        """The displayed ``(kind, call index)`` of every character (tests, exports); argument kinds keep their call."""
        kinds: list[tuple[str, int | None]] = []
        for position in range(1, len(self.ends)):
            for start, end, kind, call in self.pieces(position):
                kinds.extend([(kind, call if kind == ARGUMENTS else None)] * (end - start))
        return kinds

    def finish_text(self) -> str:
        """Flush an incomplete UTF-8 tail at the end of a finished stream (shown as U+FFFD)."""
        tail = self._decoder.decode(b"", final=True)
        if tail:
            self._pieces.append(tail)
            self.ends[-1] += len(tail)
            self.ends16[-1] += utf16_len(tail)
            self.astral = self.astral or utf16_len(tail) != len(tail)
            self.chars.extend(tail)
        self.chars.finish(self.timebase.steps[-1], cut=self.analysis.finish_cause in UNFINISHED)
        return tail

    def held(self, position: int) -> tuple[int, int]:
        """Characters ``[start, end)`` the parser had read by ``position`` but nothing had come of yet."""
        end = self.cut(position)
        start = min(end, self.chars.resolved_at(self.timebase.step(position)))
        return start, end

    @property
    def text(self) -> str:
        return joined(self._pieces)

    def __len__(self) -> int:
        return len(self.ends)

    def span(self, position: int) -> TokenSpan:
        position = max(0, min(position, len(self.ends) - 1))
        start = self.ends[position - 1] if position > 0 else 0
        return TokenSpan(position, start, self.ends[position], self.display[position], self.call_index[position])

    def cut(self, position: int) -> int:
        """Character offset where the text after ``position`` begins (the pane dims from here)."""
        return self.ends[max(0, min(position, len(self.ends) - 1))]

    def utf16_offset(self, offset: int) -> int:
        """Qt text position of character ``offset`` (the one place char offsets become UTF-16 units)."""
        ends = self.ends
        offset = max(0, min(offset, ends[-1]))
        position = bisect.bisect_left(ends, offset)
        if ends[position] == offset:
            return self.ends16[position]
        start = ends[position - 1]
        return self.ends16[position - 1] + utf16_len(self.text[start:offset])

    def char_offset(self, utf16: int) -> int:
        """Character offset at Qt text position ``utf16`` (inside a surrogate pair: that character)."""
        ends16 = self.ends16
        utf16 = max(0, min(utf16, ends16[-1]))
        position = bisect.bisect_left(ends16, utf16)
        if ends16[position] == utf16:
            return self.ends[position]
        char, units = self.ends[position - 1], ends16[position - 1]
        text = self.text
        while units < utf16:
            units += 2 if text[char] > "\uffff" else 1
            char += 1
        return char if units == utf16 else char - 1

    def span16(self, position: int) -> tuple[int, int]:
        """Qt text positions ``[start, end)`` of the token added at ``position``."""
        position = max(0, min(position, len(self.ends) - 1))
        return (self.ends16[position - 1] if position > 0 else 0), self.ends16[position]

    def cut16(self, position: int) -> int:
        """:meth:`cut` in Qt text positions."""
        return self.ends16[max(0, min(position, len(self.ends16) - 1))]

    def spans(self) -> list[TokenSpan]:
        return [self.span(p) for p in range(1, len(self.ends))]

    def position_at_char(self, offset: int) -> int:
        """The position whose token holds character ``offset`` (clicking the text moves the cursor)."""
        return max(1, min(len(self.ends) - 1, bisect.bisect_right(self.ends, offset)))

    def chunk_span(self, chunks: list[WireChunk], i: int) -> tuple[int, int]:
        """Characters of the tokens that produced ``chunks[i]``: since the previous chunk of its stream."""
        chunk = chunks[i]
        end_pos = self.timebase.index_of_step(chunk.step)
        if chunk.kind == ROLE:
            return 0, 0
        if chunk.kind == FINISH:
            return self.span(end_pos).start, self.cut(end_pos)
        previous_step = None
        for earlier in reversed(chunks[:i]):
            if _same_stream(earlier, chunk):
                previous_step = earlier.step
                break
        if previous_step is None and chunk.kind == HEADER:
            opened = self._opened_step(chunk.index)
            start_pos = self.timebase.index_of_step(opened) if opened is not None else end_pos
            while start_pos > 1 and self.display[start_pos - 1] == CALL and self.kinds[start_pos - 1] == HELD:
                start_pos -= 1  # include the marker and name text the parser held back
            return self.span(start_pos).start, self.cut(end_pos)
        start_pos = self.timebase.index_of_step(previous_step) + 1 if previous_step is not None else 1
        start_pos = min(start_pos, end_pos)
        return self.span(start_pos).start, self.cut(end_pos)

    def _opened_step(self, index: int | None) -> int | None:
        for step, event in self.analysis.parse_events:
            if isinstance(event, CallOpened) and event.index == index:
                return step
            if isinstance(event, CallRevised) and event.index == index:
                return step
        return None


def _same_stream(a: WireChunk, b: WireChunk) -> bool:
    if b.kind in (HEADER, "arguments"):
        return a.kind in (HEADER, "arguments") and a.index == b.index
    if b.kind in (CONTENT, REASONING):
        return a.kind == b.kind
    return False
