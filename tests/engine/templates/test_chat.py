"""Chat templates: rendering like a model runtime, format detection, template choice, `callscope prompt`.

No weights are loaded here (the packaged model's GGUF metadata is read, which takes milliseconds).
"""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from callscope.cli import main
from callscope.engine.core.errors import MessagesError, TemplateError, ToolChoiceError
from callscope.engine.core.gguf import read_model_info
from callscope.engine.core.tools import load_tools
from callscope.engine.decode.grammar import build_tool_grammar, forced_tools, lit, tighten
from callscope.engine.decode.messages import parse_messages
from callscope.engine.decode.prompting import plan_prompt
from callscope.engine.formats import FORMAT_IDS
from callscope.engine.templates.chat import (
    BUILTIN_FORMATS,
    ChatTemplate,
    builtin_template,
    detect_format,
    load_template_file,
    prepare_messages,
    probe_caps,
)
from tests.support.conversations import HISTORY
from tests.support.paths import ROOT

TEMPLATES = ROOT / "tests" / "data" / "templates"
TOOLS = load_tools(ROOT / "resources" / "tools" / "default.json")


def render_file(name: str, messages=HISTORY, tools=TOOLS, **extra) -> str:
    template = load_template_file(TEMPLATES / name)
    caps = probe_caps(template)
    return template.render(prepare_messages(messages, caps), tools, bos_token="<s>", eos_token="</s>", **extra)


# ------------------------------------------------------------- detection


@pytest.mark.parametrize(
    "name, expected, marker",
    [
        ("qwen2_5.jinja", "hermes", "<tool_call>"),
        ("qwen3_coder.jinja", "qwen3_coder", "<parameter="),
        ("qwen3_5.jinja", "qwen3_coder", "<function="),
        ("llama3_1.jinja", "llama3_json", "ipython"),
        ("llama3_2.jinja", "llama3_json", "ipython"),
        ("mistral_nemo.jinja", "mistral", "[TOOL_CALLS]"),
        ("deepseek_v3_1.jinja", "deepseek_v31", "DeepSeek V3.1"),
        ("gpt_oss.jinja", "gpt_oss", "<|channel|>"),
        ("generic_tools.jinja", "generic", "Generic"),
        ("chatml_no_tools.jinja", "emulated", "no tool support"),
    ],
)
def test_family_templates_detect_their_wire_format_and_say_why(name, expected, marker):
    source = (TEMPLATES / name).read_text(encoding="utf-8")
    detection = detect_format(source)
    assert detection.format_id == expected
    assert marker in detection.reason


def test_detection_follows_llamacpp_order_qwen3_coder_before_hermes():
    both = "<tool_call> <function=x> <parameter=y>"
    assert detect_format(both).format_id == "qwen3_coder"
    assert detect_format("<tool_call>").format_id == "hermes"


@pytest.mark.parametrize("format_id", BUILTIN_FORMATS)
def test_builtin_templates_declare_their_format_and_render_history(format_id):
    template = builtin_template(format_id)
    assert template.origin == "built-in"
    assert format_id in FORMAT_IDS
    assert detect_format(template.source).format_id == format_id
    caps = probe_caps(template)
    assert caps.supports_tools and caps.supports_tool_calls and caps.supports_system_role
    prompt = template.render(prepare_messages(HISTORY, caps), TOOLS, bos_token="<|im_start|>", eos_token="<|im_end|>")
    # ChatML framing (SmolLM2's tokens), every tool described, the history's call and result present
    assert prompt.startswith("<|im_start|>system\n") and "Be brief." in prompt
    assert prompt.endswith("<|im_start|>assistant\n")
    assert "get_weather" in prompt and "read_file" in prompt
    assert "Paris" in prompt and "18 C and sunny" in prompt


