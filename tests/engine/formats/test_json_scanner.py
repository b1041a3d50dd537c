"""The resumable JSON scanner and string decoder behind the JSON wire formats.

Every test feeds text in pieces and checks what the scanner says about the
*whole* text: event offsets are turned into absolute positions, so a split in
the middle of an escape, a key or a number must give the same answer as one
piece.
"""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callscope.engine.formats._kit.json_scanner import (
    ERROR,
    VALUE_END,
    VALUE_START,
    JsonScanner,
    JsonStringDecoder,
    decode_string_body,
)


def scan(pieces: list[str], **kwargs) -> tuple[JsonScanner, list[tuple], int]:
    """Feed ``pieces``; return the scanner, events with absolute positions, and the absolute stop."""
    scanner = JsonScanner(**kwargs)
    events: list[tuple] = []
    offset = 0
    stop = 0
    for piece in pieces:
        got, at = scanner.feed(piece)
        for e in got:
            events.append((e[0], e[1], e[2] + offset, *e[3:]))
        stop = offset + at
        offset += len(piece)
        if scanner.done or scanner.failed:
            break
    return scanner, events, stop


def spans(text: str, events: list[tuple], depth: int) -> list[tuple[object, str]]:
    """(slot, raw text) of every complete value reported at ``depth``."""
    out = []
    open_at: tuple[object, int] | None = None
    for e in events:
        if e[1] != depth:
            continue
        if e[0] == VALUE_START:
            open_at = (e[4], e[2])
        elif e[0] == VALUE_END and open_at is not None:
            out.append((open_at[0], text[open_at[1] : e[2]]))
            open_at = None
    return out


