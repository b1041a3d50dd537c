"""The tag families with JSON-like arguments (kimi_k2, deepseek_v3, gemma4, functionary_v3_1) against the parser rules.

Every stream goes through ``check_stream`` (incremental == from-scratch on every
prefix, names only complete, append-only arguments, no marker in content), fed
one character at a time unless a test says otherwise; hypothesis then tries
random splittings of sample generations and texts glued from marker fragments.
The peers' own test outputs (vLLM's, llama.cpp's) are covered by equivalent
cases written here: same structure, our own strings.
"""

from __future__ import annotations

import json

from callscope.engine.formats import make_parser
from tests.support.format_harness import argument_steps, calls_of, check_stream, fragment_property, split_property

SECTION, SECTION_END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"
BEGIN, ARG, END = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
KIMI_MARKERS = (SECTION, SECTION_END, BEGIN, ARG, END, "</think>")
DS_BEGIN, DS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
DS_CALL, DS_CALL_END, DS_SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
DS_MARKERS = (DS_BEGIN, DS_END, DS_CALL, DS_CALL_END, DS_SEP, "</think>")
Q = '<|"|>'
GEMMA_MARKERS = ("<|tool_call>", "<tool_call|>", "<channel|>", "<|channel>")
FN_MARKERS = ("<function=", "</function>", "<|python_tag|>")


def tool(name: str, **props: str) -> dict:
    properties = {key: {"type": kind} for key, kind in props.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties}}}


# ======================================================================= kimi_k2


def kimi(call_id: str, args: str, space: str = "") -> str:
    return f"{BEGIN}{call_id}{space}{ARG}{args}{END}"


def section(*calls: str) -> str:
    return SECTION + "".join(calls) + SECTION_END


def test_kimi_single_call_keeps_the_models_id():
    text = "I'll check. " + section(kimi("functions.get_weather:0", '{"city": "Hanoi"}'))
    final = check_stream("kimi_k2", text, markers=KIMI_MARKERS)
    assert final.content == "I'll check. "
    assert [(c.name, c.id, c.arguments) for c in final.calls] == [("get_weather", "functions.get_weather:0", '{"city": "Hanoi"}')]
    # the id is there from the call's first event, with the name: it never changes
    parser = make_parser("kimi_k2")
    parser.feed(text[: text.index(ARG) + len(ARG)])
    assert [(c.name, c.id, c.arguments) for c in parser.snapshot().calls] == [("get_weather", "functions.get_weather:0", "")]


def test_kimi_parallel_and_three_calls():
    text = "Several tasks. " + section(
        kimi("functions.get_weather:0", '{"city": "Hanoi"}'),
        kimi("functions.get_news:1", '{"topic": "science"}', space=" "),
        kimi("functions.send_email:2", '{"to": "a@b.example", "subject": "Daily"}'),
    )
    final = check_stream("kimi_k2", text, markers=KIMI_MARKERS)
    assert [(c.name, c.id) for c in final.calls] == [
        ("get_weather", "functions.get_weather:0"),
        ("get_news", "functions.get_news:1"),
        ("send_email", "functions.send_email:2"),
    ]
    assert json.loads(final.calls[2].arguments) == {"to": "a@b.example", "subject": "Daily"}


def test_kimi_markup_and_multiline_json_and_empty_arguments():
    text = section(
        kimi("functions.render:0", '{"html": "<p>hi</p>"}'),
        kimi("functions.store:1", '{\n  "name": "x",\n  "value": 7\n}'),
        kimi("functions.ping:2", "{}"),
    )
    final = check_stream("kimi_k2", text, markers=KIMI_MARKERS)
    assert calls_of(final) == [("render", {"html": "<p>hi</p>"}), ("store", {"name": "x", "value": 7}), ("ping", {})]


