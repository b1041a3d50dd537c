"""``--thinking auto``: every parser with reasoning starts undecided and lets the text decide.

A reasoning closer first: thinking was on (what came before it is reasoning). A tool-call
opener, any other markup of the format, or the reasoning opener first: it was off. The end
with neither: content. Until then nothing of the text reaches the parse (it is held, as a
half-typed marker is), and the decision names the characters that made it. Random splits
keep every streaming rule, incremental equal to from-scratch on every prefix included.
"""

from __future__ import annotations

import json

import pytest

from callscope.cli import main
from callscope.engine.formats import BUILTIN, get_spec, make_parser, reasoning_tags, resolve_thinking, supports_thinking
from tests.support.format_harness import check_stream, split_property
from tests.support.paths import ROOT

WEATHER = [("get_weather", {"city": "Paris"})]
REASONING = "The user wants Paris."
THINKING_FORMATS = [f for f in BUILTIN if supports_thinking(f)]


def _on(format_id: str) -> str:
    """A generation made with thinking on: reasoning, the format's closer, then a call."""
    closer = reasoning_tags(format_id)[1]
    return REASONING + closer + get_spec(format_id).write(WEATHER, "", "")


def _off(format_id: str) -> str:
    """The same with thinking off: the call straight away."""
    return get_spec(format_id).write(WEATHER, "", "")


def test_mistral_and_every_format_with_reasoning_can_start_undecided():
    assert {"hermes", "qwen3_coder", "deepseek_v31", "deepseek_v32", "nemotron_v2", "mistral"} <= set(THINKING_FORMATS)


@pytest.mark.parametrize("format_id", THINKING_FORMATS)
def test_a_reasoning_closer_first_means_thinking_was_on(format_id):
    final = check_stream(format_id, _on(format_id), thinking="auto")
    assert [c.name for c in final.calls] == ["get_weather"] and final.reasoning == REASONING
    assert REASONING not in final.content


@pytest.mark.parametrize("format_id", THINKING_FORMATS)
def test_a_call_first_means_thinking_was_off(format_id):
    final = check_stream(format_id, _off(format_id), thinking="auto")
    assert [c.name for c in final.calls] == ["get_weather"] and final.reasoning == ""


def test_the_decision_says_what_and_where_and_nothing_is_parsed_before_it():
    parser = make_parser("qwen3_coder", None, "auto")
    assert parser.feed("The user wants Paris.\n") == [] and parser.undecided and parser.held
    parser.feed("</think>\n\n<tool_call>")
    decision = parser.decision
    assert (decision.inferred, decision.marker, decision.start, decision.end) == ("on", "</think>", 22, 30)
    assert parser.snapshot().reasoning == "The user wants Paris." and not parser.held


def test_ending_undecided_is_content():
    parser = make_parser("hermes", None, "auto")
    parser.feed("Paris is sunny.")
    assert parser.snapshot().content == ""  # held while it cannot tell
    parser.finish()
    assert parser.snapshot().content == "Paris is sunny." and parser.decision.inferred == "off"
    assert parser.decision.marker == ""


def test_auto_stays_undecided_only_when_the_prompt_may_open_reasoning():
    assert resolve_thinking("auto", True) == "auto" and resolve_thinking("auto", False) is False
    assert resolve_thinking("on", False) is True and resolve_thinking("off", True) is False
    assert resolve_thinking(True, False) is True  # the old flag


def test_replay_text_reports_what_was_inferred(tmp_path, capsys):
    text = tmp_path / "on.txt"
    text.write_text(_on("qwen3_coder"), encoding="utf-8")
    template = ROOT / "tests" / "data" / "templates" / "qwen3_5.jinja"
    assert main(["replay-text", str(text), "--format", "auto", "--template", str(template), "--json"]) == 0
    source = json.loads(capsys.readouterr().out)["runs"][0]["source"]
    assert source["thinking"] == "auto"
    inferred = source["thinking_inferred"]
    assert (inferred["inferred"], inferred["marker"], inferred["start"]) == ("on", "</think>", len(REASONING))
    assert main(["replay-text", str(text), "--format", "auto", "--template", str(template)]) == 0
    out = capsys.readouterr().out
    assert "thinking: auto, inferred on from '</think>' at characters 21-29" in out
    # told: off reads the same text as content; without a template auto is off
    assert main(["replay-text", str(text), "--format", "qwen3_coder", "--thinking", "off", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert "thinking_inferred" not in run["source"] and run["calls"][0]["name"] == "get_weather"


for _format in ("hermes", "qwen3_coder", "deepseek_v31", "mistral", "gemma4", "command_r7b"):
    globals()[f"test_{_format}_random_splits_undecided"] = split_property(
        _format, [_on(_format), _off(_format), "No tools needed."], None, 30, thinking="auto"
    )
