"""The helpers the format parsers share: marker hold-back, the two drivers' text sinks and scanners.

``held_back_from`` runs on every piece of every marker format, so it is a
compiled regular expression; these tests pin it to the plain definition
(a suffix that is a prefix of a marker, within the last ``longest - 1``
characters). The driver helpers are checked through tiny parsers built on
them, by the events they emit.
"""

from __future__ import annotations

import re
from typing import ClassVar

from hypothesis import given, settings
from hypothesis import strategies as st

from callscope.engine.core.parse_model import ContentAppended, ReasoningAppended
from callscope.engine.formats._kit.marker_search import find_first, held_back_from, strip_partial_suffix
from callscope.engine.formats._kit.text_machine import (
    REASONING,
    TEXT,
    BufferMachine,
    PieceMachine,
    ThinkTextMachine,
    skip_space,
)


def reference_held_back_from(buffer: str, markers: tuple[str, ...], start: int = 0) -> int:
    """The definition: first position, among the last longest-1 characters, whose suffix begins a marker."""
    end = len(buffer)
    longest = max((len(m) for m in markers), default=0)
    for pos in range(max(start, end - longest + 1), end):
        if any(marker.startswith(buffer[pos:]) for marker in markers):
            return pos
    return end


MARKER_SETS = [
    ("</think>",),
    ("<tool_call>", "</think>"),
    ("<|end|>", "<|call|>", "<|return|>", "<|start|>", "<|channel|>"),
    ("<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"),
    ("aa", "aab", "a"),  # markers that are prefixes of each other
    (".*", "\\Z", "(?:"),  # regex metacharacters are literal text
    ("", "x"),
    (),
]


@settings(max_examples=400, deadline=None)
@given(
    markers=st.sampled_from(MARKER_SETS),
    parts=st.lists(
        st.sampled_from(["a", "b", "<", "|", "x", " ", "\n", "</th", "<tool_c", "<|ca", "<｜tool▁", "aa", "\\", "."])
    ),
    start=st.integers(0, 12),
)
def test_held_back_from_matches_its_definition(markers: tuple[str, ...], parts: list[str], start: int) -> None:
    buffer = "".join(parts)
    assert held_back_from(buffer, markers, start) == reference_held_back_from(buffer, markers, start)
    assert held_back_from(buffer, markers) == reference_held_back_from(buffer, markers)


def test_held_back_from_examples() -> None:
    assert held_back_from("hello </thi", ("</think>",)) == 6
    assert held_back_from("hello </think>", ("</think>",)) == 14  # a whole marker is found, not held
    assert held_back_from("x<|end|>", ("<|end|>", "<|channel|>")) == 1  # a whole shorter marker in the window
    assert held_back_from("ab<", ("<x>",), start=3) == 3
    assert held_back_from("abc", ()) == 3
    assert strip_partial_suffix('{"a": 1}\n</tool_ca', "</tool_call>") == '{"a": 1}\n'


def test_find_first_prefers_the_earliest_then_the_longest() -> None:
    assert find_first("x <a> <ab>", ("<ab>", "<a>")) == (2, "<a>")
    assert find_first("x <ab>", ("<a", "<ab>")) == (2, "<ab>")
    assert find_first("x <ab>", ("<ab>",), start=3) is None


def test_skip_space() -> None:
    assert skip_space("  \n\tx ", 0) == 4
    assert skip_space("ab  ", 2) == 4
    assert skip_space("ab", 5) == 5


# ------------------------------------------------------------ piece driver


class _Tagged(PieceMachine):
    """Content with ``<x>`` markers dropped: exercises ``_content_until`` and the pending tail."""

    _content_state = 0

    def __init__(self) -> None:
        super().__init__(None, 0)

    def _in_content(self, text: str, pos: int) -> tuple[str, int]:
        at = self._content_until(text, pos, "<x>")
        if at < 0:
            return text, len(text)
        self._state = 1
        return text, at + 3

    def _finish(self) -> None:
        self._content(self._take_pending())

    _handlers: ClassVar = {0: _in_content, 1: PieceMachine._layout_then_content}


def _contents(events: list) -> list[str]:
    return [e.text for e in events if isinstance(e, ContentAppended)]


def test_piece_machine_holds_a_half_typed_marker_across_pieces() -> None:
    parser = _Tagged()
    assert _contents(parser.feed("one <")) == ["one "]
    assert _contents(parser.feed("x>   ")) == []  # the marker, then layout: nothing to show yet
    assert _contents(parser.feed(" two <x")) == ["two "]
    assert _contents(parser.finish()) == ["<x"]
    assert parser.snapshot().content == "one two <x"


# ------------------------------------------------------------ buffer driver


class _Think(ThinkTextMachine):
    """``[<think>...</think>]`` text where ``<b>`` is dropped: the shared think/text states alone."""

    _text_markers: ClassVar = ("<b>", "</think>")

    def __init__(self, thinking: bool = False) -> None:
        super().__init__(None, thinking)

    def _on_text_marker(self, marker: str) -> None:
        self._skip_ws = True

    _handlers: ClassVar = ThinkTextMachine.think_handlers


def _run(parser: BufferMachine, pieces: list[str]) -> tuple[str, str]:
    for piece in pieces:
        parser.feed(piece)
    parser.finish()
    snap = parser.snapshot()
    return snap.reasoning, snap.content


def test_think_block_is_trimmed_and_split_markers_wait() -> None:
    text = "<think>\n  step one \n step two  \n</think>\n\n answer <b>  more</thi"
    whole = _run(_Think(), [text])
    assert whole == ("step one \n step two", "answer more</thi")
    assert _run(_Think(), list(text)) == whole


def test_thinking_mode_starts_in_reasoning_and_a_stray_closer_is_dropped() -> None:
    assert _run(_Think(thinking=True), ["  why ", "</think> so"]) == ("why", "so")
    assert _run(_Think(), ["said </think>  then"]) == ("", "said then")


def test_say_trimmed_holds_trailing_whitespace_until_more_text() -> None:
    parser = _Think(thinking=True)
    parser.feed("a  ")
    assert parser._ws == "  "
    events = parser.feed(" b")
    assert [e.text for e in events if isinstance(e, ReasoningAppended)] == ["   b"]
    assert parser._state == REASONING


def test_read_name_moves_text_up_to_the_stop_character() -> None:
    parser = _Think()
    parser._state = TEXT
    parser._buf = "get_wea"
    assert parser._read_name(re.compile(r"[>\n]")) is None
    assert (parser._name, parser._pending, parser._buf) == ("get_wea", "get_wea", "")
    parser._buf = "ther>rest"
    assert parser._read_name(re.compile(r"[>\n]")) == ">rest"
    assert (parser._name, parser._pending, parser._buf) == ("get_weather", "get_weather", ">rest")