def test_kimi_ids_without_prefix_bare_counters_and_malformed_ids():
    assert [(c.name, c.id) for c in check_stream("kimi_k2", section(kimi("get_weather:0", "{}"))).calls] == [
        ("get_weather", "get_weather:0")
    ]
    assert [c.name for c in check_stream("kimi_k2", section(kimi("functions.ns.tool:3", "{}"))).calls] == ["ns.tool"]
    one = [tool("get_weather", city="string")]
    final = check_stream("kimi_k2", "Checking. " + section(kimi("0", '{"city": "Pune"}')), tools=one)
    assert [(c.name, c.id) for c in final.calls] == [("get_weather", "0")]
    two = one + [tool("book_flight", city="string")]
    assert check_stream("kimi_k2", section(kimi("0", '{"city": "Pune"}')), tools=two).calls == ()  # ambiguous: no call
    # an id without :IDX is no call (its text is content); the next, well-formed one still is
    final = check_stream("kimi_k2", section(kimi("functions.bad.0", '{"a": 1}'), kimi("functions.good:1", '{"b": 2}')))
    assert calls_of(final) == [("good", {"b": 2})]
    assert "functions.bad.0" in final.content


def test_kimi_invalid_json_is_still_a_call():
    text = section(kimi("functions.bad:0", '{"city": "Pune"'), kimi("functions.good:1", '{"city": "Goa"}'))
    final = check_stream("kimi_k2", text)
    assert [(c.name, c.arguments) for c in final.calls] == [("bad", '{"city": "Pune"'), ("good", '{"city": "Goa"}')]


def test_kimi_reasoning_and_a_call_at_the_end_of_unclosed_reasoning():
    text = "<think>Weather first.</think>Sure." + section(kimi("functions.get_weather:0", '{"city": "Hue"}'))
    final = check_stream("kimi_k2", text, markers=KIMI_MARKERS + ("<think>",))
    assert (final.reasoning, final.content) == ("Weather first.", "Sure.")
    # K2 Thinking reasons again after a call
    text = section(kimi("functions.a:0", "{}")) + "<think>Now the second.</think>" + section(kimi("functions.b:1", "{}"))
    final = check_stream("kimi_k2", text, markers=KIMI_MARKERS + ("<think>",))
    assert final.reasoning == "Now the second." and [c.name for c in final.calls] == ["a", "b"]
    # llama.cpp: the model may open its calls right inside reasoning, without </think>
    text = "<think>I should call it now." + kimi("functions.get_weather:0", '{"city": "Hue"}')
    final = check_stream("kimi_k2", text)
    assert final.reasoning == "I should call it now." and calls_of(final) == [("get_weather", {"city": "Hue"})]


def test_kimi_arguments_stream_raw_and_the_closer_never_leaks():
    args = '{"text": "東京 \\"q\\" <|tool_call|> x"}'
    steps = argument_steps("kimi_k2", section(kimi("functions.f:0", args)))
    assert steps[0] == "" and steps[-1] == args
    assert all(args.startswith(s) for s in steps)


# =================================================================== deepseek_v3


def ds(name: str, args: str, begin: str = DS_CALL) -> str:
    return f"{begin}function{DS_SEP}{name}\n```json\n{args}\n```{DS_CALL_END}"


def block(*calls: str) -> str:
    return DS_BEGIN + "".join(calls) + DS_END


def test_ds3_single_and_parallel_calls():
    final = check_stream("deepseek_v3", block(ds("get_weather", '{"city": "Kyoto", "unit": "celsius"}')), markers=DS_MARKERS)
    assert calls_of(final) == [("get_weather", {"city": "Kyoto", "unit": "celsius"})] and final.content == ""
    text = block(ds("get_weather", '{"city": "Kyoto"}'), ds("search_hotels", '{"location": "Kyoto", "check_in": "2025-03-01"}'))
    final = check_stream("deepseek_v3", text, markers=DS_MARKERS)
    assert [c.name for c in final.calls] == ["get_weather", "search_hotels"]


def test_ds3_data_types_escapes_and_empty_arguments():
    args = (
        '{"s": "hi", "i": 7, "f": 2.5, "b": false, "n": null, "a": ["x", "y"], "o": {"k": "v"}, "ea": [], "eo": {},'
        ' "q": "She said \\"yes\\"", "p": "D:\\\\dir\\\\f", "nl": "a\\nb"}'
    )
    final = check_stream("deepseek_v3", block(ds("types", args), ds("now", "{}")), markers=DS_MARKERS)
    assert final.calls[0].arguments == args and final.calls[1].arguments == "{}"
    assert json.loads(args)["q"] == 'She said "yes"'


