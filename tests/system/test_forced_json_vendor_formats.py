"""The JSON families (group 2) end to end: forced calls on the packaged model, grammars, template detection.

``callscope run --format X`` must make SmolLM2-135M write a genuine call in X's wire syntax that
parses and reconstructs byte for byte; the grammar spells the syntax; template detection places
each format where llama.cpp's ``common_chat_templates_apply_jinja`` tries it.
"""

from __future__ import annotations

import json

import pytest

from callscope.cli import main
from callscope.engine.core.errors import GrammarError
from callscope.engine.core.tools import load_tools
from callscope.engine.decode.grammar import build_tool_grammar
from callscope.engine.templates.chat import builtin_template, detect_format, template_signs
from tests.support.paths import ROOT

WEATHER = ROOT / "resources" / "tools" / "weather.json"
GROUP2 = (
    "granite",
    "nemotron_v2",
    "apriel",
    "apertus",
    "command_r7b",
    "gigachat3",
    "functionary_v3_2",
    "solar_open",
    "pythonic",
)


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.model
@pytest.mark.parametrize("format_id", GROUP2)
def test_run_forces_a_call_that_parses_and_reconstructs(capsys, format_id):
    argv = ["run", "--format", format_id, "--tools", WEATHER, "--prompt", "Weather in Paris?"]
    code, out, err = cli(capsys, *argv, "--max-calls", "1", "--max-tokens", "128", "--json", "--chunks")
    assert code == 0, err
    run = json.loads(out)["runs"][0]
    assert run["source"]["format"] == format_id and run["source"]["template"].startswith(f"built-in {format_id}")
    assert run["finish_reason"] == "tool_calls", run
    assert run["violations"] == []
    (call,) = run["calls"]
    assert call["name"] == "get_weather" and call["reconstructs"]
    deltas = [
        d for c in run["chunks"] for choice in c["chunk"]["choices"] for d in choice["delta"].get("tool_calls", [])
    ]
    assert sum(1 for d in deltas if d["function"].get("arguments")) > 1  # streamed as written, not in one piece


# ------------------------------------------------------------ grammars

SPELLING = {
    "granite": '"<|tool_call|>["',
    "nemotron_v2": '"]</TOOLCALL>"',
    "apriel": '"<tool_calls>["',
    "apertus": '"{\\"get_weather\\": "',
    "command_r7b": '\\"tool_name\\": \\"get_weather\\", \\"parameters\\": ',
    "gigachat3": "function call<|role_sep|>",
    "functionary_v3_2": '">>>get_weather\\n"',
    "solar_open": "<|tool_call:name|>get_weather<|tool_call:args|>",
    "pythonic": '"get_weather("',
}


@pytest.mark.llama
@pytest.mark.parametrize("format_id", GROUP2)
def test_grammars_spell_the_wire_syntax(format_id):
    grammar = build_tool_grammar(format_id, load_tools(WEATHER), "get_weather", max_calls=2, content_chars=20)
    assert SPELLING[format_id] in grammar.gbnf, grammar.gbnf
    assert ('"\\"celsius\\""' in grammar.gbnf) or ('"celsius"' in grammar.gbnf)
    if format_id == "gigachat3":
        assert grammar.max_calls == 1  # one call per turn


@pytest.mark.llama
def test_pythonic_grammar_writes_python_literals():
    tools = [
        {
            "type": "function",
            "function": {
                "name": "set_flag",
                "parameters": {
                    "type": "object",
                    "properties": {"on": {"type": "boolean"}, "note": {"type": ["string", "null"]}},
                    "required": ["on"],
                },
            },
        }
    ]
    gbnf = build_tool_grammar("pythonic", tools, "any").gbnf
    assert 'py-boolean ::= ("True" | "False") space' in gbnf and '"None"' in gbnf
    assert '"on=" ' in gbnf and '(", " "note="' in gbnf
    bad = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"a-b": {}}}}}]
    with pytest.raises(GrammarError, match="not a Python name"):
        build_tool_grammar("pythonic", bad, "any")


# ------------------------------------------------------------ template detection