@pytest.mark.parametrize(
    "format_id, call_text",
    [
        ("hermes", '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'),
        (
            "qwen3_coder",
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
        ),
        ("llama3_json", '{"name": "get_weather", "parameters": {"city": "Paris"}}'),
        ("mistral", '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abcdefghi"}]'),
        ("emulated", 'TOOL_CALL {"name": "get_weather", "arguments": {"city": "Paris"}}'),
        ("generic", '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}'),
        (
            "deepseek_v31",
            '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        ),
        (
            "gpt_oss",
            '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>',
        ),
    ],
)
def test_builtin_templates_write_past_calls_in_their_wire_syntax(format_id, call_text):
    template = builtin_template(format_id)
    prompt = template.render(prepare_messages(HISTORY, probe_caps(template)), TOOLS)
    assert call_text in prompt


# ------------------------------------------------------ family rendering


def test_qwen2_5_renders_tools_as_json_lines_and_calls_as_objects():
    prompt = render_file("qwen2_5.jinja")
    assert json.dumps(TOOLS[0]) in prompt  # tojson: plain json.dumps, no HTML escaping
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' in prompt
    assert "<|im_start|>user\n<tool_response>\n18 C and sunny\n</tool_response><|im_end|>" in prompt


def test_llama3_1_puts_tools_in_the_first_user_turn_and_needs_object_arguments():
    template = load_template_file(TEMPLATES / "llama3_1.jinja")
    assert probe_caps(template).requires_object_arguments
    prompt = render_file("llama3_1.jinja")
    assert prompt.startswith("<s><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n")
    assert "Today Date: 26 Jul 2024" in prompt
    assert json.dumps(TOOLS[0], indent=4) in prompt  # tojson(indent=4)
    assert '{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>' in prompt
    assert prompt.endswith("<|start_header_id|>assistant<|end_header_id|>\n\n")


def test_llama3_2_dates_the_prompt_with_strftime_now():
    prompt = render_file("llama3_2.jinja")
    assert "Today Date: " + datetime.now().strftime("%d %b %Y") in prompt


def test_llama3_1_template_refuses_parallel_calls_with_its_own_message_and_line():
    two_calls = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": HISTORY[2]["tool_calls"] * 2},
    ]
    with pytest.raises(TemplateError) as info:
        render_file("llama3_1.jinja", messages=two_calls)
    assert "This model only supports single tool-calls at once!" in str(info.value)
    assert info.value.line is not None
    source_line = (TEMPLATES / "llama3_1.jinja").read_text().splitlines()[info.value.line - 1]
    assert "raise_exception" in source_line


def test_mistral_nemo_checks_ids_and_alternation():
    prompt = render_file("mistral_nemo.jinja")
    assert '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abcdefghi"}]</s>' in prompt
    bad = [dict(HISTORY[1]), {**HISTORY[2], "tool_calls": [{**HISTORY[2]["tool_calls"][0], "id": "short"}]}]
    with pytest.raises(TemplateError, match="length 9"):
        render_file("mistral_nemo.jinja", messages=bad)
    with pytest.raises(TemplateError, match="must alternate"):
        render_file("mistral_nemo.jinja", messages=[HISTORY[1], HISTORY[1]])


def test_deepseek_v3_1_takes_string_arguments_verbatim():
    assert not probe_caps(load_template_file(TEMPLATES / "deepseek_v3_1.jinja")).requires_object_arguments
    prompt = render_file("deepseek_v3_1.jinja")
    assert '<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>' in prompt
    assert prompt.endswith("<｜tool▁output▁begin｜>18 C and sunny<｜tool▁output▁end｜>")
    assert render_file("deepseek_v3_1.jinja", messages=HISTORY[:2]).endswith(
        "<｜User｜>Weather in Paris?<｜Assistant｜></think>"
    )


def test_gpt_oss_renders_typescript_namespace_and_harmony_calls():
    prompt = render_file("gpt_oss.jinja")
    assert "namespace functions {" in prompt
    assert 'unit?: "celsius" | "fahrenheit",' in prompt
    assert (
        '<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>'
        in prompt
    )
    assert prompt.endswith("<|start|>assistant")


def test_qwen3_templates_write_xml_parameters():
    for name in ("qwen3_coder.jinja", "qwen3_5.jinja"):
        prompt = render_file(name)
        assert "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>" in prompt
    assert render_file("qwen3_5.jinja", messages=HISTORY[:2]).endswith("<|im_start|>assistant\n<think>\n")
    assert render_file("qwen3_5.jinja", messages=HISTORY[:2], enable_thinking=False).endswith("<think>\n\n</think>\n\n")


# ------------------------------------------------------ environment rules


def render_source(source: str, **context) -> str:
    return ChatTemplate("inline.jinja", source, "file").render(context.pop("messages", []), **context)


def test_tojson_does_not_html_escape_and_keeps_unicode():
    out = render_source("{{ {'a': \"<b> & 'c' 日本\"} | tojson }}")
    assert out == '{"a": "<b> & \'c\' 日本"}'


def test_loop_controls_and_generation_blocks_render():
    out = render_source(
        "{% for m in messages %}{% if loop.index > 2 %}{% break %}{% endif %}"
        "{% generation %}[{{ m.content }}]{% endgeneration %}{% endfor %}",
        messages=[{"role": "user", "content": str(i)} for i in range(5)],
    )
    assert out == "[0][1]"


def test_trim_and_lstrip_blocks_like_hf():
    out = render_source("{% if true %}\n    x\n{% endif %}\n")
    assert out == "    x\n"


def test_the_sandbox_blocks_python_internals_but_templates_may_mutate_their_own_lists():
    with pytest.raises(TemplateError, match="inline.jinja"):
        render_source("{{ ''.__class__.__mro__[1].__subclasses__() }}")
    # Kimi's templates append to lists they build; the runtimes allow it (the caller's data is copied per render)
    assert render_source("{% set x = [] %}{% set _ = x.append(1) %}{{ x }}") == "[1]"