def every_split(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


CALL = (
    '  {"name": "get_weather", "arguments": {"city": "Par\\"is", "n": [1, 2.5e3, {"k": "}]"}], "ok": true}, "id": "x"}'
)


@pytest.mark.parametrize("size", [1, 2, 3, 7, len(CALL)])
def test_members_of_a_call_object_in_any_split(size):
    scanner, events, stop = scan(every_split(CALL, size))
    assert scanner.done and stop == len(CALL)
    assert spans(CALL, events, 1) == [
        ("name", '"get_weather"'),
        ("arguments", '{"city": "Par\\"is", "n": [1, 2.5e3, {"k": "}]"}], "ok": true}'),
        ("id", '"x"'),
    ]
    # the top-level value starts after the leading whitespace and spans the object
    assert spans(CALL, events, 0) == [(None, CALL.strip())]


def test_nothing_inside_a_skipped_container_is_reported():
    _, events, _ = scan([CALL], report_depth=1)
    assert max(e[1] for e in events) == 1


def test_deeper_report_depth_reports_nested_members():
    _, events, _ = scan([CALL], report_depth=2)
    assert ("city", '"Par\\"is"') in spans(CALL, events, 2)


def test_descend_predicate_skips_declined_containers():
    text = '{"skip": {"a": 1}, "keep": {"b": 2}}'
    _, events, _ = scan([text], report_depth=2, descend=lambda depth, slot: depth == 0 or slot == "keep")
    assert spans(text, events, 2) == [("b", "2")]
    assert [s for s, _ in spans(text, events, 1)] == ["skip", "keep"]


def test_array_elements_carry_their_index():
    text = '[{"a": 1}, "x", null ,[2]]'
    _, events, _ = scan(every_split(text, 2), report_depth=1)
    assert spans(text, events, 1) == [(0, '{"a": 1}'), (1, '"x"'), (2, "null"), (3, "[2]")]


def test_stops_right_after_the_top_level_value():
    text = '{"a": [1, {"b": "c"}]}</tool_call> trailing'
    scanner, _, stop = scan(every_split(text, 3))
    assert scanner.done
    assert text[stop:] == "</tool_call> trailing"
    # feeding more after done does nothing
    assert scanner.feed("{}") == ([], 0)


def test_escaped_quotes_and_backslashes_split_anywhere():
    text = '{"k\\"ey": "a\\\\", "b": "\\\\\\"}"}'
    assert json.loads(text) == {'k"ey': "a\\", "b": '\\"}'}
    for size in (1, 2, 3):
        scanner, events, stop = scan(every_split(text, size))
        assert scanner.done and stop == len(text)
        assert spans(text, events, 1) == [('k"ey', '"a\\\\"'), ("b", '"\\\\\\"}"')]


def test_unicode_escapes_and_multibyte_keys():
    text = '{"\\u00e9t\\u00e9": "\\ud83d\\ude00", "城市": "巴黎 😀"}'
    scanner, events, _ = scan(every_split(text, 1))
    assert scanner.done
    assert [slot for slot, _ in spans(text, events, 1)] == ["été", "城市"]


def test_key_at_reports_the_member_being_read():
    scanner = JsonScanner(report_depth=3)
    scanner.feed('{"outer": {"inner": [1, ')
    assert scanner.key_at(1) == "outer"
    assert scanner.key_at(2) == "inner"
    assert scanner.key_at(3) == 1
    assert scanner.depth == 3


def test_top_level_scalar_and_string():
    scanner, events, stop = scan(["  42 ", "rest"])
    assert scanner.done and stop == 4
    assert spans("  42 rest", events, 0) == [(None, "42")]
    scanner, events, stop = scan(['"a', 'b"x'])
    assert scanner.done and stop == 4


@pytest.mark.parametrize(
    "text, where",
    [
        ("not json", None),  # a scalar-looking start is reported, the caller decides
        ('{"a" 1}', 5),  # missing colon
        ('{"a": 1 "b": 2}', 8),  # missing comma
        ('{"a": <', 6),
        ('{"a": {"b": 1</tool_call>', 13),  # a stray "<" at a skipped level too
        ("{1: 2}", 1),  # keys are strings
        ('{"a": 1]', 7),  # wrong closer at a reported level
    ],
)
def test_syntax_errors_are_reported_where_they_happen(text, where):
    scanner, events, stop = scan(every_split(text, 2))
    if where is None:
        assert events[0][:4] == (VALUE_START, 0, 0, "n")
        return
    assert scanner.failed
    assert events[-1] == (ERROR, events[-1][1], where)
    assert stop == where


def test_lenient_inside_skipped_levels():
    # a wrong closer deep inside closes the innermost container, no error
    text = '{"a": {"b": [1}, "c": 2}'
    scanner, _events, _ = scan([text])
    assert not scanner.failed
    assert scanner.depth == 1  # the outer object is still open


def test_partial_prefix_is_neither_done_nor_failed():
    scanner, events, _ = scan(['{"name": "f", "arguments": {"a": "x\\'])
    assert not scanner.done and not scanner.failed
    assert scanner.in_string and scanner.escape
    assert spans('{"name": "f"', events, 1) == [("name", '"f"')]


# ------------------------------------------------------------ string decoder


def decode_in_pieces(raw: str, size: int) -> str:
    decoder = JsonStringDecoder()
    out = [decoder.feed(raw[i : i + size]) for i in range(0, len(raw), size)]
    out.append(decoder.finish())
    return "".join(out)


@pytest.mark.parametrize(
    "value",
    ["plain", 'quote " backslash \\ slash /', "tab\tnewline\ncr\r", "é 城市 😀 \u2028", "\x00\x1f", '{"a": [1]}'],
)
@pytest.mark.parametrize("ensure_ascii", [True, False])
@pytest.mark.parametrize("size", [1, 2, 5])
def test_decoder_matches_json_in_any_split(value, ensure_ascii, size):
    raw = json.dumps(value, ensure_ascii=ensure_ascii)[1:-1]
    assert decode_in_pieces(raw, size) == value


def test_decoder_holds_back_a_split_escape_and_a_lone_high_surrogate():
    decoder = JsonStringDecoder()
    assert decoder.feed("ab\\u00") == "ab"
    assert decoder.feed("e9") == "é"
    assert decoder.feed("\\ud83d") == ""  # waits for the low half
    assert decoder.feed("\\ude00!") == "😀!"
    assert decoder.feed("\\") == ""
    assert decoder.feed("n") == "\n"


def test_decoder_is_lenient_with_invalid_escapes_and_raw_control_characters():
    assert decode_string_body("a\\qb") == "a\\qb"
    assert decode_string_body("line\nbreak\\t") == "line\nbreak\t"
    assert decode_in_pieces("x\\u12zz y", 1) == "x\\u12zz y"
    assert decode_in_pieces("\\ud83d alone", 3) == "\ufffd alone"
    assert decode_in_pieces("end\\u00", 2) == "end\\u00"  # cut off: kept verbatim


# ------------------------------------------------------------ properties

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(
    value=st.dictionaries(st.text(max_size=6), json_values, max_size=5),
    ensure_ascii=st.booleans(),
    indent=st.sampled_from([None, 0, 2]),
    cuts=st.lists(st.integers(min_value=1, max_value=400), max_size=12),
)
def test_members_of_any_object_in_any_split(value, ensure_ascii, indent, cuts):
    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent)
    bounds = [0] + sorted({c for c in cuts if c < len(text)}) + [len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    scanner, events, stop = scan(pieces)
    assert scanner.done and stop == len(text)
    members = spans(text, events, 1)
    assert [k for k, _ in members] == list(value)
    assert [json.loads(raw) for _, raw in members] == list(value.values())


@settings(max_examples=60, deadline=None)
@given(value=st.text(), ensure_ascii=st.booleans(), size=st.integers(min_value=1, max_value=7))
def test_decoder_property(value, ensure_ascii, size):
    raw = json.dumps(value, ensure_ascii=ensure_ascii)[1:-1]
    assert decode_in_pieces(raw, size) == value
