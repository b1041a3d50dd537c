"""Template analysis and derived formats: any template that renders a tool call gets a parser that round-trips.

The templates are real files: every template callscope ships (``resources/templates/``, whatever the
format modules add), the test templates in ``tests/data/templates/`` (written in the style of published
ones) and one template per derived family written for these tests (``tests/data/templates/derived/``).
No weights are loaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from callscope.engine.formats import FORMAT_IDS, get_spec, make_parser
from callscope.engine.formats.derived import JSON, PREFIX, TAG_JSON, TAG_TAGGED, FormatDescription, register_derived
from callscope.engine.formats.derived.pattern import DONE, FAIL, MORE, Pattern
from callscope.engine.templates.analysis import analyze
from callscope.engine.templates.chat import load_template_file, probe_caps
from callscope.engine.templates.evidence import MARKER, NAME, spans
from callscope.engine.templates.format_choice import choose_format
from callscope.engine.templates.roundtrip import check_turns, round_trip
from tests.support.format_harness import check_stream
from tests.support.paths import ROOT

pytestmark = pytest.mark.usefixtures("forget_derived")
SHIPPED = sorted((ROOT / "resources" / "templates").glob("*.jinja"))
WRITTEN = sorted((ROOT / "tests" / "data" / "templates" / "derived").glob("*.jinja"))
STYLED = sorted(p for p in (ROOT / "tests" / "data" / "templates").glob("*.jinja") if p.name != "broken_syntax.jinja")
#: Test templates that render no assistant tool call (nothing to derive or round-trip).
NO_CALLS = {"chatml_no_tools.jinja", "raises.jinja"}

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
        },
    }
]
CALLS = [("get_weather", {"city": "Paris", "days": 3}), ("get_weather", {"city": 'Lyon "x" \u00e9', "days": 1})]




def choice_for(path: Path):
    template = load_template_file(path)
    return choose_format(template, probe_caps(template), analyse=True)


# ------------------------------------------------------------------ round trips


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_template_round_trips_through_the_parser_auto_picks(path):
    choice = choice_for(path)
    assert choice.trips, f"{path.name} renders no call turn"
    for trip in choice.trips:
        assert trip.ok, f"{path.name} with {choice.format_id}: {trip.problems}"
        assert [c["name"] for c in trip.calls] == [e["name"] for e in trip.expected]


@pytest.mark.parametrize("path", [p for p in STYLED if p.name not in NO_CALLS], ids=lambda p: p.name)
def test_every_test_template_that_renders_calls_round_trips(path):
    choice = choice_for(path)
    assert choice.trips and all(trip.ok for trip in choice.trips), [t.problems for t in choice.trips]


@pytest.mark.parametrize("path", WRITTEN, ids=lambda p: p.name)
def test_written_templates_of_every_family_get_a_derived_parser_that_round_trips(path):
    choice = choice_for(path)
    assert choice.derived and choice.format_id == f"{PREFIX}{path.stem}"
    assert "derived from the template" in choice.reason and "does not read" in choice.reason  # says which and why
    assert choice.trips and all(trip.ok for trip in choice.trips), [t.problems for t in choice.trips]
    assert choice.rejected and not all(t.ok for t in choice.rejected)


@pytest.mark.parametrize("name", sorted(NO_CALLS))
def test_a_template_without_calls_keeps_what_its_signs_say(name):
    choice = choice_for(ROOT / "tests" / "data" / "templates" / name)
    assert not choice.trips and not choice.derived
    assert "renders no tool call" in choice.reason


def test_a_wrong_sign_is_caught_by_the_round_trip():
    """A template with Hermes's <tool_call> whose calls are tagged (GLM-like) is not read by the Hermes parser."""
    source = (
        "{%- for m in messages -%}<|{{ m.role }}|>{{ m.content or '' }}"
        "{%- for c in m.tool_calls or [] -%}<tool_call>{{ c.function.name }}"
        "{%- for k, v in c.function.arguments.items() -%}<arg_key>{{ k }}</arg_key><arg_value>{{ v }}</arg_value>"
        "{%- endfor -%}</tool_call>{%- endfor -%}{%- endfor -%}"
        "{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}"
    )
    from callscope.engine.templates.chat import ChatTemplate, detect_format

    template = ChatTemplate("glm_like", source, "file")
    sign = detect_format(source)
    choice = choose_format(template, probe_caps(template))
    assert choice.trips and all(t.ok for t in choice.trips)
    if sign.format_id == "hermes":  # the sign alone would pick Hermes
        assert choice.format_id != "hermes"
    assert choice.format_id == sign.format_id or choice.derived


def test_round_trips_feed_byte_by_byte_and_judge_what_streamed():
    template = load_template_file(WRITTEN[0])
    (turn,) = check_turns(template.renderer())[:1]
    analysis = analyze(template.renderer(), "json_array")
    spec = register_derived(analysis.description)
    good = round_trip(turn, spec.id)
    assert good.ok and good.generation.startswith("<|calls|>[")
    # the same turn through a parser of another syntax fails, and says why
    bad = round_trip(turn, "hermes")
    assert not bad.ok and any("calls read back" in p for p in bad.problems)