def test_errors_name_the_template_and_line():
    with pytest.raises(TemplateError) as info:
        load_template_file(TEMPLATES / "broken_syntax.jinja")
    assert info.value.line == 4 and "broken_syntax.jinja:4" in str(info.value)
    template = load_template_file(TEMPLATES / "raises.jinja")
    with pytest.raises(TemplateError) as info:
        template.render(HISTORY[:2])
    assert str(info.value).endswith("raises.jinja:3: raise_exception: System role not supported")
    with pytest.raises(TemplateError) as info:
        render_source(
            "line one\n{{ messages[0].content.upper() }}\n{{ undefined_thing.attr }}", messages=[{"content": "a"}]
        )
    assert info.value.line == 3 and "UndefinedError" in str(info.value)


def test_missing_template_file_is_a_template_error(tmp_path):
    with pytest.raises(TemplateError, match="no such file"):
        load_template_file(tmp_path / "nope.jinja")


def test_a_tokenizer_config_json_is_accepted_as_a_template(tmp_path):
    source = (TEMPLATES / "qwen2_5.jinja").read_text()
    config = tmp_path / "tokenizer_config.json"
    config.write_text(json.dumps({"bos_token": None, "chat_template": source}))
    assert load_template_file(config).source == source
    multi = tmp_path / "multi.json"
    multi.write_text(
        json.dumps({"chat_template": [{"name": "default", "template": "x"}, {"name": "tool_use", "template": source}]})
    )
    assert load_template_file(multi).source == source


