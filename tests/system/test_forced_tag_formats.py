"""The tag families end to end: forced calls on the packaged model, template detection order, built-in templates.

``callscope run --format X`` makes SmolLM2 write a genuine call in each format
(a grammar forces the syntax, the model chooses every token inside it); the
call must parse, stream in more than one delta and rebuild byte for byte.
Template detection must place each format where llama.cpp's
``common_chat_templates_apply_jinja`` checks it (GLM before Hermes, since both
write ``<tool_call>``); the templates here are small ones written for the
test, carrying the markers real templates have.
"""

from __future__ import annotations

import json

import pytest

from callscope.cli import main
from callscope.engine.core.tools import load_tools
from callscope.engine.formats import get_spec, make_parser
from callscope.engine.recordings.trace import read_trace
from callscope.engine.templates.chat import (
    builtin_template,
    detect_format,
    prepare_messages,
    probe_caps,
    template_signs,
)
from tests.support.conversations import HISTORY
from tests.support.paths import ROOT
from tests.support.schema import validate_report

WEATHER = ROOT / "resources" / "tools" / "weather.json"
TAG_FORMATS = (
    "glm45",
    "seed_oss",
    "minimax_m2",
    "deepseek_v32",
    "kimi_k2",
    "deepseek_v3",
    "gemma4",
    "functionary_v3_1",
    "qwen3_coder",
)


# ------------------------------------------------------------------ forced calls


@pytest.mark.model
@pytest.mark.parametrize("format_id", TAG_FORMATS)
def test_run_forces_a_call_that_streams_and_reconstructs(capsys, tmp_path, format_id):
    record = tmp_path / "run.jsonl"
    # a bare ChatML prompt without the tool list: the grammar forces the syntax anyway, and a short
    # prompt keeps each run to its generation (the built-in templates are tested below, without weights)
    bare = tmp_path / "bare.jinja"
    bare.write_text("<|im_start|>user\n{{ messages[-1].content }}<|im_end|>\n<|im_start|>assistant\n", encoding="utf-8")
    argv = ["run", "--format", format_id, "--template", str(bare), "--tools", str(WEATHER), "--prompt", "Weather in Paris?",
            "--max-calls", "1", "--max-tokens", "160", "--record", str(record), "--json", "--chunks"]
    code = main(argv)
    out = capsys.readouterr()
    assert code == 0, out.err
    doc = json.loads(out.out)
    validate_report(doc)
    run = doc["runs"][0]
    assert run["source"]["format"] == format_id
    assert run["finish_reason"] == "tool_calls" and run["violations"] == []
    (call,) = run["calls"]
    assert call["name"] == "get_weather" and call["reconstructs"]
    assert isinstance(json.loads(call["final_arguments"])["city"], str)
    fragments = [
        delta["function"]["arguments"]
        for record in run["chunks"]
        for delta in record["chunk"]["choices"][0]["delta"].get("tool_calls") or []
        if delta.get("function", {}).get("arguments")
    ]
    assert len(fragments) > 1 and "".join(fragments) == call["final_arguments"]  # streamed as written
    # the model wrote the format's own syntax, markers and all
    text = b"".join(step.data for step in read_trace(record).steps).decode("utf-8")
    leak = get_spec(format_id).markers.leak
    assert any(marker in text for marker in leak), text


# -------------------------------------------------------------- template detection

