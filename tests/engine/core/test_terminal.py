"""callscope.engine.core.terminal: one line, every control character visible, nothing else changed."""

from __future__ import annotations

import json

from callscope.engine.core.terminal import terminal_json, terminal_line, terminal_lines


def test_controls_become_visible_escapes_and_the_rest_is_kept():
    assert terminal_line("plain · naïve — 東京") == "plain · naïve — 東京"
    assert terminal_line("a\nb\rc\td") == "a\\nb\\rc\\td"
    assert terminal_line("\x1b]0;title\x07\x1b[2J") == "\\x1b]0;title\\x07\\x1b[2J"
    assert terminal_line("\x7f\x85\x9b") == "\\x7f\\x85\\x9b"  # DEL, NEL, the 8-bit CSI
    assert terminal_line("\u2028\u2029\u202eabc\u2066") == "\\u2028\\u2029\\u202eabc\\u2066"


def test_a_report_keeps_its_own_newlines():
    assert terminal_lines("one\x1b[31m\ntwo") == "one\\x1b[31m\ntwo"


def test_a_json_line_means_the_same_and_carries_no_raw_control():
    value = {"model": "evil\n\x1b[2J\x9b\u2028\u202e東京"}
    line = terminal_json(json.dumps(value, ensure_ascii=False))
    assert json.loads(line) == value
    assert not any(c in line for c in "\n\x1b\x9b\u2028\u202e") and "東京" in line