def test_object_arguments_only_where_the_template_needs_them():
    hermes = probe_caps(builtin_template("hermes"))
    assert prepare_messages(HISTORY, hermes) is HISTORY
    llama = probe_caps(load_template_file(TEMPLATES / "llama3_1.jinja"))
    shaped = prepare_messages(HISTORY, llama)
    assert shaped[2]["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}
    assert HISTORY[2]["tool_calls"][0]["function"]["arguments"] == '{"city": "Paris"}'  # caller's data untouched


# ------------------------------------------------------ choosing templates


@pytest.mark.model
def test_packaged_model_template_has_no_tools_so_auto_picks_emulated():
    info = read_model_info()
    assert info.chat_template and info.bos_token == "<|im_start|>" and info.eos_token == "<|im_end|>"
    plan = plan_prompt(HISTORY[1:2], TOOLS, "auto", None, info)
    assert plan.format_id == "emulated" and "no tool support" in plan.format_reason
    assert plan.template.origin == "built-in"
    assert "TOOL_CALL" in plan.prompt and plan.prompt.endswith("<|im_start|>assistant\n")


@pytest.mark.model
def test_explicit_format_with_a_tool_less_model_uses_that_builtin():
    plan = plan_prompt(HISTORY[1:2], TOOLS, "mistral", None, read_model_info())
    assert plan.format_id == "mistral" and plan.template.name.startswith("built-in mistral")
    assert "[AVAILABLE_TOOLS]" in plan.prompt


@pytest.mark.model
def test_a_model_template_with_tools_is_used_and_detected():
    info = read_model_info()
    info.chat_template = (TEMPLATES / "qwen2_5.jinja").read_text()
    plan = plan_prompt(HISTORY[1:2], TOOLS, "auto", None, info)
    assert plan.template.origin == "model" and plan.format_id == "hermes"
    assert "own template" in plan.template_reason
    other = plan_prompt(HISTORY[1:2], TOOLS, "qwen3_coder", None, info)
    assert other.template.origin == "built-in" and "speaks hermes" in other.template_reason


def test_a_given_template_wins_and_is_detected():
    template = load_template_file(TEMPLATES / "llama3_2.jinja")
    plan = plan_prompt(HISTORY[1:2], TOOLS, "auto", template, None)
    assert plan.format_id == "llama3_json" and plan.template_reason == "given with --template"
    assert plan.prompt.startswith("<|start_header_id|>system")  # no model: bos_token is empty


# --------------------------------------------------------------- messages


@pytest.mark.parametrize(
    "doc, path",
    [
        ("{}", '$: expected an array of messages or an object with "messages"'),
        ("[]", "$: expected at least one message"),
        ('[{"role": "robot", "content": "x"}]', "$[0].role"),
        ('[{"role": "user", "content": 5}]', "$[0].content"),
        (
            '{"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [{"function": {}}]}]}',
            "$.messages[1].tool_calls[0].function.name",
        ),
        ('{"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]}', "$.tools[0].function"),
    ],
)
def test_messages_errors_name_the_json_path(doc, path):
    with pytest.raises(MessagesError) as info:
        parse_messages(doc, "m.json")
    assert str(info.value).startswith("m.json: ") and path in str(info.value)


def test_a_request_body_brings_its_tools():
    messages, tools = parse_messages(json.dumps({"messages": HISTORY, "tools": TOOLS}))
    assert messages == HISTORY and tools == TOOLS


# ---------------------------------------------------------------- grammar


def test_force_tool_choices():
    assert forced_tools("off", TOOLS) is None
    assert forced_tools("any", TOOLS) == TOOLS
    assert [t["function"]["name"] for t in forced_tools("read_file", TOOLS)] == ["read_file"]
    with pytest.raises(ToolChoiceError) as info:
        forced_tools("get_wether", TOOLS)
    assert "get_weather, read_file" in str(info.value)
    with pytest.raises(ToolChoiceError, match="no tools"):
        forced_tools("any", [])


@pytest.mark.parametrize(
    "format_id", ["hermes", "qwen3_coder", "llama3_json", "mistral", "emulated", "generic", "deepseek_v31", "gpt_oss"]
)
@pytest.mark.llama
def test_grammars_spell_the_wire_syntax(format_id):
    grammar = build_tool_grammar(format_id, TOOLS, "get_weather", max_calls=2, content_chars=20)
    assert grammar.tool_names == ("get_weather",)
    text = grammar.gbnf
    assert "root ::=" in text and "read_file" not in text
    assert '"\\"celsius\\""' in text or '"celsius"' in text  # the enum became alternatives
    markers = {
        "hermes": "<tool_call>",
        "qwen3_coder": "<function=get_weather>",
        "llama3_json": '\\"parameters\\"',
        "mistral": "[TOOL_CALLS]",
        "emulated": "TOOL_CALL ",
        "generic": '\\"tool_calls\\"',
        "deepseek_v31": "<｜tool▁sep｜>",
        "gpt_oss": "to=functions.get_weather",
    }
    assert markers[format_id] in text


def test_gbnf_literals_escape_and_schemas_are_bounded():
    assert lit('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
    tight = tighten(
        {
            "type": "object",
            "properties": {
                "s": {"type": "string"},
                "a": {"type": "array", "items": {"type": "string"}},
                "o": {"type": "object"},
            },
        },
        10,
    )
    assert tight["properties"]["s"]["maxLength"] == 10
    assert tight["properties"]["a"]["maxItems"] == 3 and tight["properties"]["a"]["items"]["maxLength"] == 10
    assert tight["properties"]["o"]["additionalProperties"] is False


# ------------------------------------------------------------ prompt CLI


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_prompt_json_with_a_template(capsys):
    code, out, err = cli(capsys, "prompt", "--template", TEMPLATES / "qwen3_coder.jinja", "--prompt", "hi", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["format"] == "qwen3_coder"
    assert doc["prompt"].endswith("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n")
    assert "<function>\n<name>write_file</name>" in doc["prompt"]


@pytest.mark.model
def test_prompt_defaults_to_the_packaged_model(capsys):
    code, out, err = cli(capsys, "prompt", "--format", "hermes")
    assert code == 0, err
    assert out.startswith("format: hermes (chosen with --format)\ntemplate: built-in hermes")
    assert "<tool_call>" in out


def test_prompt_with_messages_file_and_tools(capsys, tmp_path):
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps(HISTORY))
    code, out, err = cli(capsys, "prompt", "--template", TEMPLATES / "llama3_1.jinja", "--messages", messages, "--json")
    assert code == 0, err
    assert '"parameters": {"city": "Paris"}' in json.loads(out)["prompt"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--template", "broken_syntax.jinja"], "broken_syntax.jinja:4: syntax error"),
        (["--template", "raises.jinja", "--messages", "SYSTEM"], "raises.jinja:3: raise_exception"),
        (["--format", "klingon"], "unknown format 'klingon'"),
        (["--tools", "BADTOOLS"], "$[0].function.name"),
        (["--messages", "BADMESSAGES"], "$[0].role"),
        (["--model", "NOTGGUF"], "not a GGUF model file"),
        (["--model", "MISSING"], "no such file"),
    ],
)
def test_prompt_bad_input_is_one_line_and_exit_2(capsys, tmp_path, args, message):
    files = {
        "SYSTEM": json.dumps(HISTORY[:2]),
        "BADTOOLS": json.dumps([{"type": "function", "function": {"name": ""}}]),
        "BADMESSAGES": json.dumps([{"role": "robot", "content": "x"}]),
        "NOTGGUF": "hello",
    }
    argv = []
    for a in args:
        if a in files:
            (tmp_path / a).write_text(files[a])
            a = tmp_path / a
        elif a == "MISSING":
            a = tmp_path / "missing.gguf"
        elif a.endswith(".jinja"):
            a = TEMPLATES / a
        argv.append(a)
    code, _out, err = cli(capsys, "prompt", *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("callscope prompt: ") and message in err