def test_ds3_content_before_and_after():
    text = "Let me look that up." + block(ds("get_weather", '{"city": "Nara"}')) + "\n\nDone."
    final = check_stream("deepseek_v3", text, markers=DS_MARKERS)
    assert final.content == "Let me look that up.Done." and calls_of(final) == [("get_weather", {"city": "Nara"})]


def test_ds3_malformed_outputs():
    # unterminated JSON: still a call, its arguments reported invalid
    final = check_stream("deepseek_v3", block(ds("get_weather", '{"city": "Nara"')))
    assert [(c.name, c.arguments) for c in final.calls] == [("get_weather", '{"city": "Nara"')]
    # no <｜tool▁call▁begin｜> and no call end before the block end (llama.cpp accepts both)
    text = DS_BEGIN + 'function<｜tool▁sep｜>get_weather\n```json\n{"city": "Nara"}\n```' + DS_END
    assert calls_of(check_stream("deepseek_v3", text)) == [("get_weather", {"city": "Nara"})]


def test_ds3_reasoning_and_thinking_mode():
    text = "<think>\nThe user wants weather.\n</think>\n\n" + block(ds("get_weather", '{"city": "Nara"}'))
    final = check_stream("deepseek_v3", text, markers=DS_MARKERS + ("<think>",))
    assert final.reasoning == "The user wants weather." and final.content == ""
    parser = make_parser("deepseek_v3", thinking=True)
    parser.feed("Fine.</think>" + block(ds("f", "{}")))
    parser.finish()
    assert parser.snapshot().reasoning == "Fine." and calls_of(parser.snapshot()) == [("f", {})]


def test_ds3_fence_and_its_backticks_never_enter_the_arguments():
    args = '{"md": "```python\\nprint(1)\\n```", "x": "a ``` b"}'
    text = block(ds("note", args))
    steps = argument_steps("deepseek_v3", text)
    assert steps[-1] == args and all(args.startswith(s) for s in steps)
    assert check_stream("deepseek_v3", text).calls[0].arguments == args
    # no fence at all: the raw JSON up to the call end
    bare = block(f'{DS_CALL}function{DS_SEP}f\n{{"a": 1}}{DS_CALL_END}')
    assert check_stream("deepseek_v3", bare).calls[0].arguments == '{"a": 1}'


# ======================================================================== gemma4


def gem(name: str, body: str) -> str:
    return f"<|tool_call>call:{name}{{{body}}}<tool_call|>"


def gemma_args(body: str) -> object:
    (call,) = check_stream("gemma4", gem("f", body)).calls
    return json.loads(call.arguments)


def test_gemma_argument_syntax_as_vllm_reads_it():
    assert gemma_args("") == {}
    assert gemma_args(f"location:{Q}Paris, France{Q}") == {"location": "Paris, France"}
    assert gemma_args(f"a:{Q}San José{Q},unit:{Q}celsius{Q}") == {"a": "San José", "unit": "celsius"}
    assert gemma_args("count:42,score:3.14,flag:true,off:false,none:null") == {
        "count": 42, "score": 3.14, "flag": True, "off": False, "none": None,
    }
    assert gemma_args(f"nested:{{inner:{Q}v{Q}}},list:[{Q}a{Q},{Q}b{Q}]") == {"nested": {"inner": "v"}, "list": ["a", "b"]}
    assert gemma_args(f"m:{{{Q}3{Q}:{Q}new text{Q}}}") == {"m": {"3": "new text"}}
    assert gemma_args(f"o:{{i:{{{Q}3{Q}:{Q}t{Q}}}}}") == {"o": {"i": {"3": "t"}}}
    assert gemma_args("key:") == {"key": ""}
    assert gemma_args("left:108.,right:22.8") == {"left": 108.0, "right": 22.8}
    assert gemma_args(f"arr:[{Q}a]b{Q},{Q}c{Q}],tail:{Q}t{Q}") == {"arr": ["a]b", "c"], "tail": "t"}
    assert gemma_args('"quoted":"json string \\"x\\"",word:plain') == {"quoted": 'json string "x"', "word": "plain"}