# ------------------------------------------------------------------ what the analysis learns


def test_json_array_template_description():
    a = analyze(load_template_file(WRITTEN[0]).renderer(), "json_array")
    d = a.description
    assert d.family == JSON and d.array and d.parallel
    assert (d.section_start, d.section_end, d.name_key, d.arguments_key) == ("<|calls|>", "<|/calls|>", "tool", "args")
    assert (d.reasoning_start, d.reasoning_end, d.opens_reasoning, d.end_of_turn) == ("<reflect>", "</reflect>", False, "<|end|>")
    assert json.loads(json.dumps(d.to_json())) == d.to_json() and FormatDescription.from_json(d.to_json()) == d


def test_name_as_key_template_description():
    d = analyze(load_template_file(WRITTEN[1]).renderer(), "json_name_key").description
    assert d.family == JSON and d.name_key == "" and not d.array
    assert d.opener() == "##CALL"


def test_tag_json_template_description_has_index_and_id_placeholders():
    d = analyze(load_template_file(WRITTEN[2]).renderer(), "tag_json").description
    assert d.family == TAG_JSON
    assert (d.section_start, d.section_end, d.call_start) == ("<<calls>>", "<</calls>>", "<<invoke ")
    assert d.name_suffix == " #{index} id={id}>> " and d.call_end == " <</invoke>>"


def test_tag_tagged_template_description_with_typed_values_and_open_reasoning():
    a = analyze(load_template_file(WRITTEN[3]).renderer(), "tag_tagged")
    d = a.description
    assert d.family == TAG_TAGGED
    assert d.call_start == '<fn name="' and d.name_suffix == '">\n'
    assert (d.key_prefix, d.key_suffix, d.key_suffix_json, d.value_end) == (
        '<arg key="', '" kind="text">', '" kind="json">', "</arg>"
    )
    assert (d.reasoning_start, d.reasoning_end) == ("<thought>", "</thought>")
    assert a.framing.opens_reasoning and a.framing.opens_reasoning_no_thinking is False


def test_evidence_marks_the_markers_and_names_of_the_rendered_call():
    a = analyze(load_template_file(WRITTEN[2]).renderer(), "tag_json")
    kinds = {(s.kind, s.text) for s in spans(a.generation, a.description)}
    assert (MARKER, "<<calls>>") in kinds and (MARKER, "<</invoke>>") in kinds and (NAME, "zq_first_fn") in kinds


def test_analysis_explains_a_template_it_cannot_describe():
    source = (
        "{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}{%- for c in m.tool_calls or [] -%}"
        "CALL {{ c.function.name }}({% for k, v in c.function.arguments.items() %}{{ k }}={{ v }} {% endfor %})"
        "{%- endfor -%}</{{ m.role }}>\n{%- endfor -%}{%- if add_generation_prompt -%}<assistant>{%- endif -%}"
    )
    from callscope.engine.templates.chat import ChatTemplate

    a = analyze(ChatTemplate("pythonish", source, "file").renderer(), "pythonish")
    assert a.description is None and a.notes and a.generation.startswith("CALL zq_first_fn(")


# ------------------------------------------------------------------ derived parsers keep the rules

FAMILY_DESCRIPTIONS = {
    "tagged_json": FormatDescription(JSON, "t", call_start="<tool_call>\n", call_end="\n</tool_call>", call_separator="\n"),
    "array": FormatDescription(JSON, "t", section_start="[CALLS]", array=True, call_separator=", "),
    "wrapped": FormatDescription(JSON, "t", section_start="<calls>", section_end="</calls>", array=True,
                                 call_separator=",", wrapper_key="function"),
    "name_key": FormatDescription(JSON, "t", section_start="<|tools|>", section_end="<|/tools|>", array=True,
                                  call_separator=", ", name_key=""),
    "bare": FormatDescription(JSON, "t", arguments_key="parameters", call_separator="; "),
    "indexed": FormatDescription(TAG_JSON, "t", section_start="<|calls|>", section_end="<|/calls|>",
                                 call_start="<|call|>fn.", name_suffix=":{index}<|args|>", call_end="<|/call|>"),
    "with_id": FormatDescription(TAG_JSON, "t", call_start="[CALL]", name_suffix="[ID]{id}[ARGS]"),
    "fenced": FormatDescription(TAG_JSON, "t", call_start="<｜c｜>function<｜sep｜>", name_suffix="\n```json\n",
                                call_end="\n```<｜/c｜>", call_separator="\n"),
    "tagged": FormatDescription(TAG_TAGGED, "t", call_start="<tool_call>\n<function=", name_suffix=">\n",
                                key_prefix="<parameter=", key_suffix=">", value_lead="\n", value_trail="\n",
                                value_end="</parameter>", argument_separator="\n",
                                call_end="\n</function>\n</tool_call>", call_separator="\n"),
    "attributes": FormatDescription(TAG_TAGGED, "t", section_start="<calls>\n", section_end="\n</calls>",
                                    call_start='<invoke name="', name_suffix='">\n', key_prefix='<p name="',
                                    key_suffix='" string="true">', key_suffix_json='" string="false">',
                                    value_end="</p>", argument_separator="\n", call_end="\n</invoke>",
                                    call_separator="\n", reasoning_start="<think>", reasoning_end="</think>"),
}


