"""Forced calls with the schemas people really send: ``$ref``/``$defs``, unions, formats, bounds.

Every schema must give a grammar llama.cpp accepts in every forceable format,
and a real forced run of the packaged model in hermes (JSON arguments) and
qwen3_coder (raw-text XML parameters) must produce a call whose arguments
validate against the schema (``format`` included: date, uuid, email).
The runs are short (one call, no content line) and share one loaded model.
"""

from __future__ import annotations

import pytest

from callscope.engine.core.errors import GrammarError
from callscope.engine.decode.grammar import build_tool_grammar, compile_grammar, forceable_formats, tighten
from callscope.engine.decode.session import LiveRun, RunSettings
from tests.support.forced_schemas import BARE, SCHEMAS, tool, validate

# ---------------------------------------------------------------- without the model


@pytest.mark.llama
def test_tightening_keeps_the_schemas_own_bounds():
    tight = tighten(SCHEMAS["min_items_length"], 24)["properties"]
    assert tight["tags"]["minItems"] == 4 and tight["tags"]["maxItems"] == 4  # was clamped to 3 below minItems
    assert (tight["code"]["minLength"], tight["code"]["maxLength"]) == (3, 5)
    long = tighten({"type": "string", "minLength": 40}, 24)
    assert long["maxLength"] == 40
    assert tighten({"type": "integer", "minimum": 1, "maximum": 5}, 24)["enum"] == [1, 2, 3, 4, 5]
    assert tighten({"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 3}, 24)["enum"] == [1, 2]
    assert tighten({"type": "string", "pattern": "[a-z]+"}, 24)["pattern"] == "^[a-z]+$"
    nullable = tighten({"type": ["string", "null"]}, 24)
    assert nullable == {"anyOf": [{"type": "string", "minLength": 1, "maxLength": 24}, {"type": "null"}]}


@pytest.mark.llama
def test_refs_are_resolved_per_tool_and_bad_refs_are_grammar_errors():
    first = {"type": "function", "function": {"name": "a", "parameters": {
        "$defs": {"X": {"type": "string", "enum": ["one"]}}, "properties": {"x": {"$ref": "#/$defs/X"}},
        "required": ["x"]}}}
    second = {"type": "function", "function": {"name": "b", "parameters": {
        "$defs": {"X": {"type": "integer", "enum": [2]}}, "properties": {"x": {"$ref": "#/$defs/X"}},
        "required": ["x"]}}}
    gbnf = build_tool_grammar("hermes", [first, second], "any").gbnf
    rules = dict(line.split(" ::= ", 1) for line in gbnf.splitlines())
    assert rules["t0-X"] == '"\\"one\\""' and rules["t1-X"] == '"2"'  # two tools' X models stay apart
    broken = {"type": "function", "function": {"name": "c", "parameters": {"properties": {"x": {"$ref": "#/$defs/Y"}}}}}
    with pytest.raises(GrammarError, match="tool 'c': cannot turn its parameters into a grammar"):
        build_tool_grammar("hermes", [broken], "any")
    with pytest.raises(GrammarError, match="tool 'c'"):
        build_tool_grammar("qwen3_coder", [broken], "any")


@pytest.mark.llama
def test_qwen3_coder_parameters_use_the_schema_not_free_text():
    gbnf = build_tool_grammar("qwen3_coder", [tool("pydantic_model"), tool("any_of")], "any").gbnf
    rules = dict(line.split(" ::= ", 1) for line in gbnf.splitlines())
    assert "t0-address" in rules["t0-call"] and rules["t0-address"] == "t0-Address"  # the $defs model's JSON rule
    assert rules["t0-Address"].startswith('"{" space t0-Address-street-kv')
    assert '"<parameter=target>\\n" (integer | [^<' in rules["t1-call"]  # the union: a JSON integer or prose
    open_object = build_tool_grammar("hermes", [tool("additional_properties")], "any").gbnf
    assert 't0-args-headers-additional-kvs ::= t0-args-headers-additional-kv ( "," space t0-args-headers-additional-kv ){0,2}' in open_object
    assert "<parameter=nickname>" in rules["t0-call"]


# ---------------------------------------------------------------- with the model


@pytest.mark.model
@pytest.mark.parametrize("name", SCHEMAS)
def test_every_format_gets_a_grammar_llamacpp_accepts(model, name):
    for format_id in forceable_formats():
        grammar = build_tool_grammar(format_id, [tool(name)], "any", max_calls=2, content_chars=12)
        compile_grammar(grammar.gbnf, model.llama)


@pytest.mark.model
@pytest.mark.parametrize("format_id", ["hermes", "qwen3_coder"])
@pytest.mark.parametrize("name", SCHEMAS)
def test_a_forced_call_validates_against_its_schema(model, format_id, name):
    settings = RunSettings(
        messages=[{"role": "user", "content": f"Call {name}."}],
        tools=[tool(name)],
        format_id=format_id,
        template=BARE,
        max_calls=1,
        content_chars=0,
        max_tokens=240,
    )
    analysis = LiveRun(model, settings).run().analysis
    assert analysis.finish_cause == "stop", "the call did not finish within max_tokens"
    assert analysis.finish_reason == "tool_calls" and analysis.violations == []
    (call,) = analysis.calls
    assert call.name == name and call.reconstructs
    validate(name, analysis.terminal.calls[0].arguments)
