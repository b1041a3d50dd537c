"""The tag families with typed parameters (glm45, seed_oss, minimax_m2, deepseek_v32) and qwen3_coder's closer rules.

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

GLM_MARKERS = ("<tool_call>", "</tool_call>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "</think>")
SEED_MARKERS = ("<seed:tool_call>", "</seed:tool_call>", "<function=", "</function>", "<parameter=", "</parameter>")
MINIMAX_MARKERS = ("<minimax:tool_call>", "</minimax:tool_call>", "</think>")
DSML = "｜DSML｜"
DSML_MARKERS = (DSML, "</think>")


def tool(name: str, closed: bool = False, **props) -> dict:
    """An OpenAI tool whose parameters have the given JSON types (a dict is a whole property schema).

    ``closed``: the schema admits no other parameter (``additionalProperties: false``).
    """
    properties = {k: v if isinstance(v, dict) else {"type": v} for k, v in props.items()}
    parameters = {"type": "object", "properties": properties} | ({"additionalProperties": False} if closed else {})
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


# ========================================================================= glm45


def glm_call(name: str, *pairs: tuple[str, str], sep: str = "\n") -> str:
    body = "".join(f"<arg_key>{k}</arg_key>{sep}<arg_value>{v}</arg_value>{sep}" for k, v in pairs)
    return f"<tool_call>{name}{sep}{body}</tool_call>"


WEATHER = [tool("get_current_weather", city="string", state="string", unit="string")]


def test_glm_plain_text_is_content():
    final = check_stream("glm45", "Nothing to call: 2 < 3 and <b>bold</b>, <tool is a word.", markers=GLM_MARKERS)
    assert final.calls == () and final.content == "Nothing to call: 2 < 3 and <b>bold</b>, <tool is a word."


def test_glm_single_call_with_indented_layout():
    # vLLM: each tag on its own line, indented; the layout is not part of any value
    text = (
        "<tool_call>get_current_weather\n    <arg_key>city</arg_key>\n    <arg_value>Lyon</arg_value>\n"
        "    <arg_key>state</arg_key>\n    <arg_value>ARA</arg_value>\n    </tool_call>"
    )
    final = check_stream("glm45", text, tools=WEATHER, markers=GLM_MARKERS)
    assert calls_of(final) == [("get_current_weather", {"city": "Lyon", "state": "ARA"})]
    assert final.content == ""


def test_glm_parallel_calls_content_before_and_between():
    text = (
        "Checking both cities.\n\n"
        + glm_call("get_current_weather", ("city", "Lyon"), ("unit", "celsius"))
        + "\n\nThen the second one.\n\n"
        + glm_call("get_current_weather", ("city", "Nice"))
    )
    final = check_stream("glm45", text, tools=WEATHER, markers=GLM_MARKERS)
    assert calls_of(final) == [
        ("get_current_weather", {"city": "Lyon", "unit": "celsius"}),
        ("get_current_weather", {"city": "Nice"}),
    ]
    assert final.content == "Checking both cities.\n\nThen the second one.\n\n"


def test_glm47_tags_without_newlines_and_inline_zero_argument_calls():
    tools = [tool("get_date"), tool("get_weather", city="string")]
    text = (
        "Looking.<tool_call>get_date</tool_call><tool_call>get_date\n</tool_call>"
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call>"
    )
    final = check_stream("glm45", text, tools=tools, markers=GLM_MARKERS)
    assert calls_of(final) == [("get_date", {}), ("get_date", {}), ("get_weather", {"city": "Oslo"})]
    assert final.content == "Looking."
    assert check_stream("glm45", "  \n  <tool_call>get_date</tool_call>").content == "  \n  "


def test_glm_name_is_final_only_at_its_terminator():
    # GLM-4.7 writes <tool_call>get_weather<arg_key>: a prefix of the name is never announced
    parser = make_parser("glm45", [tool("get_weather", city="string")])
    parser.feed("<tool_call>get")
    assert parser.snapshot().calls == ()
    parser.feed("_weather<arg_key")
    assert parser.snapshot().calls == ()
    parser.feed(">")
    assert [c.name for c in parser.snapshot().calls] == ["get_weather"]


def test_glm_reasoning_then_content_then_call():
    text = "<think>The user wants weather.</think>\n\nI will look it up.\n" + glm_call(
        "get_weather", ("city", "Hangzhou"), ("date", "2025-09-01")
    )
    final = check_stream("glm45", text, tools=[tool("get_weather", city="string")], markers=GLM_MARKERS + ("<think>",))
    assert final.reasoning == "The user wants weather."
    assert final.content == "I will look it up.\n"
    assert calls_of(final) == [("get_weather", {"city": "Hangzhou", "date": "2025-09-01"})]  # date undeclared: a string


def test_glm_thinking_mode_and_calls_inside_reasoning_are_reasoning():
    text = "Plan: maybe <tool_call>f</tool_call> later.</think>" + glm_call("f", ("a", "1"))
    parser = make_parser("glm45", thinking=True)
    parser.feed(text)
    parser.finish()
    final = parser.snapshot()
    assert final.reasoning == "Plan: maybe <tool_call>f</tool_call> later."
    assert calls_of(final) == [("f", {"a": 1})]


def test_glm_values_typed_by_schema_and_undeclared_values_as_json_if_they_parse():
    text = glm_call(
        "calc",
        ("op", "add"),
        ("a", "42"),
        ("b", "3.14"),
        ("on", "true"),
        ("tags", '["x", "y"]'),
        ("zip", "01234"),
        ("when", "2025-08-01"),
    )
    final = check_stream("glm45", text, tools=[tool("calc", op="string", b="number")], markers=GLM_MARKERS)
    args = json.loads(final.calls[0].arguments)
    assert args == {"op": "add", "a": 42, "b": 3.14, "on": True, "tags": ["x", "y"], "zip": "01234", "when": "2025-08-01"}
    assert isinstance(args["a"], int) and isinstance(args["b"], float)


def test_glm_string_values_keep_every_space_quote_newline_and_unicode():
    value = '    indented "code"\n  second line 你好 🎉    '
    text = glm_call("apply", ("s", value), ("greeting", "你好世界"))
    final = check_stream("glm45", text, tools=[tool("apply", s="string", greeting="string")], markers=GLM_MARKERS)
    assert json.loads(final.calls[0].arguments) == {"s": value, "greeting": "你好世界"}
    assert "你好世界" in final.calls[0].arguments and "\\u4f60" not in final.calls[0].arguments


def test_glm_string_value_streams_as_it_is_written():
    text = glm_call("write", ("path", "/tmp/a.py"), ("body", "def f():\n    return 1\n"))
    steps = argument_steps("glm45", text, [tool("write", path="string", body="string")])
    assert '{"path":"/tmp/a.py","body":"def f' in steps
    assert all("<" not in s for s in steps)  # no half-typed closer in the arguments
    assert json.loads(steps[-1]) == {"path": "/tmp/a.py", "body": "def f():\n    return 1\n"}


def test_glm_value_may_quote_its_closer():
    # the closer counts only before the next parameter or </tool_call>; a key already written is not the next one
    code = "x = '</arg_value>' + '</arg_value>\n<arg_key>code</arg_key>\n'"
    text = glm_call("run", ("code", code), ("lang", "python"))
    final = check_stream("glm45", text, tools=[tool("run", code="string", lang="string")])
    assert json.loads(final.calls[0].arguments) == {"code": code, "lang": "python"}
    # a closed schema: a key it does not list is value text too
    quoted = "</arg_value>\n<arg_key>other</arg_key>\n<arg_value>?"
    text = glm_call("run", ("code", quoted), ("lang", "python"))
    final = check_stream("glm45", text, tools=[tool("run", closed=True, code="string", lang="string")])
    assert json.loads(final.calls[0].arguments) == {"code": quoted, "lang": "python"}


def test_glm_empty_arguments_and_empty_block():
    assert calls_of(check_stream("glm45", "<tool_call>get_time\n</tool_call>")) == [("get_time", {})]
    final = check_stream("glm45", "<tool_call></tool_call>done")
    assert final.calls == () and final.content == "done"


def test_glm_malformed_parameters_never_break_the_call():
    # vLLM: a key without its closer is handled gracefully. Here the text after the first </arg_value>
    # does not continue the call (a key with a newline in it), so that closer is value text.
    text = (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Seattle</arg_value>\n"
        "<arg_key>broken_key\n<arg_value>x</arg_value>\n</tool_call>"
    )
    final = check_stream("glm45", text, tools=[tool("get_weather", city="string")])
    ((name, args),) = calls_of(final)
    assert name == "get_weather" and list(args) == ["city"] and args["city"].startswith("Seattle</arg_value>")
    junk = "<tool_call>f\n<arg_key>a</arg_key> chatter <arg_key>b</arg_key><arg_value>1</arg_value></tool_call>"
    final = check_stream("glm45", junk)
    assert calls_of(final) == [("f", {"b": 1})] and final.content == "<arg_key>a</arg_key> chatter"
    bad_name = check_stream("glm45", '<tool_call>{"name": "f"}</tool_call> rest')
    assert bad_name.calls == () and bad_name.content == '<tool_call>{"name": "f"}</tool_call> rest'


def test_glm_truncated_call_keeps_its_arguments_and_a_cut_opener_is_no_call():
    text = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2025"
    final = check_stream("glm45", text, tools=[tool("get_weather", city="string")])
    assert final.calls[0].name == "get_weather" and final.calls[0].arguments == '{"city":"Beijing","date":2025'
    assert check_stream("glm45", "Hi <tool_call>get_wea").calls == ()


def test_glm_python_literals_become_json():
    text = glm_call("f", ("flag", "True"), ("none", "None"), ("n", "False"), ("word", "True"))
    final = check_stream("glm45", text, tools=[tool("f", flag="boolean", word="string")])
    assert json.loads(final.calls[0].arguments) == {"flag": True, "none": None, "n": False, "word": "True"}


# ====================================================================== seed_oss

SEED_TOOLS = [tool("get_weather", location="string", unit="string")]


def seed_call(name: str, *params: tuple[str, str]) -> str:
    body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in params)
    return f"<seed:tool_call>\n<function={name}>\n{body}</function>\n</seed:tool_call>"


def test_seed_single_call_without_reasoning():
    text = seed_call("get_weather", ("location", "Lisbon, Portugal"))
    final = check_stream("seed_oss", text, tools=SEED_TOOLS, markers=SEED_MARKERS)
    assert calls_of(final) == [("get_weather", {"location": "Lisbon, Portugal"})]
    assert final.content == "" and final.reasoning == ""


def test_seed_reasoning_with_budget_notes_then_a_call():
    # vLLM: reasoning carries <seed:cot_budget_reflect> notes; they stay reasoning text
    reasoning = (
        "The budget is 512.</seed:cot_budget_reflect>\nThe user wants the weather in Lisbon.\n"
        "<seed:cot_budget_reflect>Used 90 tokens.</seed:cot_budget_reflect>\nThe unit can be left out."
    )
    text = f"<seed:think>{reasoning}</seed:think>\n" + seed_call("get_weather", ("location", "Lisbon, Portugal"))
    final = check_stream("seed_oss", text, tools=SEED_TOOLS, markers=SEED_MARKERS)
    assert final.reasoning == reasoning and final.content == ""
    assert calls_of(final) == [("get_weather", {"location": "Lisbon, Portugal"})]


def test_seed_a_call_written_inside_reasoning_is_reasoning():
    inner = seed_call("get_weather", ("location", "Rome"), ("unit", "celsius"))
    text = f"<seed:think>\nThe format is {inner}. Let me do it.</seed:think>" + seed_call(
        "get_weather", ("location", "Rome, Italy"), ("unit", "celsius")
    )
    final = check_stream("seed_oss", text, tools=SEED_TOOLS)
    assert inner in final.reasoning
    assert calls_of(final) == [("get_weather", {"location": "Rome, Italy", "unit": "celsius"})]


def test_seed_thinking_mode_eos_token_and_parallel_calls():
    text = (
        "Two cities.</seed:think>Sure."
        + seed_call("get_weather", ("location", "Rome"))
        + "\n"
        + seed_call("get_weather", ("location", "Milan"))
        + "<seed:eos>"
    )
    parser = make_parser("seed_oss", SEED_TOOLS, thinking=True)
    for ch in text:
        parser.feed(ch)
    parser.finish()
    final = parser.snapshot()
    assert final.reasoning == "Two cities." and final.content == "Sure."
    assert calls_of(final) == [("get_weather", {"location": "Rome"}), ("get_weather", {"location": "Milan"})]


def test_seed_typed_values_and_a_layout_newline_either_way():
    text = "<seed:tool_call>\n<function=f>\n<parameter=n>\n12\n</parameter>\n<parameter=s>x\ny</parameter>\n</function>\n</seed:tool_call>"
    final = check_stream("seed_oss", text, tools=[tool("f", n="integer", s="string")], markers=SEED_MARKERS)
    assert json.loads(final.calls[0].arguments) == {"n": 12, "s": "x\ny"}


# ==================================================================== minimax_m2


def mm_call(*invokes: tuple[str, list[tuple[str, str]]], newlines: bool = False) -> str:
    nl = "\n" if newlines else ""
    body = "".join(
        f'<invoke name="{name}">{nl}' + "".join(f'<parameter name="{k}">{v}</parameter>{nl}' for k, v in params) + f"</invoke>{nl}"
        for name, params in invokes
    )
    return f"<minimax:tool_call>{nl}{body}</minimax:tool_call>"


def test_minimax_content_before_and_one_invoke():
    text = "Let me check. " + mm_call(("get_weather", [("city", "Bergen")]))
    final = check_stream("minimax_m2", text, markers=MINIMAX_MARKERS)
    assert final.content == "Let me check. "
    assert calls_of(final) == [("get_weather", {"city": "Bergen"})]


def test_minimax_several_parameters_and_invokes_in_one_block():
    tools = [tool("get_weather", city="string", days="string"), tool("search", q="string")]
    text = mm_call(("get_weather", [("city", "Bergen"), ("days", "5")]), ("search", [("q", "fjords")]), ("search", [("q", "ferries")]))
    final = check_stream("minimax_m2", text, tools=tools, markers=MINIMAX_MARKERS)
    assert calls_of(final) == [
        ("get_weather", {"city": "Bergen", "days": "5"}),  # declared a string: kept a string
        ("search", {"q": "fjords"}),
        ("search", {"q": "ferries"}),
    ]
    # the same without a schema: a value that is JSON is JSON (llama.cpp's reading)
    assert json.loads(check_stream("minimax_m2", text).calls[0].arguments) == {"city": "Bergen", "days": 5}


def test_minimax_reasoning_layout_newlines_and_nullable_parameter():
    tools = [tool("find", person={"anyOf": [{"type": "string"}, {"type": "null"}]}, limit="integer")]
    text = "<think>\nOne lookup.\n</think>\n\n" + mm_call(("find", [("person", "\nBob\n"), ("limit", "3")]), newlines=True)
    final = check_stream("minimax_m2", text, tools=tools, markers=MINIMAX_MARKERS + ("<think>",))
    assert final.reasoning == "One lookup." and final.content == ""
    assert calls_of(final) == [("find", {"person": "Bob", "limit": 3})]
    null = mm_call(("find", [("person", "null")]))
    assert calls_of(check_stream("minimax_m2", null, tools=tools)) == [("find", {"person": None})]


def test_minimax_value_with_markup_and_a_parameter_tag_that_is_not_a_parameter():
    tools = [tool("write", path="string", html="string")]
    html = '<div class="x"><parameter name="fake">no</parameter></div>'
    text = mm_call(("write", [("html", html), ("path", "index.html")]))
    final = check_stream("minimax_m2", text, tools=tools)
    assert json.loads(final.calls[0].arguments) == {"html": html, "path": "index.html"}


def test_minimax_malformed_invoke_and_unclosed_block():
    final = check_stream("minimax_m2", "<minimax:tool_call>not an invoke</minimax:tool_call>")
    assert final.calls == () and final.content == "<minimax:tool_call>not an invoke</minimax:tool_call>"
    final = check_stream("minimax_m2", '<minimax:tool_call><invoke name="f"><parameter name="a">1</parameter></invoke> and then')
    assert calls_of(final) == [("f", {"a": 1})] and final.content == "and then"


# ================================================================== deepseek_v32


def dsml_call(*invokes: tuple[str, list[tuple[str, str, str]]], block: str = "function_calls") -> str:
    body = "".join(
        f'<{DSML}invoke name="{name}">\n'
        + "".join(f'<{DSML}parameter name="{k}" string="{s}">{v}</{DSML}parameter>\n' for k, s, v in params)
        + f"</{DSML}invoke>\n"
        for name, params in invokes
    )
    return f"<{DSML}{block}>\n{body}</{DSML}{block}>"


def test_dsml_two_invokes_with_unicode_strings():
    text = dsml_call(
        ("get_weather", [("location", "true", "杭州"), ("date", "true", "2024-01-16")]),
        ("get_weather", [("location", "true", "北京"), ("date", "true", "2024-01-16")]),
    )
    final = check_stream("deepseek_v32", text, markers=DSML_MARKERS)
    assert calls_of(final) == [
        ("get_weather", {"location": "杭州", "date": "2024-01-16"}),
        ("get_weather", {"location": "北京", "date": "2024-01-16"}),
    ]
    assert "杭州" in final.calls[0].arguments


def test_dsml_the_schema_types_a_value_and_string_true_types_an_undeclared_one():
    wait = {"anyOf": [{"type": "object"}, {"type": "null"}]}
    tools = [tool("f", n="integer", tags="array", s="string", score="integer", wait=wait)]
    text = dsml_call(
        (
            "f",
            [
                ("n", "false", "7"),
                ("tags", "false", '["a", 1]'),
                ("s", "true", "42"),
                ("score", "true", "42"),  # vLLM: coerced to the schema's integer
                ("wait", "true", '{"type": "for", "minutes": 30}'),  # a union: JSON when it parses
                ("free", "false", "True"),
                ("x", "false", "plain"),
                ("id", "true", "42"),  # undeclared and marked a string
            ],
        )
    )
    final = check_stream("deepseek_v32", text, tools=tools, markers=DSML_MARKERS)
    assert json.loads(final.calls[0].arguments) == {
        "n": 7, "tags": ["a", 1], "s": "42", "score": 42, "wait": {"type": "for", "minutes": 30},
        "free": True, "x": "plain", "id": "42",
    }
    steps = argument_steps("deepseek_v32", text, tools)
    assert '{"n":7' in steps  # a declared integer streams raw


def test_dsml_content_reasoning_and_calls_opened_inside_reasoning():
    text = "<think>Need the tool.</think>Sure.\n\n" + dsml_call(("f", [("a", "true", "x")]))
    final = check_stream("deepseek_v32", text, markers=DSML_MARKERS + ("<think>",))
    assert (final.reasoning, final.content) == ("Need the tool.", "Sure.\n\n")
    # thinking mode: the block opener ends reasoning even without </think> (llama.cpp's thinking end tags)
    parser = make_parser("deepseek_v32", thinking=True)
    parser.feed("Call it now.\n\n" + dsml_call(("f", [("a", "true", "x")])))
    parser.finish()
    final = parser.snapshot()
    assert final.reasoning == "Call it now." and calls_of(final) == [("f", {"a": "x"})]


def test_dsml_v4_block_name_and_value_kept_exactly():
    text = dsml_call(("write", [("content", "true", "\n  line one\nline two\n")]), block="tool_calls")
    final = check_stream("deepseek_v32", text)
    assert calls_of(final) == [("write", {"content": "\n  line one\nline two\n"})]


# ================================================================ qwen3_coder gaps


def qwen_call(name: str, *params: tuple[str, str]) -> str:
    body = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def test_qwen_closer_and_newline_inside_a_value_is_value_text():
    # code that writes the closer (though not as the template's own closing line "\n</parameter>\n",
    # which closes the value where it stands, as llama.cpp reads it): only </function> or the next
    # parameter closes the value
    code = "tags = '''</parameter>\nmore code\n'''"
    text = qwen_call("run", ("code", code), ("lang", "py"))
    final = check_stream("qwen3_coder", text, tools=[tool("run", code="string", lang="string")])
    assert json.loads(final.calls[0].arguments) == {"code": code, "lang": "py"}


def test_qwen_the_schema_tells_the_next_parameter_from_quoted_text():
    # a file that holds a tool call: the parameter it quotes is one already written, so not the next one
    quoting = "<tool_call>\n<function=run>\n<parameter=code>\nx</parameter>\n<parameter=code>\ny"
    text = qwen_call("run", ("code", quoting), ("lang", "py"))
    tools = [tool("run", code="string", lang="string")]
    assert json.loads(check_stream("qwen3_coder", text, tools=tools).calls[0].arguments) == {"code": quoting, "lang": "py"}
    # another name: a closed schema (additionalProperties false) says it cannot be a parameter
    other = "</parameter>\n<parameter=other>\ninside"
    text = qwen_call("run", ("code", other), ("lang", "py"))
    closed = [tool("run", closed=True, code="string", lang="string")]
    assert json.loads(check_stream("qwen3_coder", text, tools=closed).calls[0].arguments) == {"code": other, "lang": "py"}
    # an open schema: a model may add a parameter the schema does not declare, so the name counts
    assert json.loads(check_stream("qwen3_coder", text, tools=tools).calls[0].arguments) == {
        "code": "",
        "other": "inside",
        "lang": "py",
    }


def test_qwen_python_literals_become_json():
    text = qwen_call("f", ("ok", "True"), ("n", "None"), ("free", "False"), ("s", "True"), ("x", "Truthy"))
    tools = [tool("f", ok="boolean", n="integer", s="string", x="boolean")]
    final = check_stream("qwen3_coder", text, tools=tools)
    assert final.calls[0].arguments == '{"ok":true,"n":null,"free":false,"s":"True","x":Truthy}'
    steps = argument_steps("qwen3_coder", text, tools)
    assert not any('"ok":T' in s for s in steps)  # held while it could be a literal, never revised


def test_qwen_raw_values_still_stream_digit_by_digit():
    steps = argument_steps("qwen3_coder", qwen_call("f", ("n", "123")), [tool("f", n="integer")])
    assert steps == ["{", '{"n":', '{"n":1', '{"n":12', '{"n":123', '{"n":123}']


# ======================================================== random splits, bad input

TOOLS = {
    "glm45": [tool("get_weather", city="string", days="integer"), tool("f", a="string", n="integer")],
    "seed_oss": [tool("get_weather", location="string"), tool("f", a="string", n="integer")],
    "minimax_m2": [tool("get_weather", city="string"), tool("f", a="string", n="integer")],
    "deepseek_v32": [tool("get_weather", city="string"), tool("f", a="string", n="integer")],
    "qwen3_coder": [tool("f", a="string", n="integer", ok="boolean")],
}
SAMPLES = {
    "glm45": [
        "Sure.\n" + glm_call("get_weather", ("city", "東京 🌸"), ("days", "12")) + "\n" + glm_call("f", ("a", "x</arg_value>y")),
        "<think>\nhmm <tool_call>inside\n</think>\n\n" + glm_call("f", ("a", 'say "</arg_value>"'), sep=""),
        "<tool_call>f<arg_key>n</arg_key><arg_value>True</arg_value></tool_call> after <tool_c",
    ],
    "seed_oss": [
        "<seed:think>plan <seed:tool_call></seed:think>ok\n" + seed_call("get_weather", ("location", "Köln")),
        seed_call("f", ("a", "</parameter>\nx"), ("n", "5")) + "<seed:eos>",
        "text <seed:tool_call>\nnot a call</seed:tool_call> <seed:tool",
    ],
    "minimax_m2": [
        "Hi. " + mm_call(("get_weather", [("city", "Zürich")]), ("f", [("a", "<b>x</b>"), ("n", "7")]), newlines=True),
        "<think>x</think>" + mm_call(("f", [("a", '</parameter><parameter name="b">')])),
        '<minimax:tool_call><invoke name="f"><parameter name="n">None</parameter></invoke></minimax:tool',
    ],
    "deepseek_v32": [
        "Yes.\n\n" + dsml_call(("get_weather", [("city", "true", "München")]), ("f", [("n", "false", "3"), ("a", "true", "<x>")])),
        "<think>r</think>" + dsml_call(("f", [("a", "true", f"</{DSML}parameter>")]), block="tool_calls"),
        f'<{DSML}function_calls><{DSML}invoke name="f"><{DSML}parameter name="n" string="false">1',
    ],
    "qwen3_coder": [
        qwen_call("f", ("a", "x\n</parameter>\ny"), ("ok", "True"), ("n", "4")),
        qwen_call("f", ("a", "</parameter>\n<parameter=zz>\nq")) + " tail",
    ],
}
FRAGMENTS = {
    "glm45": list(GLM_MARKERS) + ["<think>", "f", "get_weather", "a", "n", "\n", " ", "x", "1", "True", "<", ">", '"', "東"],
    "seed_oss": list(SEED_MARKERS)
    + ["<seed:think>", "</seed:think>", "<seed:eos>", "<function=f>", "<parameter=a>", "<parameter=n>", "\n", " ", "x", "1", "<"],
    "minimax_m2": list(MINIMAX_MARKERS)
    + ["<think>", '<invoke name="f">', "</invoke>", '<parameter name="a">', '<parameter name="n">', "</parameter>", '"', ">", "\n", "x", "1", "None"],
    "deepseek_v32": [
        f"<{DSML}function_calls>", f"</{DSML}function_calls>", f'<{DSML}invoke name="f">', f"</{DSML}invoke>",
        f'<{DSML}parameter name="a" string="true">', f'<{DSML}parameter name="n" string="false">', f"</{DSML}parameter>",
        DSML, "<think>", "</think>", "\n", " ", "x", "1", '"', "<",
    ],
}


test_glm_random_splits = split_property("glm45", SAMPLES["glm45"], TOOLS["glm45"])
test_seed_random_splits = split_property("seed_oss", SAMPLES["seed_oss"], TOOLS["seed_oss"])
test_minimax_random_splits = split_property("minimax_m2", SAMPLES["minimax_m2"], TOOLS["minimax_m2"])
test_dsml_random_splits = split_property("deepseek_v32", SAMPLES["deepseek_v32"], TOOLS["deepseek_v32"])
test_qwen_gap_random_splits = split_property("qwen3_coder", SAMPLES["qwen3_coder"], TOOLS["qwen3_coder"])
test_glm_fragments_never_break_the_rules = fragment_property("glm45", FRAGMENTS["glm45"], TOOLS["glm45"])
test_seed_fragments_never_break_the_rules = fragment_property("seed_oss", FRAGMENTS["seed_oss"], TOOLS["seed_oss"])
test_minimax_fragments_never_break_the_rules = fragment_property("minimax_m2", FRAGMENTS["minimax_m2"], TOOLS["minimax_m2"])
test_dsml_fragments_never_break_the_rules = fragment_property("deepseek_v32", FRAGMENTS["deepseek_v32"], TOOLS["deepseek_v32"])


def test_long_values_keep_the_buffer_bounded():
    value = ('line "q" </arg_value>x </parameter>y \\ more\n' * 400)[:16000]
    for format_id, head, tail in [
        ("glm45", "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>", "</arg_value>\n</tool_call>"),
        ("seed_oss", "<seed:tool_call>\n<function=f>\n<parameter=a>", "</parameter>\n</function>\n</seed:tool_call>"),
        ("minimax_m2", '<minimax:tool_call><invoke name="f"><parameter name="a">', "</parameter></invoke></minimax:tool_call>"),
        (
            "deepseek_v32",
            f'<{DSML}function_calls><{DSML}invoke name="f"><{DSML}parameter name="a" string="true">',
            f"</{DSML}parameter></{DSML}invoke></{DSML}function_calls>",
        ),
    ]:
        parser = make_parser(format_id, [tool("f", a="string")])
        parser.feed(head)
        for i in range(0, len(value), 4):
            parser.feed(value[i : i + 4])
            assert len(parser._buf) < 48, format_id
        parser.feed(tail)
        parser.finish()
        assert json.loads(parser.snapshot().calls[0].arguments) == {"a": value}, format_id


# ------------------------------------------------------------ object/array parameters written as Python literals


def test_structured_parameters_written_as_python_literals_stream_as_json():
    tools = [tool("put", doc="object", rows="array")]
    head = "<tool_call>\n<function=put>\n<parameter=doc>\n"
    text = head + "{'ok': True, 'n': None, 't': (1, 'a')}\n</parameter>\n</function>\n</tool_call>"
    steps = argument_steps("qwen3_coder", text, tools)
    assert json.loads(steps[-1]) == {"doc": {"ok": True, "n": None, "t": [1, "a"]}}
    assert all(steps[-1].startswith(s) for s in steps) and len(steps) > 5  # streamed, append-only
    # not a literal at all: the value's text becomes a JSON string, so the arguments stay JSON
    odd = check_stream("qwen3_coder", head + "see above\n</parameter>\n</function>\n</tool_call>", tools=tools)
    assert calls_of(odd) == [("put", {"doc": "see above"})]
    # cut off inside the value: what was written, nothing invented
    cut = check_stream("qwen3_coder", head + '{"a": [1, 2', tools=tools)
    assert cut.calls[0].arguments == '{"doc":{"a": [1, 2'
    # an undeclared parameter holding a Python container is written once, as its JSON
    held = check_stream("glm45", "<tool_call>f\n<arg_key>x</arg_key>\n<arg_value>{'k': [None]}</arg_value>\n</tool_call>")
    assert calls_of(held) == [("f", {"x": {"k": [None]}})]
