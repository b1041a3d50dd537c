"""The marker formats (qwen3_coder, deepseek_v31, gpt_oss) against the parser rules.

Every stream goes through ``check_stream`` (incremental == from-scratch on every
prefix, names only complete, append-only arguments, no marker in content), fed
one character at a time unless a test says otherwise; hypothesis then tries
random splittings of sample generations.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from callscope.engine.core.parse_model import ArgumentsAppended, ContentAppended, Parse
from callscope.engine.formats import make_parser
from callscope.engine.formats.deepseek_v31 import Parser as DeepSeekParser
from callscope.engine.formats.qwen3_coder import Parser as QwenParser
from tests.support.format_harness import check_stream, pieces_by

QWEN_MARKERS = ("<tool_call>", "</tool_call>", "<function=", "</function>", "<parameter=", "</parameter>", "</think>")
DS_MARKERS = (
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁sep｜>",
    "</think>",
)
OSS_MARKERS = ("<|start|>", "<|channel|>", "<|constrain|>", "<|message|>", "<|end|>", "<|call|>", "<|return|>")


def tool(name: str, **props: str) -> dict:
    """An OpenAI tool whose parameters have the given JSON types."""
    properties = {key: {"type": kind} for key, kind in props.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties}}}


def argument_steps(format_id: str, text: str, tools=None, index: int = 0, parser=None) -> list[str]:
    """Every distinct value the arguments of call ``index`` take, fed one character at a time."""
    parser = parser or make_parser(format_id, tools)
    seen: list[str] = []
    for ch in text:
        parser.feed(ch)
        calls = parser.snapshot().calls
        if len(calls) > index and (not seen or seen[-1] != calls[index].arguments):
            seen.append(calls[index].arguments)
    parser.finish()
    calls = parser.snapshot().calls
    if len(calls) > index and (not seen or seen[-1] != calls[index].arguments):
        seen.append(calls[index].arguments)
    return seen


def fed(parser, text: str, step: int = 1) -> Parse:
    for i in range(0, len(text), step):
        parser.feed(text[i : i + step])
    parser.finish()
    return parser.snapshot()


def qwen_call(name: str, *params: tuple[str, str]) -> str:
    body = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def ds_call(name: str, args: str) -> str:
    return f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{args}<｜tool▁call▁end｜>"


def ds_calls(*calls: str) -> str:
    return "<｜tool▁calls▁begin｜>" + "".join(calls) + "<｜tool▁calls▁end｜>"


def oss_call(name: str, args: str, recipient_in_role: bool = False) -> str:
    if recipient_in_role:
        return f"<|start|>assistant to=functions.{name}<|channel|>commentary json<|message|>{args}<|call|>"
    return f"<|start|>assistant<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{args}<|call|>"


# =================================================================== qwen3_coder

WEATHER = [tool("get_weather", city="string", days="integer")]


def test_qwen_single_call_after_content():
    text = "Let me check.\n\n" + qwen_call("get_weather", ("city", "Paris"), ("days", "3"))
    final = check_stream("qwen3_coder", text, tools=WEATHER, markers=QWEN_MARKERS)
    assert final.content == "Let me check.\n\n"
    assert [c.name for c in final.calls] == ["get_weather"]
    assert final.calls[0].arguments == '{"city":"Paris","days":3}'


def test_qwen_parallel_calls_in_blocks_and_in_one_block():
    text = (
        qwen_call("get_weather", ("city", "Paris"))
        + "\n"
        + qwen_call("get_weather", ("city", "Oslo"))
        + "\n<tool_call>\n<function=a>\n</function>\n<function=b>\n</function>\n</tool_call>"
    )
    final = check_stream("qwen3_coder", text, tools=WEATHER, markers=QWEN_MARKERS)
    assert final.content == ""  # layout between blocks is not content
    assert [(c.name, c.arguments) for c in final.calls] == [
        ("get_weather", '{"city":"Paris"}'),
        ("get_weather", '{"city":"Oslo"}'),
        ("a", "{}"),
        ("b", "{}"),
    ]


def test_qwen_reasoning_then_call():
    text = "<think>\nThe user wants weather.\n</think>\n\nSure.\n" + qwen_call("get_weather", ("city", "Rome"))
    final = check_stream("qwen3_coder", text, tools=WEATHER, markers=QWEN_MARKERS + ("<think>",))
    assert final.reasoning == "The user wants weather."
    assert final.content == "Sure.\n"
    assert final.calls[0].arguments == '{"city":"Rome"}'


def test_qwen_thinking_mode_starts_inside_reasoning():
    text = "Weather, then.\n</think>\n\n" + qwen_call("get_weather", ("city", "Rome"))
    one_char = fed(QwenParser(WEATHER, thinking=True), text)
    assert one_char == fed(QwenParser(WEATHER, thinking=True), text, step=len(text))
    assert one_char.reasoning == "Weather, then."
    assert one_char.content == ""
    # the same text without the option: the reasoning already went out as content, </think> is dropped
    plain = check_stream("qwen3_coder", text, tools=WEATHER, markers=QWEN_MARKERS)
    assert plain.content == "Weather, then.\n" and plain.reasoning == ""


def test_qwen_multibyte_quotes_backslashes_newlines():
    value = 'Tōkyō 東京 🌸👩‍💻 "quoted" back\\slash\ttab\nline two\n'
    text = qwen_call("note", ("text", value), ("tag", "ünï"))
    tools = [tool("note", text="string", tag="string")]
    final = check_stream("qwen3_coder", text, tools=tools, markers=QWEN_MARKERS)
    assert json.loads(final.calls[0].arguments) == {"text": value, "tag": "ünï"}
    assert "🌸" in final.calls[0].arguments  # not \u-escaped, like llama.cpp's dump()


def test_qwen_value_may_contain_the_closer_text():
    # </parameter> not followed by a newline or a tag is value text (code that writes XML)
    code = 'xml = "<parameter=a></parameter>" + tail</parameter>x'
    text = qwen_call("run", ("code", code))
    final = check_stream("qwen3_coder", text, tools=[tool("run", code="string")])
    assert json.loads(final.calls[0].arguments) == {"code": code}


def test_qwen_closer_followed_directly_by_a_tag_closes():
    text = "<tool_call>\n<function=f>\n<parameter=a>\nx</parameter><parameter=b>\ny</parameter></function></tool_call>"
    final = check_stream("qwen3_coder", text, tools=[tool("f", a="string", b="string")], markers=QWEN_MARKERS)
    assert final.calls[0].arguments == '{"a":"x","b":"y"}'


def test_qwen_half_typed_closer_never_enters_arguments():
    text = qwen_call("f", ("a", "hello"))
    steps = argument_steps("qwen3_coder", text, [tool("f", a="string")])
    assert steps[-1] == '{"a":"hello"}'
    assert all("<" not in s and "\\n" not in s for s in steps)
    # the closing quote comes with the template's whole closing line "\n</parameter>\n", as llama.cpp's
    # mapper sends it (not before: a half-typed closer is held), and "}" at </function>
    assert steps.index('{"a":"hello"') == steps.index('{"a":"hello') + 1
    assert steps.index('{"a":"hello"}') == steps.index('{"a":"hello"') + 1


def test_qwen_a_closing_line_inside_a_value_ends_it_as_llama_cpp_does():
    # "\n</parameter>\n" is the template's own closing line: it closes the value when its newline
    # arrives (llama.cpp sends the quote there); what follows that is not a parameter is content
    text = qwen_call("f", ("a", "x\n</parameter>\nmore"))
    final = check_stream("qwen3_coder", text, tools=[tool("f", a="string")])
    assert final.calls[0].arguments == '{"a":"x"}' and final.content.startswith("more")


def test_qwen_value_newlines_beyond_the_layout_one_are_kept():
    text = qwen_call("f", ("a", "\nx\n"))  # the value itself starts and ends with a newline
    final = check_stream("qwen3_coder", text, tools=[tool("f", a="string")])
    assert json.loads(final.calls[0].arguments) == {"a": "\nx\n"}
    crlf = "<tool_call>\r\n<function=f>\r\n<parameter=a>\r\nx\r\n</parameter>\r\n</function>\r\n</tool_call>"
    assert check_stream("qwen3_coder", crlf, tools=[tool("f", a="string")]).calls[0].arguments == '{"a":"x"}'


def test_qwen_function_without_parameters_is_empty_object():
    text = "<tool_call>\n<function=list_files>\n</function>\n</tool_call>"
    final = check_stream("qwen3_coder", text, markers=QWEN_MARKERS)
    assert final.calls[0].name == "list_files" and final.calls[0].arguments == "{}"


def test_qwen_object_and_array_values_with_schema_stream_raw():
    obj = '{"a": [1, {"b": "c"}], "d": null}'
    text = qwen_call("f", ("opts", obj), ("ids", "[1, 2, 3]"))
    tools = [tool("f", opts="object", ids="array")]
    final = check_stream("qwen3_coder", text, tools=tools, markers=QWEN_MARKERS)
    assert json.loads(final.calls[0].arguments) == {"opts": json.loads(obj), "ids": [1, 2, 3]}
    steps = argument_steps("qwen3_coder", text, tools)
    assert '{"opts":{"a": [1' in steps  # written as it arrives, not held


def test_qwen_integer_with_schema_streams_unquoted_digit_by_digit():
    text = qwen_call("f", ("n", "12"), ("ok", "true"), ("x", "1.5"))
    steps = argument_steps("qwen3_coder", text, [tool("f", n="integer", ok="boolean", x="number")])
    assert steps[:5] == ["{", '{"n":', '{"n":1', '{"n":12', '{"n":12,"ok":']
    assert steps[-1] == '{"n":12,"ok":true,"x":1.5}'


def test_qwen_unknown_type_is_held_until_complete():
    text = qwen_call("f", ("n", "42"), ("word", "hello"), ("zip", "01234"), ("obj", '{"k": 1}'), ("q", '"hi"'))
    steps = argument_steps("qwen3_coder", text, tools=None)
    assert '{"n":4' not in steps and '{"n":42,"word":"h' not in steps
    assert '{"n":42,"word":' in steps  # appears in one piece once </parameter> and the next parameter arrived
    assert json.loads(steps[-1]) == {"n": 42, "word": "hello", "zip": "01234", "obj": {"k": 1}, "q": '"hi"'}
    check_stream("qwen3_coder", text, markers=QWEN_MARKERS)
    # a parameter the schema does not declare is held too
    declared = argument_steps("qwen3_coder", text, [tool("f", word="string")])
    assert '{"n":4' not in declared and '{"n":42,"word":"h' in declared


def test_qwen_unknown_type_complete_only_at_the_end():
    text = "<tool_call>\n<function=f>\n<parameter=n>\n7\n</parameter>"
    final = check_stream("qwen3_coder", text)
    assert final.calls[0].arguments == '{"n":7'  # value closed by the end of generation, call truncated


def test_qwen_content_only():
    text = "Use a < b and <b>bold</b>; a <tool token is not <tool_call"
    final = check_stream("qwen3_coder", text, markers=("<tool_call>",))
    assert final.content == text and final.calls == ()
    parser = make_parser("qwen3_coder")
    parser.feed(text)
    assert parser.snapshot().content == text[: -len("<tool_call")]  # held back until the end decides
    assert parser.finish() == [ContentAppended("<tool_call")]


def test_qwen_malformed_is_content():
    not_a_call = '<tool_call>\n{"name": "f"}\n</tool_call> done'
    final = check_stream("qwen3_coder", not_a_call)
    assert final.calls == () and final.content == not_a_call
    bad_name = "<tool_call>\n<function=two\nlines>\n</function>"
    final = check_stream("qwen3_coder", bad_name)
    assert final.calls == () and final.content == bad_name
    long_name = "<tool_call><function=" + "n" * 300 + ">"
    assert check_stream("qwen3_coder", long_name).content == long_name
    junk = "<tool_call>\n<function=f>\nchatter\n<parameter=a>\nx\n</parameter>\n</function>\n</tool_call>"
    final = check_stream("qwen3_coder", junk, tools=[tool("f", a="string")])
    assert final.content == "chatter" and final.calls[0].arguments == '{"a":"x"}'
    bad_param = "<tool_call>\n<function=f>\n<parameter=>\n</function>"
    final = check_stream("qwen3_coder", bad_param)
    assert final.calls[0].arguments == "{}" and final.content == "<parameter=>"


def test_qwen_missing_function_closer_and_unclosed_block():
    text = "<tool_call>\n<function=f>\n<parameter=a>\nx\n</parameter>\n</tool_call>after"
    final = check_stream("qwen3_coder", text, tools=[tool("f", a="string")])
    assert final.calls[0].arguments == '{"a":"x"}' and final.content == "after"
    text = "<tool_call>\n<function=f>\n</function>\nThat was it."
    final = check_stream("qwen3_coder", text)
    assert final.calls[0].arguments == "{}" and final.content == "That was it."


def test_qwen_truncated_mid_call_keeps_arguments_so_far():
    tools = [tool("f", a="string", n="integer")]
    full = qwen_call("f", ("n", "5"), ("a", "partial value"))
    cut = full.index("value") + len("value")
    final = check_stream("qwen3_coder", full[:cut], tools=tools)
    assert final.calls[0].arguments == '{"n":5,"a":"partial value'
    half_closer = full[: full.index("</parameter>", cut) + len("</par")]
    assert check_stream("qwen3_coder", half_closer, tools=tools).calls[0].arguments == '{"n":5,"a":"partial value'
    # a held value of unknown type is written as far as it got
    assert check_stream("qwen3_coder", full[:cut]).calls[0].arguments == '{"n":5,"a":"partial value'
    # an opener whose name never completed is no call
    assert check_stream("qwen3_coder", "Hi <tool_call>\n<function=get_wea").calls == ()


def test_qwen_long_value_keeps_the_buffer_bounded():
    parser = make_parser("qwen3_coder", [tool("f", a="string")])
    parser.feed("<tool_call>\n<function=f>\n<parameter=a>\n")
    value = ('line with "quotes" </parameter>x \\ and more\n' * 400)[:16000]
    for i in range(0, len(value), 4):
        parser.feed(value[i : i + 4])
        assert len(parser._buf) < 40
    parser.feed("\n</parameter>\n</function>\n</tool_call>")
    parser.finish()
    assert json.loads(parser.snapshot().calls[0].arguments) == {"a": value}


# ================================================================== deepseek_v31


def test_deepseek_single_call_after_content():
    text = "Let me look.\n" + ds_calls(ds_call("get_weather", '{"city": "Paris"}'))
    final = check_stream("deepseek_v31", text, markers=DS_MARKERS)
    assert final.content == "Let me look.\n"
    assert [(c.name, c.arguments) for c in final.calls] == [("get_weather", '{"city": "Paris"}')]


def test_deepseek_parallel_calls():
    text = ds_calls(ds_call("a", '{"x": 1}'), "\n", ds_call("b", '{"y": [2]}')) + "\n\nDone."
    final = check_stream("deepseek_v31", text, markers=DS_MARKERS)
    assert [(c.name, c.arguments) for c in final.calls] == [("a", '{"x": 1}'), ("b", '{"y": [2]}')]
    assert final.content == ""  # vLLM's DeepSeek V3.1 parser keeps only the text before the calls


def test_deepseek_reasoning_then_call():
    text = "<think>\nNeed a tool.\n</think>\n\n" + ds_calls(ds_call("f", "{}"))
    final = check_stream("deepseek_v31", text, markers=DS_MARKERS + ("<think>",))
    assert final.reasoning == "Need a tool." and final.content == "" and final.calls[0].arguments == "{}"


def test_deepseek_thinking_mode_starts_inside_reasoning():
    text = "The user wants X.</think>Here you go." + ds_calls(ds_call("f", '{"a": 1}'))
    one_char = fed(DeepSeekParser(thinking=True), text)
    assert one_char == fed(DeepSeekParser(thinking=True), text, step=len(text))
    assert (one_char.reasoning, one_char.content) == ("The user wants X.", "Here you go.")
    assert one_char.calls[0].arguments == '{"a": 1}'
    plain = check_stream("deepseek_v31", text, markers=DS_MARKERS)  # not told: content, </think> dropped
    assert plain.content == "The user wants X.Here you go." and plain.reasoning == ""


def test_deepseek_multibyte_and_escapes_stream_raw():
    args = '{"text": "東京 🌸 \\"q\\" back\\\\slash\\nnew line", "n": 12}'
    text = ds_calls(ds_call("note", args))
    final = check_stream("deepseek_v31", text, markers=DS_MARKERS)
    assert final.calls[0].arguments == args
    assert json.loads(args)["text"] == '東京 🌸 "q" back\\slash\nnew line'
    steps = argument_steps("deepseek_v31", text)
    assert steps[:4] == ["", "{", '{"', '{"t']  # named with empty arguments first
    assert all(args.startswith(s) for s in steps)  # the raw text, prefix by prefix, no half-typed closer


def test_deepseek_markers_inside_a_json_string():
    # another marker inside the arguments is argument text; only the call's end closes them
    args = '{"doc": "write <｜tool▁calls▁begin｜> and <｜tool▁sep｜> literally"}'
    final = check_stream("deepseek_v31", ds_calls(ds_call("f", args)))
    assert final.calls[0].arguments == args
    # the first <｜tool▁call▁end｜> ends the arguments even inside a string (text cannot tell the special token)
    text = ds_calls(ds_call("f", '{"doc": "a <｜tool▁call▁end｜> b"}'))
    final = check_stream("deepseek_v31", text)
    assert final.calls[0].arguments == '{"doc": "a'


def test_deepseek_whitespace_around_arguments_is_layout():
    text = ds_calls(ds_call("f", '\n  {"a": 1,\n   "b": 2}  \n'))
    final = check_stream("deepseek_v31", text)
    assert final.calls[0].arguments == '{"a": 1,\n   "b": 2}'


def test_deepseek_empty_args_and_optional_call_begin():
    text = "<｜tool▁calls▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    final = check_stream("deepseek_v31", text, markers=DS_MARKERS)
    assert [(c.name, c.arguments) for c in final.calls] == [("f", "{}")]
    variant = "<｜tool▁calls｜>" + ds_call("g", '{"a": 1}') + "<｜tool▁calls▁end｜>"
    assert check_stream("deepseek_v31", variant).calls[0].name == "g"


def test_deepseek_content_only():
    text = "No tools needed: 2 < 3, <｜tool is a word, and so is <think> mid-text <｜tool▁ca"
    final = check_stream("deepseek_v31", text, markers=("<｜tool▁calls▁begin｜>",))
    assert final.content == text and final.calls == ()


def test_deepseek_malformed_is_content():
    bad_name = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>two\nlines<｜tool▁sep｜>{}"
    final = check_stream("deepseek_v31", bad_name)
    assert final.calls == ()
    assert final.content == "<｜tool▁call▁begin｜>two\nlines<｜tool▁sep｜>{}"
    junk = "<｜tool▁calls▁begin｜><b>not a call</b>"
    final = check_stream("deepseek_v31", junk)
    assert final.calls == () and final.content == "<b>not a call</b>"


def test_deepseek_truncated_mid_call_keeps_arguments_so_far():
    text = ds_calls(ds_call("f", '{"city": "Par'))
    cut = text.index("<｜tool▁call▁end｜>") + 5  # a half-typed closer at the end
    final = check_stream("deepseek_v31", text[:cut])
    assert final.calls[0].arguments == '{"city": "Par'
    assert check_stream("deepseek_v31", "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_wea").calls == ()


def test_deepseek_long_arguments_keep_the_buffer_bounded():
    parser = make_parser("deepseek_v31")
    parser.feed("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>")
    args = json.dumps({"text": "x <｜tool▁sep｜> y " * 1000})
    for i in range(0, len(args), 4):
        parser.feed(args[i : i + 4])
        assert len(parser._buf) < 40
    parser.feed("<｜tool▁call▁end｜><｜tool▁calls▁end｜>")
    parser.finish()
    assert parser.snapshot().calls[0].arguments == args


# ======================================================================= gpt_oss


def test_oss_single_call_after_preamble_content():
    text = "<|channel|>commentary<|message|>Checking the weather.<|end|>" + oss_call("get_weather", '{"city":"Paris"}')
    final = check_stream("gpt_oss", text, markers=OSS_MARKERS)
    assert final.content == "Checking the weather."
    assert [(c.name, c.arguments) for c in final.calls] == [("get_weather", '{"city":"Paris"}')]


def test_oss_recipient_in_role_and_parallel_calls():
    text = oss_call("a", '{"x":1}', recipient_in_role=True)[len("<|start|>assistant") :] + oss_call("b", "{}")
    final = check_stream("gpt_oss", text, markers=OSS_MARKERS)
    assert [(c.name, c.arguments) for c in final.calls] == [("a", '{"x":1}'), ("b", "{}")]
    assert final.content == "" and final.reasoning == ""


def test_oss_reasoning_then_call_then_final():
    text = (
        "<|channel|>analysis<|message|>User wants weather. Use the tool.<|end|>"
        + oss_call("get_weather", '{"city":"Oslo"}')
        + "<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>"
    )
    final = check_stream("gpt_oss", text, markers=OSS_MARKERS)
    assert final.reasoning == "User wants weather. Use the tool."
    assert final.content == "It is sunny."
    assert final.calls[0].arguments == '{"city":"Oslo"}'


def test_oss_name_appears_only_with_the_whole_header():
    text = oss_call("get_weather", "{}")
    parser = make_parser("gpt_oss")
    for i in range(1, len(text)):
        parser.feed(text[i - 1])
        calls = parser.snapshot().calls
        assert calls == () or text[:i].endswith("<|message|>") or calls[0].name == "get_weather"
    header_end = text.index("<|message|>") + len("<|message|>")
    parser = make_parser("gpt_oss")
    parser.feed(text[: header_end - 1])
    assert parser.snapshot().calls == ()
    parser.feed(text[header_end - 1])
    assert parser.snapshot().calls[0].name == "get_weather"


def test_oss_multibyte_and_escapes():
    args = '{"text":"東京 🌸 \\"q\\" back\\\\slash\\nx"}'
    final = check_stream("gpt_oss", oss_call("note", args)[len("<|start|>assistant") :], markers=OSS_MARKERS)
    assert final.calls[0].arguments == args
    text = "<|channel|>final<|message|>Café ☕ — 日本語 👍<|return|>"
    assert check_stream("gpt_oss", text, markers=OSS_MARKERS).content == "Café ☕ — 日本語 👍"


def test_oss_marker_text_inside_a_json_string_ends_the_arguments():
    # the first <|call|> ends the body: a text-level parser cannot tell the special token from the characters
    text = oss_call("f", '{"doc":"a <|call|> b"}')
    final = check_stream("gpt_oss", text)
    assert final.calls[0].arguments == '{"doc":"a '
    # text that is not a body end stays in the arguments
    args = '{"html":"<b>bold</b> <|not a marker|>"}'
    assert check_stream("gpt_oss", oss_call("f", args)).calls[0].arguments == args


def test_oss_empty_args_and_commentary_without_recipient_is_content():
    text = "<|channel|>commentary<|message|>I will call f.<|end|>" + oss_call("f", "{}")
    final = check_stream("gpt_oss", text, markers=OSS_MARKERS)
    assert final.content == "I will call f." and final.calls[0].arguments == "{}"


def test_oss_builtin_recipient_follows_its_channel():
    text = (
        "<|channel|>analysis to=python<|message|>print(1)<|call|><|start|>assistant<|channel|>final<|message|>1<|end|>"
    )
    final = check_stream("gpt_oss", text, markers=OSS_MARKERS)
    assert final.calls == () and final.reasoning == "print(1)" and final.content == "1"


def test_oss_content_only():
    text = "<|channel|>final<|message|>Use <b> and a < b; <|notamarker|> is text. <|en"
    final = check_stream("gpt_oss", text, markers=("<|end|>", "<|return|>"))
    assert final.content == text[len("<|channel|>final<|message|>") :]
    assert final.calls == ()


def test_oss_malformed_is_content():
    plain = "Hello, no harmony here.\nSecond line."
    final = check_stream("gpt_oss", plain)
    assert final.content == plain and final.calls == ()
    broken_header = '<|channel|>commentary to=functions.f\n{"a": 1}'
    final = check_stream("gpt_oss", broken_header)
    assert final.calls == () and final.content == broken_header
    stray = "<|channel|>final<|message|>A<|end|><|end|>\n B<|call|>"
    assert check_stream("gpt_oss", stray).content == "AB"


def test_oss_truncated_mid_call_keeps_arguments_so_far():
    text = oss_call("f", '{"city":"Par')
    final = check_stream("gpt_oss", text[: -len("<|call|>")] + "<|ca")
    assert final.calls[0].arguments == '{"city":"Par'
    header_only = "<|channel|>commentary to=functions.get_wea"
    final = check_stream("gpt_oss", header_only)
    assert final == Parse(partial=False)


def test_oss_long_arguments_keep_the_buffer_bounded():
    parser = make_parser("gpt_oss")
    parser.feed("<|channel|>commentary to=functions.f <|constrain|>json<|message|>")
    args = json.dumps({"text": "x <|channel y " * 1000})
    for i in range(0, len(args), 4):
        parser.feed(args[i : i + 4])
        assert len(parser._buf) < 40
    parser.feed("<|call|>")
    parser.finish()
    assert parser.snapshot().calls[0].arguments == args


# ============================================================ events and splits


def test_argument_events_are_pure_appends():
    text = qwen_call("f", ("a", "x"))
    parser = make_parser("qwen3_coder", [tool("f", a="string")])
    events = [e for ch in text for e in parser.feed(ch)] + parser.finish()
    args = "".join(e.text for e in events if isinstance(e, ArgumentsAppended))
    assert args == '{"a":"x"}'


QWEN_SAMPLES = [
    "I'll look.\n" + qwen_call("get_weather", ("city", "東京 🌸"), ("days", "12")) + "\n" + qwen_call("x", ("v", "1")),
    "<think>\nhmm <tool_call> inside\n</think>\n\n" + qwen_call("f", ("code", 'a = "</parameter>"\n\\n')),
    "<tool_call>\n<function=f>\n<parameter=a>\nx</parameter><parameter=b>\n[1]\n</parameter>\n</function>\n</tool_call>",
    "text <tool_call>\nnot a call</tool_call> <tool_c",
]
DS_SAMPLES = [
    "Hi.\n" + ds_calls(ds_call("a", '{"x": "東京 \\"q\\""}'), ds_call("b", " {} ")) + " bye",
    "<think>\nplan\n</think>\n\n" + ds_calls(ds_call("f", '{"n": [1, 2]}')),
    '<｜tool▁calls▁begin｜>g<｜tool▁sep｜>{"a": 1}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>bad\nname<｜tool▁sep｜>{} <｜tool▁ca",
]
OSS_SAMPLES = [
    "<|channel|>analysis<|message|>think 🌸<|end|>" + oss_call("f", '{"a":"<b>x</b>"}'),
    oss_call("a", '{"x":1}', recipient_in_role=True)[len("<|start|>assistant") :] + oss_call("b", "{}"),
    "<|channel|>final<|message|>Done 東京<|return|>",
    "plain text <|en",
]
TOOLS_BY_FORMAT = {"qwen3_coder": [tool("get_weather", city="string", days="integer"), tool("f", b="array")]}


def _split_property(format_id: str, samples: list[str]):
    @settings(max_examples=60, deadline=None)
    @given(st.data())
    def run(data):
        text = data.draw(st.sampled_from(samples))
        cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12))
        pieces = pieces_by(text, cuts)
        check_stream(format_id, text, pieces, tools=TOOLS_BY_FORMAT.get(format_id))

    return run


test_qwen_random_splits = _split_property("qwen3_coder", QWEN_SAMPLES)
test_deepseek_random_splits = _split_property("deepseek_v31", DS_SAMPLES)
test_oss_random_splits = _split_property("gpt_oss", OSS_SAMPLES)


# Bad input never crashes and still keeps every rule: texts glued from marker fragments.
FRAGMENTS = {
    "qwen3_coder": list(QWEN_MARKERS)
    + ["<think>", "<function=f>", "<parameter=a>", "<parameter=n>", "</parameter>\n", "</para", "<tool_c"]
    + ["\n", "\r\n", " ", "x", "1", ">", "<", '"', "\\", "東"],
    "deepseek_v31": list(DS_MARKERS)
    + ["<think>", "<｜tool▁calls｜>", "<｜tool▁ca", "f", "\n", " ", "x", "{", "}", '"', "<", "東"],
    "gpt_oss": list(OSS_MARKERS)
    + [
        "assistant",
        " to=functions.f",
        "to=python",
        "analysis",
        "final",
        "commentary",
        " json",
        "<|",
        "\n",
        " ",
        "x",
        "{",
    ],
}


def _fragment_property(format_id: str):
    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.sampled_from(FRAGMENTS[format_id]), max_size=30), st.lists(st.integers(1, 400), max_size=8))
    def run(fragments, cuts):
        text = "".join(fragments)
        tools = [tool("f", a="string", n="integer")]
        check_stream(format_id, text, pieces_by(text, cuts), tools=tools)

    return run


test_qwen_fragments_never_break_the_rules = _fragment_property("qwen3_coder")
test_deepseek_fragments_never_break_the_rules = _fragment_property("deepseek_v31")
test_oss_fragments_never_break_the_rules = _fragment_property("gpt_oss")
