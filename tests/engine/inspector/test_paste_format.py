"""Paste detection (engine/inspector/paste_format.py): every parser tries the text, complete calls win.

The corpus is the shipped fixture library: one single-call and one parallel generation per format,
each recorded in its own format; detection must give every one of them back its format.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from callscope.engine.inspector.paste_format import Reading, detect_format, rank_formats, read_as
from callscope.engine.recordings.replay import load_analyses
from tests.support.paths import ROOT

FORMAT_FIXTURES = sorted((ROOT / "fixtures" / "formats").glob("*.jsonl"))
HERMES = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes/todo.txt"}}\n</tool_call>'
)


def _generation(path: Path) -> tuple[str, str, bool]:
    analysis = load_analyses(path)[0]
    return analysis.text_until(analysis.last_step), analysis.source.format, bool(analysis.source.extra.get("thinking"))


def test_the_library_covers_every_format_it_should():
    assert len(FORMAT_FIXTURES) >= 48


@pytest.mark.parametrize("path", FORMAT_FIXTURES, ids=lambda p: p.stem)
def test_every_formats_own_generation_is_detected_as_that_format(path):
    text, format_id, thinking = _generation(path)
    detection = detect_format(text, thinking=thinking)
    assert detection.format_id == format_id, detection.reason
    assert detection.reason.startswith(f"{format_id} finds ")


def test_the_reason_names_the_runner_up_and_why_it_lost():
    detection = detect_format(HERMES)
    assert detection.format_id == "hermes"
    # llama3_json finds the same two JSON calls but reads the <tool_call> tags as content
    assert detection.reason.startswith("hermes finds 2 complete calls, streamed cleanly; next best llama3_json: ")
    assert detection.reason.endswith("2 complete calls, streamed cleanly, but leaves 49 more characters as content")
    best = detection.ranking[0]
    assert best.complete == 2 and best.clean and best.leftover == 0


def test_an_unfinished_call_loses_to_a_complete_one():
    cut = HERMES[: HERMES.index('"notes/')]  # the second call stops inside its arguments
    ranking = rank_formats(cut)
    assert ranking[0].format_id == "hermes" and ranking[0].complete == 1 and ranking[0].calls == 2
    assert "2 calls, 1 complete" in ranking[0].found()


def test_text_without_a_call_says_so():
    detection = detect_format("Just a plain answer: Paris is sunny today.")
    assert detection.reason.startswith("no parser finds a tool call in it; read as ")
    assert all(r.calls == 0 for r in detection.ranking)


def test_reasoning_is_read_when_the_prompt_opened_it():
    text = "The user wants the weather.\n</think>\n" + HERMES
    thinking = read_as(text, "hermes", None, thinking=True)
    plain = read_as(text, "hermes", None, thinking=False)
    assert thinking.complete == 2 and thinking.leftover == 0
    assert plain.leftover > 0  # without the opened block the reasoning is content
    assert detect_format(text, thinking=True).format_id == "hermes"


def test_a_parser_that_fails_ranks_last_with_why():
    failed = Reading("broken", error="ValueError: boom")
    good = Reading("hermes", complete=0, calls=0, leftover=500, order=9)
    assert sorted([failed, good], key=Reading.key) == [good, failed]
    assert failed.found() == "its parser failed (ValueError: boom)"
    assert read_as("x", "no_such_format", None, False).error.startswith("UnknownFormat")