@pytest.mark.parametrize("shape", sorted(FAMILY_DESCRIPTIONS))
@pytest.mark.parametrize("step", [1, 3, 7])
def test_derived_parsers_keep_every_rule_the_dedicated_ones_keep(shape, step):
    """Incremental equals from scratch on every prefix, names only complete, arguments append-only, no marker leak."""
    spec = register_derived(FAMILY_DESCRIPTIONS[shape], f"{PREFIX}{shape}")
    text = spec.write(CALLS, "" if shape == "bare" else "Let me check.", "")
    pieces = [text[i : i + step] for i in range(0, len(text), step)]
    final = check_stream(spec.id, text, pieces, tools=TOOLS, markers=spec.markers.leak)
    assert [(c.name, json.loads(c.arguments)) for c in final.calls] == [(n, a) for n, a in CALLS]
    if shape == "with_id":
        assert [c.id for c in final.calls] == ["call00001", "call00002"]


@pytest.mark.parametrize("shape", ["tagged_json", "indexed", "tagged"])
def test_text_that_only_looks_like_a_call_is_content(shape):
    spec = register_derived(FAMILY_DESCRIPTIONS[shape], f"{PREFIX}{shape}")
    opener = FAMILY_DESCRIPTIONS[shape].opener()
    text = f"I would write {opener} here, then nothing."
    final = check_stream(spec.id, text, tools=TOOLS)
    assert final.content == text and not final.calls


def test_a_truncated_tagged_call_keeps_what_was_written():
    spec = register_derived(FAMILY_DESCRIPTIONS["tagged"], f"{PREFIX}tagged")
    text = spec.write(CALLS[:1], "", "")
    cut = text[: text.index("Paris") + 3]
    parser = make_parser(spec.id, TOOLS)
    parser.feed(cut)
    parser.finish()
    (call,) = parser.snapshot().calls
    assert call.name == "get_weather" and call.arguments == '{"city":"Par'


def test_derived_tagged_values_are_typed_as_the_dedicated_tagged_parsers_type_them():
    """Python literals, as models write them in tagged values, stream as JSON: declared or not, scalar or container."""
    spec = register_derived(FAMILY_DESCRIPTIONS["tagged"], f"{PREFIX}tagged")
    tools = [{"type": "function", "function": {"name": "configure", "parameters": {"type": "object", "properties": {
        "verbose": {"type": "boolean"}, "limits": {"type": "object"}, "tags": {"type": "array"},
        "note": {"type": "string"}}}}}]
    values = [("verbose", "True"), ("limits", "{'cpu': None, 'mem': (1, 2)}"), ("tags", "['a', \"b\"]"),
              ("note", "None"), ("extra", "{'k': False}"), ("other", "plain words")]
    body = "\n".join(f"<parameter={k}>\n{v}\n</parameter>" for k, v in values)
    text = f"<tool_call>\n<function=configure>\n{body}\n</function>\n</tool_call>"
    final = check_stream(spec.id, text, [text[i : i + 3] for i in range(0, len(text), 3)], tools=tools)
    (call,) = final.calls
    assert json.loads(call.arguments) == {"verbose": True, "limits": {"cpu": None, "mem": [1, 2]},
                                          "tags": ["a", "b"], "note": "None", "extra": {"k": False},
                                          "other": "plain words"}


def test_reasoning_first_and_a_prompt_that_opens_it():
    spec = register_derived(FAMILY_DESCRIPTIONS["attributes"], f"{PREFIX}attributes")
    text = spec.write(CALLS[:1], "", "Check the weather.")
    final = check_stream(spec.id, text, tools=TOOLS)
    assert final.reasoning == "Check the weather." and len(final.calls) == 1
    parser = make_parser(spec.id, TOOLS, thinking=True)
    parser.feed("Still thinking.</think>" + text[text.index("</think>") + len("</think>") :])
    parser.finish()
    assert parser.snapshot().reasoning == "Still thinking." and len(parser.snapshot().calls) == 1


def test_a_derived_spec_is_a_format_like_any_other():
    spec = register_derived(FAMILY_DESCRIPTIONS["indexed"], f"{PREFIX}indexed")
    assert get_spec(spec.id) is spec and spec.id in FORMAT_IDS
    assert "<|call|>fn." in spec.markers.leak and not spec.signs  # never takes over other templates' detection
    assert spec.envelopes and spec.thinking


def test_patterns_match_piece_by_piece():
    pattern = Pattern.compile(":{index} <|args|>")
    assert pattern.match(":1").status == MORE
    assert pattern.match(":12 <|ar").status == MORE
    found = pattern.match(":12\n\n<|args|>{")
    assert found.status == DONE and found.end == len(":12\n\n<|args|>")
    assert pattern.match(":x").status == FAIL
    with_id = Pattern.compile("[ID]{id}[ARGS]").match("[ID]abc123XYZ[ARGS]{")
    assert with_id.status == DONE and with_id.call_id == "abc123XYZ"