#: Small templates with the markers each family's real template carries (written for this test).
FAMILY_SOURCES = {
    "glm45": "[gMASK]<sop>{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
    "{% for t in tools %}<tools>{{ t | tojson }}</tools>{% endfor %}"
    "<tool_call>{{ name }}<arg_key>{{ k }}</arg_key><arg_value>{{ v }}</arg_value></tool_call>",
    "seed_oss": "<seed:bos>{{ messages }}<seed:think>{{ r }}</seed:think>"
    "<seed:tool_call><function={{ n }}><parameter={{ k }}>{{ v }}</parameter></function></seed:tool_call>",
    "minimax_m2": "]~!b[]~b]system{{ messages }}<minimax:tool_call><invoke name=\"{{ n }}\">"
    "<parameter name=\"{{ k }}\">{{ v }}</parameter></invoke></minimax:tool_call>",
    "deepseek_v32": "<｜User｜>{{ m }}<｜Assistant｜><｜DSML｜function_calls><｜DSML｜invoke name=\"{{ n }}\">"
    "</｜DSML｜invoke></｜DSML｜function_calls><｜tool▁calls▁begin｜>",
    "kimi_k2": "<|im_system|>tool_declare<|im_middle|>{{ tools | tojson }}<|im_end|>"
    "<|tool_calls_section_begin|><|tool_call_begin|>{{ id }}<|tool_call_argument_begin|>{{ a }}<|tool_call_end|>"
    "<|tool_calls_section_end|>## Return of {{ id }}",
    "deepseek_v3": "<｜User｜>{{ m }}<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>"
    "{{ n }}\n```json\n{{ a }}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    "gemma4": "<|turn>user\n{{ m }}<turn|><|tool_call>call:{{ n }}{{ '{' }}{{ a }}{{ '}' }}<tool_call|>",
    "functionary_v3_1": "<|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\n"
    "<|start_header_id|>ipython<|end_header_id|>\n\n<function={{ n }}>{{ a }}</function><|eot_id|>",
}


@pytest.mark.parametrize("format_id", sorted(FAMILY_SOURCES))
def test_family_templates_detect_their_format_and_say_why(format_id):
    detection = detect_format(FAMILY_SOURCES[format_id])
    assert detection.format_id == format_id, detection
    assert "llama.cpp" in detection.reason


def test_glm_is_checked_before_hermes_and_qwen3_coder():
    source = FAMILY_SOURCES["glm45"]
    assert "<tool_call>" in source  # Hermes' sign holds too: only the order picks GLM
    assert detect_format("<tool_call>{{ x }}</tool_call>").format_id == "hermes"
    assert detect_format(source).format_id == "glm45"


def test_detection_order_matches_llamacpp_for_the_tag_families():
    order = [format_id for format_id, _ in template_signs()]

    def first(format_id: str) -> int:
        return order.index(format_id)

    assert first("deepseek_v32") < first("deepseek_v31")  # DSML templates may carry V3.1's signs
    assert first("deepseek_v3") < len(order) - 1 - order[::-1].index("deepseek_v31")  # R1 before the bare markers
    assert first("glm45") < first("qwen3_coder") < first("hermes")
    assert first("gemma4") < first("hermes")
    assert first("gpt_oss") < first("seed_oss") < first("minimax_m2") < first("kimi_k2") < first("functionary_v3_1")
    assert first("functionary_v3_1") < first("llama3_json")
    # the V3.1 template still detects as V3.1, a V3-style block without the fence as V3.1's markers say
    assert detect_format("message['prefix'] is defined and message['prefix'] and thinking <｜tool▁calls▁begin｜>```json").format_id == "deepseek_v31"
    assert detect_format("<｜tool▁calls▁begin｜>{{ x }}<｜tool▁sep｜>").format_id == "deepseek_v31"


# -------------------------------------------------------------- built-in templates

PAST_CALLS = {
    "glm45": "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    "seed_oss": "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>",
    "minimax_m2": '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n</invoke>\n</minimax:tool_call>',
    "deepseek_v32": '<｜DSML｜function_calls>\n<｜DSML｜invoke name="get_weather">\n'
    '<｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>',
    "kimi_k2": '<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}'
    "<|tool_call_end|><|tool_calls_section_end|>",
    "deepseek_v3": '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city": "Paris"}\n```'
    "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    "gemma4": '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
    "functionary_v3_1": '<function=get_weather>{"city": "Paris"}</function>',
}


@pytest.mark.parametrize("format_id", sorted(PAST_CALLS))
def test_builtin_templates_write_past_calls_the_way_the_models_template_does(format_id):
    template = builtin_template(format_id)
    caps = probe_caps(template)
    assert caps.supports_tools and caps.supports_tool_calls
    prompt = template.render(prepare_messages(HISTORY, caps), load_tools(WEATHER))
    assert PAST_CALLS[format_id] in prompt
    assert "18 C and sunny" in prompt and prompt.endswith("<|im_start|>assistant\n")
    # what the template writes is what the format's parser reads back
    parser = make_parser(format_id)
    parser.feed(PAST_CALLS[format_id])
    parser.finish()
    assert [(c.name, json.loads(c.arguments)) for c in parser.snapshot().calls] == [("get_weather", {"city": "Paris"})]