def test_gemma_calls_content_names_and_empty_arguments():
    text = "Let me check the weather for you. " + gem("get_weather", f"location:{Q}Paris{Q}") + gem("get-time", "") + gem(
        "weather.get", f"location:{Q}Oslo{Q}"
    )
    final = check_stream("gemma4", text, markers=GEMMA_MARKERS)
    assert final.content == "Let me check the weather for you. "
    assert calls_of(final) == [("get_weather", {"location": "Paris"}), ("get-time", {}), ("weather.get", {"location": "Oslo"})]


def test_gemma_string_streams_and_split_delimiters_never_leak():
    text = gem("write_file", f"path:{Q}index.html{Q},content:{Q}<!DOCTYPE html>\n<html lang=\"zh\">\n<head>{Q}")
    steps = argument_steps("gemma4", text)
    assert '{"path":"index.html","content":"<!DOCTYPE' in steps
    assert not any("<|" in s or s.endswith("<") for s in steps)
    assert json.loads(steps[-1]) == {"path": "index.html", "content": '<!DOCTYPE html>\n<html lang="zh">\n<head>'}


def test_gemma_bare_values_wait_for_their_end():
    steps = argument_steps("gemma4", gem("set", "replace_all:false,n:42"))
    assert '{"replace_all":f' not in steps and '{"replace_all":false' in steps
    assert '{"replace_all":false,"n":4' not in steps and steps[-1] == '{"replace_all":false,"n":42}'


def test_gemma_reasoning_blocks_and_stray_channel_end():
    text = "<|channel>thought\nPlan it.<channel|>Ok. " + gem("f", "a:1") + "<|channel>thought\nmore<channel|>Done.<channel|>"
    final = check_stream("gemma4", text, markers=GEMMA_MARKERS)
    assert final.reasoning == "Plan it.more" and final.content == "Ok. Done."
    assert calls_of(final) == [("f", {"a": 1})]


def test_gemma_truncated_and_broken_calls():
    final = check_stream("gemma4", f'<|tool_call>call:get_weather{{location:{Q}London')
    assert [(c.name, c.arguments) for c in final.calls] == [("get_weather", '{"location":"London')]
    broken = check_stream("gemma4", gem("f", "a:1 b:2") + " after")
    assert [(c.name, c.arguments) for c in broken.calls] == [("f", '{"a":1')] and broken.content == "after"
    assert check_stream("gemma4", "<|tool_call>call:bad name{}<tool_call|>").calls == ()


# ============================================================== functionary_v3_1


def test_functionary_calls_content_and_closer_inside_strings():
    text = 'Sure. <function=get_weather>{"city": "Lima"}</function>\n<function=note>{"t": "</function> ok"}</function>'
    final = check_stream("functionary_v3_1", text, markers=FN_MARKERS)
    assert final.content == "Sure. "
    assert calls_of(final) == [("get_weather", {"city": "Lima"}), ("note", {"t": "</function> ok"})]


def test_functionary_python_tag_is_a_code_call():
    text = "Computing.<|python_tag|>import math\nprint(math.pi)"
    final = check_stream("functionary_v3_1", text, markers=FN_MARKERS)
    assert final.content == "Computing."
    assert calls_of(final) == [("python", {"code": "import math\nprint(math.pi)"})]
    steps = argument_steps("functionary_v3_1", text)
    assert steps[0] == '{"code":"' and '{"code":"import' in steps  # streamed as written


def test_functionary_malformed_and_truncated():
    final = check_stream("functionary_v3_1", "a <function=bad name>{} <function=ok>{\"x\": 1} tail")
    assert calls_of(final) == [("ok", {"x": 1})] and final.content == "a <function=bad name>{} tail"
    cut = check_stream("functionary_v3_1", '<function=f>{"a": "par')
    assert [(c.name, c.arguments) for c in cut.calls] == [("f", '{"a": "par')]
    assert check_stream("functionary_v3_1", "x <function=get_wea").content == "x <function=get_wea"


# ======================================================== random splits, bad input

