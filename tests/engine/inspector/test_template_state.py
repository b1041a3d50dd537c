"""What the Template pane shows, computed without a window (engine/inspector/template_state.py).

Real templates: a shipped one with a dedicated parser, the test templates of the derived families,
one whose calls nothing reads, one without tools, and the packaged GGUF's own template (no weights).
"""

from __future__ import annotations

import pytest

from callscope.engine.core.gguf import default_model_path
from callscope.engine.formats import FORMAT_IDS
from callscope.engine.formats.derived import PREFIX
from callscope.engine.inspector.template_state import TemplateStateError, describe, template_state
from callscope.engine.templates.evidence import KEY, MARKER, NAME
from tests.support.paths import ROOT

pytestmark = pytest.mark.usefixtures("forget_derived")
DATA = ROOT / "tests" / "data" / "templates"
#: Python-style calls: no dedicated parser reads them and no syntax can be derived.
UNREADABLE = (
    "{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}{%- for c in m.tool_calls or [] -%}"
    "CALL {{ c.function.name }}({% for k, v in c.function.arguments.items() %}{{ k }}={{ v }} {% endfor %})"
    "{%- endfor -%}</{{ m.role }}>\n{%- endfor -%}{%- if add_generation_prompt -%}<assistant>{%- endif -%}"
)


def test_a_dedicated_format_shows_its_markers_and_the_parsers_reading_of_the_round_trip():
    state = template_state(str(ROOT / "resources" / "templates" / "glm45.jinja"))
    assert state.format_id == "glm45" and not state.derived and state.parser_kind == "dedicated parser"
    assert "its parser reads the template's rendered calls back" in state.reason
    assert state.check_ok is True and state.check_line.startswith("round trip OK: glm45 reads every rendered call")
    kinds = {(s.kind, s.text) for s in state.evidence}
    assert (MARKER, "<tool_call>") in kinds and (NAME, "zq_first_fn") in kinds and (KEY, "zq_key_alpha") in kinds
    trip = state.trips[0]
    assert trip.ok and trip.summary == "OK: glm45 read 2 of 2 calls back" and trip.label == "default"
    runs = [(r.kind, r.call, r.text) for r in trip.read_back]
    assert "".join(r.text for r in trip.read_back).startswith("<tool_call>get_weather\n<arg_key>city")
    # the parser's own reading: markup around, each call's argument text in its own call
    assert runs[0][0] == "call" and runs[0][2].startswith("<tool_call>get_weather")
    assert any(kind == "arguments" and call == 0 and "Paris" in text for kind, call, text in runs)
    assert any(kind == "arguments" and call == 1 and "notes/todo.txt" in text for kind, call, text in runs)
    assert not any(kind == "content" and text.strip() for kind, _, text in runs)  # no marker read as content
    assert state.tools[0]["function"]["name"] == "get_weather" and "Paris" in state.prompt


def test_a_derived_format_says_so_and_describes_the_syntax_it_learnt():
    state = template_state(str(DATA / "derived" / "tag_tagged.jinja"))
    assert state.derived and state.format_id.startswith(PREFIX) and state.format_id in FORMAT_IDS
    assert state.parser_kind == "derived from the template" and "derived from the template instead" in state.reason
    d = state.description
    assert d.learnt and d.title == "tag + tagged arguments"
    assert ("key suffix", repr('" kind="text">')) in d.fields and ("call start", repr('<fn name="')) in d.fields
    assert d.reasoning.startswith("<thought> ... </thought> (the generation prompt opens it")
    # the prompt opens reasoning: a pasted generation is read undecided until its text shows the state
    assert state.thinking == "auto" and state.may_open_reasoning and state.thinking_line.startswith("thinking: auto")
    assert state.check_ok and [t.label for t in state.trips] == ["default", "enable_thinking=false"]
    first = state.trips[0].read_back  # the model writes the close of the block the prompt opened: markup
    assert first[0].kind == "call" and first[0].text.startswith('</thought>\n<fn name="get_weather">')
    assert any(r.kind == "arguments" and r.call == 0 and r.text == "Paris" for r in first)


def test_a_template_whose_calls_nothing_reads_fails_the_check_and_says_why(tmp_path):
    path = tmp_path / "pythonish.jinja"
    path.write_text(UNREADABLE, encoding="utf-8")
    state = template_state(str(path))
    assert state.check_ok is False and state.check_line.startswith("round trip FAILED (default): ")
    assert "no format could be derived" in state.reason
    assert not state.description.learnt and state.description.title == "none" and state.description.notes
    assert not state.trips[0].ok and state.trips[0].problems


def test_a_template_without_tools_has_nothing_to_check():
    state = template_state(str(DATA / "chatml_no_tools.jinja"))
    assert state.check_ok is None and state.trips == []
    assert state.check_line == "nothing to round-trip: the template renders no tool call"


@pytest.mark.model
def test_a_ggufs_own_template_is_read_without_weights():
    state = template_state(default_model_path())
    assert state.template.origin == "model" and state.template.name.startswith("gguf:tokenizer.chat_template of ")
    assert state.check_ok is None  # SmolLM2's ChatML template renders no tool call


@pytest.mark.parametrize("name, words", [("missing.jinja", "missing.jinja"), ("broken_syntax.jinja", "syntax error")])
def test_errors_are_one_line(name, words):
    with pytest.raises(TemplateStateError) as raised:
        template_state(str(DATA / name))
    assert words in str(raised.value) and "\n" not in str(raised.value)


def test_describe_without_an_analysis_learns_nothing():
    assert not describe(None).learnt and describe(None).title == "none"
