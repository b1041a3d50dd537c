"""The two state-machine drivers the format parsers are built on, and their text helpers.

Every parser is a table of state handlers run over the text fed so far. Two
styles exist because the formats have two shapes:

* :class:`PieceMachine` (the JSON formats: hermes, llama3_json, mistral,
  generic, emulated). A handler gets the current piece and a position and
  returns the (possibly replaced) text and where to continue; anything that
  must wait for the next piece (a half-typed marker) is kept in ``_pending``
  and put in front of it. The JSON scanner keeps its own state, so most of
  the piece is never copied.
* :class:`BufferMachine` (the marker formats: qwen3_coder, deepseek_v31,
  gpt_oss). A handler reads ``_buf``, the unresolved text, consumes what it
  can decide and returns True to run again or False to wait for more text;
  only a bounded tail stays in ``_buf`` between feeds. Text goes out through
  sinks that drop leading whitespace after a marker (``_skip_ws``) and hold
  trailing whitespace (``_ws``) until the next non-space decides it.
  :class:`ThinkTextMachine` adds the ``[<think> reasoning </think>] text``
  front both qwen3_coder and deepseek_v31 share.

The drivers cost one dict lookup and one call per handler step; nothing here
runs per character.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.marker_search import find_first, held_back_from
from callscope.engine.formats._kit.parser import FormatParser


def skip_space(text: str, pos: int) -> int:
    """Index of the first non-whitespace character of ``text`` at or after ``pos`` (``len(text)`` if none)."""
    n = len(text)
    while pos < n and text[pos].isspace():
        pos += 1
    return pos


# ----------------------------------------------------------------- piece style


class PieceMachine(FormatParser):
    """Driver of handlers ``(self, text, pos) -> (text, pos)`` keyed by ``_state``.

    Subclasses set ``_handlers`` (state -> function) and ``_content_state``
    (the state in which text is plain content).
    """

    _handlers: ClassVar[dict[int, Callable[..., tuple[str, int]]]] = {}
    _content_state: ClassVar[int] = 0

    def __init__(self, tools: list[dict[str, Any]] | None, state: int) -> None:
        super().__init__(tools)
        self._state = state
        self._pending = ""  # text to re-examine with the next piece (a possible marker, held whitespace)

    def _feed(self, text: str) -> None:
        if self._pending:
            text = self._pending + text
            self._pending = ""
        self._run(text, 0)

    def _run(self, text: str, pos: int) -> None:
        handlers = self._handlers
        while pos < len(text):
            text, pos = handlers[self._state](self, text, pos)

    def _take_pending(self) -> str:
        pending, self._pending = self._pending, ""
        return pending

    def _content_until(self, text: str, pos: int, marker: str) -> int:
        """Content from ``pos`` up to ``marker``: its index, or -1 when absent.

        When absent, everything that cannot be the start of ``marker`` goes
        out as content and the rest waits in ``_pending`` for the next piece.
        """
        at = text.find(marker, pos)
        if at < 0:
            hold = held_back_from(text, (marker,), pos)
            self._content(text[pos:hold])
            self._pending = text[hold:]
        else:
            self._content(text[pos:at])
        return at

    def _content_until_first(self, text: str, pos: int, markers: tuple[str, ...]) -> tuple[int, str] | None:
        """Content from ``pos`` up to the first of ``markers``: ``(index, marker)``, or None when none is there.

        When none is there, everything that cannot begin one goes out as content
        and the rest waits in ``_pending`` for the next piece.
        """
        found = find_first(text, markers, pos)
        if found is None:
            hold = held_back_from(text, markers, pos)
            self._content(text[pos:hold])
            self._pending = text[hold:]
        else:
            self._content(text[pos : found[0]])
        return found

    def _layout_then_content(self, text: str, pos: int) -> tuple[str, int]:
        """After a call or block: whitespace is layout, the first other character starts content."""
        pos = skip_space(text, pos)
        if pos < len(text):
            self._state = self._content_state
        return text, pos

    def _closer_or_content(self, text: str, pos: int, closer: str, then: int) -> tuple[str, int]:
        """After a value: whitespace, then ``closer`` (go to ``then`` after it), a prefix of it (the next
        piece decides), or anything else: the closer is missing and content resumes there."""
        pos = skip_space(text, pos)
        rest = text[pos:]
        if rest.startswith(closer):
            self._state = then
            return text, pos + len(closer)
        if closer.startswith(rest):  # also an empty rest
            self._pending = rest
            return text, len(text)
        self._state = self._content_state
        return text, pos


# ----------------------------------------------------------------- buffer style


class BufferMachine(FormatParser):
    """Driver of handlers ``(self) -> bool`` over the unresolved buffer ``_buf``, keyed by ``_state``."""

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {}

    def __init__(self, tools: list[dict[str, Any]] | None, state: str) -> None:
        super().__init__(tools)
        self._buf = ""  # unresolved text: only a bounded tail is kept here between feeds
        self._state = state
        self._ws = ""  # whitespace held until the next non-space decides where it belongs
        self._skip_ws = False  # drop the leading whitespace of the next text that goes out
        self._call = -1  # index of the open call

    def _feed(self, text: str) -> None:
        self._buf += text
        handlers = self._handlers
        while handlers[self._state](self):
            pass

    def _take_buf(self) -> str:
        buf, self._buf = self._buf, ""
        return buf

    def _scan(self, markers: tuple[str, ...], say: Callable[[str], None]) -> str | None:
        """Pass the buffer to ``say`` up to the first marker; return the marker, consumed.

        No marker: ``say`` gets what cannot begin one, the rest stays in
        ``_buf`` and the result is None (the handler waits for more text).
        """
        buf = self._buf
        hit = find_first(buf, markers)
        if hit is None:
            cut = held_back_from(buf, markers)
            say(buf[:cut])
            self._buf = buf[cut:]
            return None
        pos, marker = hit
        say(buf[:pos])
        self._buf = buf[pos + len(marker) :]
        return marker

    # ------------------------------------------------------------ text sinks

    def _say_arguments(self, text: str) -> None:
        """Arguments of the open call, leading (after a marker) and trailing (before a closer) layout held."""
        self._say_trimmed(text, self._append_arguments)

    def _append_arguments(self, text: str) -> None:
        self._arguments(self._call, text)

    def _say_content(self, text: str) -> None:
        """Content, minus its leading whitespace when ``_skip_ws`` (after a marker)."""
        if self._skip_ws:
            text = text.lstrip()
            if not text:
                return
            self._skip_ws = False
        self._content(text)

    def _say_trimmed(self, text: str, sink: Callable[[str], None]) -> None:
        """Send ``text`` to ``sink`` with leading (``_skip_ws``) and trailing whitespace held.

        Trailing whitespace waits in ``_ws``: it goes out in front of the next
        non-space text, or is dropped (``_ws = ""``) when a closer follows.
        """
        if self._skip_ws:
            text = text.lstrip()
            if not text:
                return
            self._skip_ws = False
        body = text.rstrip()
        if body:
            sink(self._ws + body)
            self._ws = text[len(body) :]
        else:
            self._ws += text


THINK = "<think>"
THINK_END = "</think>"
_THINK_ENDS = (THINK_END,)


def _find_one(buffer: str, marker: str) -> tuple[int, str] | None:
    """``find_first`` for a single marker, without the loop."""
    pos = buffer.find(marker)
    return None if pos < 0 else (pos, marker)

#: States of :class:`ThinkTextMachine`.
START = "start"  # generation start: is there a <think>?
REASONING = "reasoning"
TEXT = "text"  # content, looking for the format's markers


class ThinkTextMachine(BufferMachine):
    """A generation ``[<think> reasoning </think>] text`` where text holds the format's markers.

    ``thinking=True``: the prompt ended with ``<think>``, the generation starts
    inside reasoning. Reasoning is trimmed (leading and trailing whitespace
    are layout). In text, a stray ``</think>`` is dropped and the whitespace
    after it skipped (the generation started inside reasoning but the parser
    was not told so: what went out as content stays there); any other of
    ``_text_markers`` goes to :meth:`_on_text_marker`.

    The reasoning tags are ``<think>``/``</think>`` unless a format names its own
    (``_think_open``/``_think_close``: Seed-OSS ``<seed:think>``, Gemma 4
    ``<|channel>thought``). ``_reasoning_exits`` are markers that also end
    reasoning without a closer (Kimi K2 and DeepSeek V3.2 open their tool calls
    right inside it): reasoning stops before them and text resumes at them.
    """

    #: Markers searched in text; the reasoning closer (``THINK_END``) among them.
    _text_markers: ClassVar[tuple[str, ...]] = _THINK_ENDS
    #: The tags around reasoning.
    _think_open: ClassVar[str] = THINK
    _think_close: ClassVar[str] = THINK_END
    #: Markers that end reasoning (kept, read as text) when a model skips the closer.
    _reasoning_exits: ClassVar[tuple[str, ...]] = ()

    def __init__(self, tools: list[dict[str, Any]] | None, thinking: bool) -> None:
        super().__init__(tools, START)
        self._thinking = thinking
        self._pending = ""  # raw text of a call opener not yet known to be well formed
        self._name = ""  # the name in that opener, as read so far
        self._reasoning_stops = (self._think_close, *self._reasoning_exits)

    def _finish(self) -> None:
        state, buf = self._state, self._take_buf()
        if state == START:
            if self._thinking:
                self._say_trimmed(buf, self._reasoning)
            else:
                self._say_content(buf)
        elif state == REASONING:
            self._say_trimmed(buf, self._reasoning)
        elif state == TEXT:
            self._say_content(buf)
        else:
            self._finish_in(state, buf)

    def _finish_in(self, state: str, buf: str) -> None:
        """End of generation in a format state: by default its held text (a half-typed marker) is dropped."""

    # ------------------------------------------------------------ states

    def _on_start(self) -> bool:
        rest = self._buf.lstrip()
        if not rest:
            return False
        opener = self._think_open
        if rest.startswith(opener):
            self._buf = rest[len(opener) :]
            self._state = REASONING
            self._skip_ws = True
            return True
        if opener.startswith(rest):
            return False
        self._state = REASONING if self._thinking else TEXT
        self._skip_ws = self._thinking
        return True

    def _on_reasoning(self) -> bool:
        buf = self._buf
        stops = self._reasoning_stops
        hit = find_first(buf, stops) if len(stops) > 1 else _find_one(buf, stops[0])
        if hit is not None:
            end, marker = hit
            self._say_trimmed(buf[:end], self._reasoning)
            self._ws = ""  # trailing whitespace of reasoning is layout
            self._buf = buf[end + len(marker) :] if marker == self._think_close else buf[end:]
            self._state = TEXT
            self._skip_ws = True
            return True
        cut = held_back_from(buf, stops)
        self._say_trimmed(buf[:cut], self._reasoning)
        self._buf = buf[cut:]
        return False

    def _on_text(self) -> bool:
        marker = self._scan(self._text_markers, self._say_content)
        if marker is None:
            return False
        if marker == self._think_close:
            self._skip_ws = True
        else:
            self._on_text_marker(marker)
        return True

    def _on_text_marker(self, marker: str) -> None:  # pragma: no cover - abstract
        """A format marker (not ``</think>``) was found in text and consumed."""
        raise NotImplementedError

    def _read_name(self, stop: re.Pattern[str]) -> str | None:
        """Move the buffer up to the first ``stop`` character into ``_name`` and the opener's raw text.

        Returns the buffer from that character on, or None when it ran out first.
        """
        buf = self._buf
        found = stop.search(buf)
        cut = len(buf) if found is None else found.start()
        self._name += buf[:cut]
        self._pending += buf[:cut]
        self._buf = buf[cut:]
        return None if found is None else self._buf

    def _open_raw_call(self, name: str, rest: str, call_id: str | None = None) -> None:
        """A call's header is complete and its raw JSON arguments follow in ``rest``: open it, named."""
        self._pending = ""
        self._call = self._open_call(call_id)
        self._name_call(self._call, name)
        self._buf = rest
        self._ws = ""
        self._skip_ws = True  # whitespace after the header is layout

    def _raw_arguments(self, closers: tuple[str, ...]) -> str | None:
        """Stream raw arguments up to the first of ``closers``: the closer (consumed), or None to wait.

        The whitespace before the closer is layout, dropped.
        """
        marker = self._scan(closers, self._say_arguments)
        if marker is not None:
            self._ws = ""
            self._skip_ws = False
        return marker

    def _back_to_text(self) -> bool:
        """A block ended: text again, its leading whitespace dropped (layout)."""
        self._state = TEXT
        self._skip_ws = True
        return True

    def _release_opener(self, state: str) -> bool:
        """The held opener is not a call after all: its raw text is content; go on in ``state``."""
        self._say_content(self._pending)
        self._pending = ""
        self._state = state
        return True

    #: The handlers of the states above, for a subclass's ``_handlers`` table.
    think_handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        START: _on_start,
        REASONING: _on_reasoning,
        TEXT: _on_text,
    }


__all__ = [
    "REASONING",
    "START",
    "TEXT",
    "THINK",
    "THINK_END",
    "BufferMachine",
    "PieceMachine",
    "ThinkTextMachine",
    "skip_space",
]