SAMPLES = {
    "kimi_k2": [
        "Hi. " + section(kimi("functions.a:0", '{"x": "東京 \\"q\\""}'), kimi("functions.b:1", " {} ", space=" ")) + " bye",
        "<think>\nplan\n</think>\n\n" + kimi("functions.f:0", '{"n": [1, 2]}'),
        section(kimi("functions.bad", "{}")) + " <|tool_ca",
    ],
    "deepseek_v3": [
        "Hi.\n" + block(ds("a", '{"x": "``` \\"q\\""}'), ds("b", "{}")) + " bye",
        "<think>\nplan\n</think>\n\n" + block(ds("f", '{"n": [1, 2]}\n  ')),
        DS_BEGIN + f"function{DS_SEP}bad name <{DS_SEP}" + " <｜tool▁ca",
    ],
    "gemma4": [
        "Ok. " + gem("f", f'a:{Q}x, "y" <b>{Q},n:12,l:[1,{{k:null}}]') + gem("g", ""),
        "<|channel>thought\nthink <|tool_call><channel|>" + gem("f", "a:True,b:1.") + " tail <|tool_c",
        gem("f", f"{Q}k{Q}:{Q}v") + "<tool_call|>",
    ],
    "functionary_v3_1": [
        'Go. <function=a>{"x": "</function>"}</function> <function=b>[1, 2]</function> end',
        "text <function=x y>{} <|python_tag|>print('<function=z>')",
        '<function=f>{"a": 1} <functi',
    ],
}
FRAGMENTS = {
    "kimi_k2": list(KIMI_MARKERS) + ["<think>", "functions.f:0", "f:1", "0", " ", "\n", "x", "{", "}", '"', "<|"],
    "deepseek_v3": list(DS_MARKERS) + ["<think>", "function", "f", "\n", "```json\n", "```", "`", " ", "{", "}", '"', "<"],
    "gemma4": list(GEMMA_MARKERS)
    + ["<|channel>thought\n", "call:", "f", "{", "}", "[", "]", ",", ":", Q, "<|", "a", "1", "true", " ", '"', "\\"],
    "functionary_v3_1": list(FN_MARKERS) + ["<function=f>", "f", ">", "{", "}", '"', ":", "1", " ", "\n", "<"],
}


ONE_TOOL = [tool("f", a="string")]
test_kimi_random_splits = split_property("kimi_k2", SAMPLES["kimi_k2"], ONE_TOOL)
test_ds3_random_splits = split_property("deepseek_v3", SAMPLES["deepseek_v3"], ONE_TOOL)
test_gemma_random_splits = split_property("gemma4", SAMPLES["gemma4"], ONE_TOOL)
test_functionary_random_splits = split_property("functionary_v3_1", SAMPLES["functionary_v3_1"], ONE_TOOL)
test_kimi_fragments_never_break_the_rules = fragment_property("kimi_k2", FRAGMENTS["kimi_k2"], ONE_TOOL)
test_ds3_fragments_never_break_the_rules = fragment_property("deepseek_v3", FRAGMENTS["deepseek_v3"], ONE_TOOL)
test_gemma_fragments_never_break_the_rules = fragment_property("gemma4", FRAGMENTS["gemma4"], ONE_TOOL)
test_functionary_fragments_never_break_the_rules = fragment_property("functionary_v3_1", FRAGMENTS["functionary_v3_1"], ONE_TOOL)


def test_long_arguments_keep_the_buffer_bounded():
    text_value = "x <|tool_call_end y ``` z <|\" q \\ " * 600
    args = json.dumps({"text": text_value})
    for format_id, head, tail in [
        ("kimi_k2", SECTION + BEGIN + "functions.f:0" + ARG, END + SECTION_END),
        ("deepseek_v3", DS_BEGIN + DS_CALL + "function" + DS_SEP + "f\n```json\n", "\n```" + DS_CALL_END + DS_END),
        ("functionary_v3_1", "<function=f>", "</function>"),
    ]:
        parser = make_parser(format_id)
        parser.feed(head)
        for i in range(0, len(args), 4):
            parser.feed(args[i : i + 4])
            assert len(getattr(parser, "_buf", "") or getattr(parser, "_pending", "")) < 48, format_id
        parser.feed(tail)
        parser.finish()
        assert parser.snapshot().calls[0].arguments == args, format_id
    parser = make_parser("gemma4")
    parser.feed(f"<|tool_call>call:f{{text:{Q}")
    for i in range(0, len(text_value), 4):
        parser.feed(text_value[i : i + 4])
        assert len(parser._buf) < 48
    parser.feed(f"{Q}}}<tool_call|>")
    parser.finish()
    assert json.loads(parser.snapshot().calls[0].arguments) == {"text": text_value}
