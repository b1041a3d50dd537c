"""The renderer handles what real templates do, and tools are taken in every shape people pass.

Templates here are small inline ones, each doing one thing a published template does: mutating
its own lists (Kimi), piping a generator into ``tojson``, writing ``tool.description`` unchecked,
reading the legacy ``functions`` variable, checking Mistral's 9-character ids.
"""

from __future__ import annotations

import copy
import json

import pytest

from callscope.cli import main
from callscope.engine.capture.request import build_body, parse_body
from callscope.engine.core.errors import TemplateError
from callscope.engine.core.tools import ToolsError, normalize_tools, parse_tools, validate_tools
from callscope.engine.recordings.trace import Trace, TraceHeader, read_trace, write_trace
from callscope.engine.templates.chat import ChatTemplate, tools_for_template

OPENAI = [{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {}}}]
BARE = [{"name": "get_weather", "description": "Weather.", "parameters": {}}]
USER = [{"role": "user", "content": "Hi"}]


def render(source: str, messages=USER, tools=OPENAI, **extra) -> str:
    return ChatTemplate("inline", source, "file").render(messages, tools, **extra)


# ------------------------------------------------------------------ the renderer


def test_templates_may_mutate_their_own_lists_and_dicts_but_not_the_callers_data():
    source = (
        "{%- set names = [] -%}{%- for t in tools -%}{%- set _ = names.append(t.function.name) -%}{%- endfor -%}"
        "{%- set _ = messages[0].update({'content': 'changed'}) -%}{%- set _ = tools.pop() -%}"
        "{{ names | join(',') }}|{{ messages[0].content }}|{{ tools | length }}"
    )
    messages, tools = copy.deepcopy(USER), copy.deepcopy(OPENAI)
    assert render(source, messages, tools) == "get_weather|changed|0"
    assert messages == USER and tools == OPENAI  # each render works on its own copy


def test_the_sandbox_still_refuses_unsafe_attributes_and_files():
    with pytest.raises(TemplateError, match="unsafe|SecurityError"):
        render("{{ ''.__class__.__mro__ }}")
    with pytest.raises(TemplateError):
        render("{% include '/etc/passwd' %}")


def test_a_generator_goes_through_tojson():
    assert json.loads(render("{{ tools | map(attribute='function') | map(attribute='name') | tojson }}")) == ["get_weather"]
    assert json.loads(render("{{ {'fns': tools | map(attribute='function') | list} | tojson }}"))["fns"][0]["name"] == "get_weather"


def test_tools_without_description_or_parameters_render():
    tools = [{"type": "function", "function": {"name": "ping"}}]
    assert render("{% for t in tools %}{{ t.function.name + ': ' + t.function.description }}{% endfor %}", tools=tools) == "ping: "
    assert tools == [{"type": "function", "function": {"name": "ping"}}]
    assert tools_for_template(tools)[0]["function"]["parameters"] == {"type": "object", "properties": {}}


def test_a_template_that_reads_functions_gets_them():
    source = "{% for f in functions %}{{ f.name }}={{ f.description }};{% endfor %}"
    assert render(source) == "get_weather=Weather.;"
    assert render(source, tools=BARE) == "get_weather=Weather.;"
    # a template reading both names gets tools only, as given
    assert render("{{ tools | length }}{{ functions is defined }}") == "1False"


def test_mistral_style_id_checks_pass_with_the_analysis_ids():
    from callscope.engine.templates.renders import IDS
    from callscope.engine.templates.roundtrip import CALL_IDS

    assert all(len(i) == 9 and i.isalnum() for i in (*IDS, *CALL_IDS))


# ------------------------------------------------------------------ tools in every shape


@pytest.mark.parametrize(
    "doc",
    [OPENAI, BARE, BARE[0], OPENAI[0], {"tools": OPENAI}, {"functions": BARE}, {"tools": BARE}],
    ids=["openai", "bare", "one-bare", "one-openai", "tools-key", "functions-key", "tools-key-bare"],
)
def test_every_tools_shape_normalises_to_the_openai_array(doc):
    assert validate_tools(doc) == OPENAI
    assert normalize_tools(doc) == OPENAI


@pytest.mark.parametrize(
    "doc, message",
    [
        ([{"name": ""}], "$[0].name: expected a non-empty string"),
        ({"name": "a", "parameters": 3}, "$.parameters: expected a JSON schema object"),
        ([{"type": "function", "function": {"name": "a", "parameters": {"properties": {"x": 1}}}}],
         "$[0].function.parameters.properties.x: expected a schema object"),
        ([{"name": "a"}, {"type": "function", "function": {"name": "a"}}], "$[1].function.name: duplicate tool name"),
        ({"functions": 3}, "$.functions: expected an array of tools"),
    ],
)
def test_tools_errors_name_the_path_in_the_shape_given(doc, message):
    with pytest.raises(ToolsError, match=message.replace("$", r"\$").replace("[", r"\[").replace("]", r"\]")):
        validate_tools(doc)


def test_cli_tools_file_takes_bare_functions(tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(BARE), encoding="utf-8")
    text = tmp_path / "gen.txt"
    text.write_text('<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>', encoding="utf-8")
    assert main(["replay-text", str(text), "--format", "hermes", "--tools", str(tools), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["calls"][0]["name"] == "get_weather"
    assert parse_tools(json.dumps(BARE[0])) == OPENAI  # the GUI's tools editor parses the same way


def test_capture_requests_send_the_openai_array(tmp_path):
    body = parse_body(json.dumps({"messages": USER, "tools": BARE}))
    assert body["tools"] == OPENAI
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps({"functions": BARE}), encoding="utf-8")
    assert build_body(prompt="Hi", tools_file=str(tools))["tools"] == OPENAI


def test_trace_headers_keep_tools_as_the_openai_array(tmp_path):
    path = tmp_path / "t.jsonl"
    write_trace(path, Trace(TraceHeader(source="text", format="hermes", tools=BARE)))
    assert read_trace(path).header.tools == OPENAI