def test_detection_places_the_formats_in_llamacpp_order():
    """llama.cpp tries Command R7B and Granite before the XML/Hermes handlers; Nemotron v2, Apertus, LFM2 and
    GigaChat after GPT-OSS; Functionary v3.2 before Llama 3.x; Solar Open after it, before Mistral Nemo.
    Apriel goes before Hermes: its prompt text mentions <tool_call>, and its sign is specific."""
    order = [f for f, _ in template_signs()]

    def at(format_id: str) -> int:
        return order.index(format_id)

    assert at("deepseek_v31") < at("command_r7b") < at("granite") < at("qwen3_coder") < at("apriel") < at("hermes")
    assert at("hermes") < at("gpt_oss") < at("nemotron_v2") < at("apertus") < at("pythonic") < at("gigachat3")
    assert at("gigachat3") < at("functionary_v3_2") < at("llama3_json") < at("solar_open") < at("mistral")


@pytest.mark.parametrize(
    "source, expected",
    [
        ("{{ '<|END_THINKING|><|START_ACTION|>' }} <tool_call>", "command_r7b"),
        ("{% elif thinking %} {{ '<|tool_call|>' }}", "granite"),
        ("<SPECIAL_10>System <SPECIAL_11>Assistant", "nemotron_v2"),
        ("<|system_start|> ... <|tools_prefix|>[", "apertus"),
        ("List of tools: <|tool_list_start|>[{{ tools }}]<|tool_list_end|>", "pythonic"),
        ("{{ '<|python_start|>' }} <|header_start|>", "pythonic"),
        ("user<|role_sep|>\n{{ c }}<|message_sep|>\n\n", "gigachat3"),
        (">>>${recipient}\n>>>all\n", "functionary_v3_2"),
        ("<|tool_response:begin|>1<|tool_response:name|>f<|tool_response:result|>x", "solar_open"),
        (
            "<thinking></thinking> <available_tools> <|assistant|> <|tool_result|> <tool_call></tool_call>"
            " <tool_calls>[{...}]</tool_calls>",
            "apriel",
        ),
    ],
)
def test_template_signs(source, expected):
    assert detect_format(source).format_id == expected


@pytest.mark.parametrize("format_id", GROUP2)
def test_builtin_templates_write_past_calls_the_parser_reads(format_id):
    """The built-in template renders a past call in the syntax its parser reads back."""
    from callscope.engine.formats import make_parser
    from callscope.engine.templates.chat import prepare_messages, probe_caps

    template = builtin_template(format_id)
    call = {"id": "call0", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    messages = [{"role": "user", "content": "Weather?"}, {"role": "assistant", "content": "", "tool_calls": [call]}]
    prompt = template.render(
        prepare_messages(messages, probe_caps(template)), load_tools(WEATHER), add_generation_prompt=False
    )
    turn = prompt.rsplit("<|im_start|>assistant\n", 1)[1].split("<|im_end|>", 1)[0]
    parser = make_parser(format_id)
    parser.feed(turn)
    parser.finish()
    parse = parser.snapshot()
    assert [(c.name, json.loads(c.arguments)) for c in parse.calls] == [("get_weather", {"city": "Paris"})], turn


# ------------------------------------------------------------ pythonic: Python literals validate


@pytest.mark.model
@pytest.mark.parametrize("name", ["pattern_bool_range", "nullable", "optional_fields", "nested_arrays", "ref_defs", "enum"])
def test_pythonic_forced_calls_validate_against_their_schema(model, name):
    """Booleans, None, nested lists and $defs models written as Python literals read back as valid JSON."""
    from callscope.engine.decode.session import LiveRun, RunSettings
    from tests.support.forced_schemas import BARE, tool, validate

    settings = RunSettings(
        messages=[{"role": "user", "content": f"Call {name}."}],
        tools=[tool(name)],
        format_id="pythonic",
        template=BARE,
        max_calls=1,
        content_chars=0,
        max_tokens=160,
    )
    analysis = LiveRun(model, settings).run().analysis
    assert analysis.finish_cause == "stop", "the call did not finish within max_tokens"
    assert analysis.finish_reason == "tool_calls" and analysis.violations == []
    (call,) = analysis.calls
    assert call.name == name and call.reconstructs
    validate(name, analysis.terminal.calls[0].arguments)
