"""The JSON tool-call formats: hermes, llama3_json, mistral, generic, emulated.

Each generation is checked with :func:`tests.support.format_harness.check_stream`
(fed one character at a time unless said otherwise), which asserts the parser
rules on every prefix: incremental equals from-scratch, names appear once and
complete, arguments only grow, no marker reaches content, fragments
concatenate to the terminal arguments. The tests then assert the terminal
parse itself, and the arguments are compared with the exact source text the
model wrote (never a re-serialisation).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callscope.engine.core.parse_model import ArgumentsAppended, CallNamed, CallOpened, Parse, ParsedCall
from callscope.engine.formats import make_parser
from tests.support.format_harness import check_stream, feed_all, partial_of, pieces_by

# ------------------------------------------------------------ rendering


def obj(name: str, raw_args: str | None, args_key: str = "arguments", extra: str = "") -> str:
    """A call object written the way models write it, arguments as raw JSON text."""
    members = [f'"name": {json.dumps(name)}']
    if raw_args is not None:
        members.append(f'"{args_key}": {raw_args}')
    return "{" + ", ".join(members) + extra + "}"


Call = tuple[str, str]  # (name, raw JSON text of the arguments)


def hermes(calls: list[Call], content: str = "", reasoning: str | None = None) -> str:
    think = f"<think>{reasoning}</think>\n\n" if reasoning is not None else ""
    blocks = "\n".join(f"<tool_call>\n{obj(n, a)}\n</tool_call>" for n, a in calls)
    return think + content + ("\n" if content and calls else "") + blocks


def llama3_json(calls: list[Call], content: str = "") -> str:
    if not calls:
        return content
    return "<|python_tag|>" + "; ".join(obj(n, a, "parameters") for n, a in calls)


def mistral(calls: list[Call], content: str = "") -> str:
    if not calls:
        return content
    return content + "[TOOL_CALLS][" + ", ".join(obj(n, a) for n, a in calls) + "]"


def mistral_named(calls: list[Call], content: str = "") -> str:
    return content + "".join(f"[TOOL_CALLS]{n}[ARGS]{a}" for n, a in calls)


def generic(calls: list[Call], content: str = "") -> str:
    if not calls:
        return json.dumps({"response": content})
    if len(calls) == 1:
        return '{"tool_call": ' + obj(*calls[0]) + "}"
    return '{"tool_calls": [' + ", ".join(obj(n, a) for n, a in calls) + "]}"


def emulated(calls: list[Call], content: str = "") -> str:
    lines = [content] if content else []
    return "\n".join(lines + [f"TOOL_CALL {obj(n, a)}" for n, a in calls])


@dataclass(frozen=True)
class Fmt:
    id: str
    render: Callable[..., str]
    markers: tuple[str, ...]
    content_with_calls: bool = True  # does the format carry content next to calls?

    def __str__(self) -> str:  # pytest ids
        return self.render.__name__


FORMATS = [
    Fmt("hermes", hermes, ("<tool_call>", "</tool_call>", "<think>", "</think>")),
    Fmt("llama3_json", llama3_json, ("<|python_tag|>",), content_with_calls=False),
    Fmt("mistral", mistral, ("[TOOL_CALLS]",)),
    Fmt("mistral", mistral_named, ("[TOOL_CALLS]", "[ARGS]")),
    Fmt("generic", generic, (), content_with_calls=False),
    Fmt("emulated", emulated, ("TOOL_CALL",)),
]


def expected_content(fmt: Fmt, content: str, calls: list[Call]) -> str:
    if not fmt.content_with_calls and calls:
        return ""
    if fmt.render is hermes and calls and content:
        return content + "\n"
    if fmt.render is emulated and calls and content:
        return content + "\n"
    return content


def run(fmt: Fmt, text: str, pieces: list[str] | None = None, **kwargs) -> Parse:
    return check_stream(fmt.id, text, pieces, markers=kwargs.pop("markers", fmt.markers), **kwargs)


def names_only_complete(format_id: str, text: str, final: Parse) -> None:
    """On every prefix each call's name is unknown or already its final name."""
    for cut in range(len(text) + 1):
        for index, call in enumerate(partial_of(format_id, text[:cut]).calls):
            assert call.name in (None, final.calls[index].name), f"name {call.name!r} at prefix {text[:cut]!r}"


WEATHER = ("get_weather", '{"city": "Paris", "unit": "celsius"}')
TIME = ("get_time", '{"tz":"Europe/Paris"}')

# ------------------------------------------------------------ per-format behaviour


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_single_call_with_content_before_it(fmt):
    content = "Let me check the weather."
    text = fmt.render([WEATHER], content)
    final = run(fmt, text)
    assert final.calls == (ParsedCall("get_weather", WEATHER[1]),)
    assert final.content == expected_content(fmt, content, [WEATHER])
    assert final.reasoning == ""


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_parallel_calls(fmt):
    text = fmt.render([WEATHER, TIME, ("noop", "{}")])
    final = run(fmt, text)
    assert [(c.name, c.arguments) for c in final.calls] == [WEATHER, TIME, ("noop", "{}")]
    assert final.content == ""


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_names_appear_only_complete(fmt):
    text = fmt.render([("a_rather_long_function_name", '{"x": 1}'), ("second_one", "{}")])
    final = run(fmt, text)
    names_only_complete(fmt.id, text, final)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_fragments_concatenate_and_each_partial_is_a_prefix_of_the_source(fmt):
    raw = '{ "path" : "/tmp/x.py",\n  "content": "def f():\\n    return 1\\n",  "mode": 420 }'
    text = fmt.render([("write_file", raw)])
    parser = make_parser(fmt.id)
    fragments = []
    for ch in text:
        for event in parser.feed(ch):
            if isinstance(event, ArgumentsAppended):
                fragments.append(event.text)
                assert raw.startswith("".join(fragments)), "arguments are not a prefix of the model's own text"
    fragments += [e.text for e in parser.finish() if isinstance(e, ArgumentsAppended)]
    assert "".join(fragments) == raw == parser.snapshot().calls[0].arguments
    assert len(fragments) > 10  # streamed, not delivered at the end


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@pytest.mark.parametrize(
    "raw",
    [
        pytest.param('{"city": "東京", "note": "晴れ ☀️ 😀"}', id="cjk-emoji"),
        pytest.param('{"city": "\\u6771\\u4eac", "face": "\\ud83d\\ude00", "e": "caf\\u00e9"}', id="u-escapes"),
        pytest.param('{"q": "say \\"hi\\"\\nthen\\tgo \\\\ back"}', id="escaped-quotes-newlines"),
        pytest.param('{"a": {"b": [1, {"c": []}, [[]]], "d": {}}, "e": [null, true, false, -1.5e3]}', id="nested"),
        pytest.param("{}", id="empty"),
        pytest.param('{\n  "pretty": [\n    1,\n    2\n  ]\n}', id="whitespace-kept"),
    ],
)
def test_argument_text_is_the_models_own(fmt, raw):
    text = fmt.render([("f", raw)], "Hi 😀")
    final = run(fmt, text)
    assert final.calls == (ParsedCall("f", raw),)
    json.loads(final.calls[0].arguments)


CLOSERS = {
    hermes: '{"code": "print(\\"</tool_call>\\")", "b": "}\\n</tool_call>\\n<tool_call>"}',
    llama3_json: '{"s": "}; {\\"name\\": \\"x\\", \\"parameters\\": {}}", "t": "<|python_tag|>"}',
    mistral: '{"s": "}, {\\"name\\": \\"x\\"}] [TOOL_CALLS]"}',
    mistral_named: '{"s": "}[TOOL_CALLS]x[ARGS]{"}',
    generic: '{"s": "\\"}]}, {\\"response\\": \\"no\\"}"}',
    emulated: '{"s": "}\\nTOOL_CALL {\\"name\\": \\"x\\"}"}',
}


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_marker_text_inside_an_argument_string_does_not_end_the_call(fmt):
    raw = CLOSERS[fmt.render]
    text = fmt.render([("f", raw), ("g", "{}")])
    final = run(fmt, text, markers=())
    assert [(c.name, c.arguments) for c in final.calls] == [("f", raw), ("g", "{}")]
    assert final.content == ""


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_content_only_turn(fmt):
    content = "The capital of France is Paris. 城市 😀 {not a call}"
    text = fmt.render([], content)
    final = run(fmt, text)
    assert final.calls == ()
    assert final.content == content


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_truncated_mid_call_keeps_the_arguments_so_far(fmt):
    text = fmt.render([("get_weather", '{"city": "Paris", "days": [1, 2')])
    cut = text.index("[1, 2") + len("[1, 2")
    final = run(fmt, text[:cut])
    assert final.calls == (ParsedCall("get_weather", '{"city": "Paris", "days": [1, 2'),)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_truncated_inside_the_name_is_not_a_call(fmt):
    text = fmt.render([WEATHER])
    cut = text.index("get_wea") + len("get_wea")
    final = run(fmt, text[:cut], markers=())
    assert final.calls == ()
    if fmt.id != "llama3_json":
        assert "get_wea" in final.content  # what was written is not lost


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.render is not mistral_named], ids=str)
def test_arguments_before_name_open_an_unnamed_call(fmt):
    text = fmt.render([("f", '{"a": 1}')])
    text = text.replace('"name": "f", "arguments": {"a": 1}', '"arguments": {"a": 1}, "name": "f"')
    text = text.replace('"name": "f", "parameters": {"a": 1}', '"parameters": {"a": 1}, "name": "f"')
    final = run(fmt, text)
    assert final.calls == (ParsedCall("f", '{"a": 1}'),)
    cut = text.index('{"a": 1') + len('{"a": 1')
    assert partial_of(fmt.id, text[:cut]).calls == (ParsedCall(None, '{"a": 1'),)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.render is not mistral_named], ids=str)
def test_json_string_arguments_stream_decoded(fmt):
    encoded = json.dumps(json.dumps({"city": "Zürich", "q": 'say "x"\n'}, ensure_ascii=False), ensure_ascii=False)
    text = fmt.render([("f", encoded)])
    final = run(fmt, text)
    assert final.calls == (ParsedCall("f", json.loads(encoded)),)
    partial = partial_of(fmt.id, text[: text.index("Zür") + 3])
    assert partial.calls == (ParsedCall("f", '{"city": "Zür'),)


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.render is not mistral_named], ids=str)
def test_call_without_arguments_key_gets_empty_object(fmt):
    text = fmt.render([("ping", None), ("pong", "{}")])
    final = run(fmt, text)
    assert [(c.name, c.arguments) for c in final.calls] == [("ping", "{}"), ("pong", "{}")]


def test_hermes_reasoning_then_call():
    text = hermes([WEATHER], reasoning="\nThe user wants weather.\nCall the tool.  \n")
    final = run(FORMATS[0], text)
    assert final.reasoning == "The user wants weather.\nCall the tool."
    assert final.content == ""
    assert final.calls == (ParsedCall(*WEATHER),)


def test_hermes_trailing_reasoning_whitespace_is_held_until_text_follows():
    assert partial_of("hermes", "<think>a  ").reasoning == "a"
    assert partial_of("hermes", "<think>a  b").reasoning == "a  b"
    assert partial_of("hermes", "<think>a </thi").reasoning == "a"


def test_hermes_tool_call_inside_reasoning_is_reasoning():
    text = '<think>maybe <tool_call>{"name": "x"}</tool_call>?</think>ok'
    final = run(FORMATS[0], text, markers=())
    assert final.calls == ()
    assert final.reasoning == 'maybe <tool_call>{"name": "x"}</tool_call>?'
    assert final.content == "ok"


def test_hermes_forced_open_reasoning_ends_at_a_bare_closer():
    text = "The user wants weather.\n</think>\n\n" + hermes([WEATHER])
    parser = make_parser("hermes")
    forced = type(parser)(thinking=True)
    forced.feed(text[:10])
    assert forced.snapshot().reasoning == "The user w" and forced.snapshot().content == ""
    forced.feed(text[10:])
    forced.finish()
    final = forced.snapshot()
    assert final.reasoning == "The user wants weather."
    assert final.content == ""
    assert final.calls == (ParsedCall(*WEATHER),)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_hermes_forced_open_random_splittings(data):
    """The forced-open variant keeps the same rules (it is not reachable through check_stream's make_parser)."""
    text = data.draw(st.sampled_from(["  plan a\n\n</think>\n\n", "no closer yet", "</think>"])) + hermes(
        [WEATHER], "Ok"
    )
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=len(text) - 1), max_size=20))
    cls = type(make_parser("hermes"))

    def one_shot(prefix: str, finish: bool) -> Parse:
        parser = cls(thinking=True)
        parser.feed(prefix)
        if finish:
            parser.finish()
        return parser.snapshot()

    parser = cls(thinking=True)
    prefix = ""
    for piece in pieces_by(text, cuts):
        prefix += piece
        for event in parser.feed(piece):
            assert not isinstance(event, CallNamed) or event.name == "get_weather"
        assert parser.snapshot() == one_shot(prefix, False)
        assert "</think>" not in parser.snapshot().reasoning
    parser.finish()
    assert parser.snapshot() == one_shot(text, True)


def test_hermes_half_typed_closer_never_enters_arguments_or_content():
    text = hermes([WEATHER])
    cut = text.index("</tool_call>") + len("</tool_")
    partial = partial_of("hermes", text[:cut])
    assert partial.calls == (ParsedCall(*WEATHER),)
    assert partial.content == ""
    assert feed_all("hermes", text[:cut]) == Parse(calls=(ParsedCall(*WEATHER),), partial=False)


def test_hermes_bare_closer_without_forced_open_is_dropped_from_content():
    text = "The user wants weather.\n</think>\n\nIt is sunny."
    final = run(FORMATS[0], text)
    assert final.content == "The user wants weather.\nIt is sunny."
    assert final.reasoning == ""


def test_hermes_leading_whitespace_before_think_stays_content():
    final = run(FORMATS[0], "\n<think>x</think>y")
    assert (final.content, final.reasoning) == ("\ny", "x")


@pytest.mark.parametrize(
    "text, content, calls",
    [
        ("<tool_call>not json</tool_call>", "<tool_call>not json</tool_call>", ()),
        ('<tool_call>{"foo": 1}</tool_call> after', '<tool_call>{"foo": 1}</tool_call> after', ()),
        ('<tool_call>{"name": 42}</tool_call>', '<tool_call>{"name": 42}</tool_call>', ()),
        ('<tool_call>{"name" "f"}</tool_call>', '<tool_call>{"name" "f"}</tool_call>', ()),
        # the first block is broken before it opens: the second one is still a call
        (
            '<tool_call>{"a" <tool_call>{"name": "f", "arguments": {}}</tool_call>',
            '<tool_call>{"a" ',
            (ParsedCall("f", "{}"),),
        ),
        # opened, then broken: the call keeps what it had, the rest of the block is dropped
        (
            '<tool_call>{"name": "f", "arguments": {"a": [1</tool_call>tail',
            "tail",
            (ParsedCall("f", '{"a": [1'),),
        ),
        # a missing closer: content resumes after the object
        ('<tool_call>{"name": "f", "arguments": {}} and more', "and more", (ParsedCall("f", "{}"),)),
        ("half a marker <tool_c", "half a marker <tool_c", ()),
        ("<tool_call>", "<tool_call>", ()),
    ],
)
def test_hermes_malformed_input_is_content(text, content, calls):
    final = run(FORMATS[0], text, markers=())
    assert final.content == content
    assert final.calls == calls


def test_hermes_partial_opener_is_held_back_until_decided():
    assert partial_of("hermes", "Hi <tool_c").content == "Hi "
    assert partial_of("hermes", "Hi <tool_cx").content == "Hi <tool_cx"
    assert partial_of("hermes", 'Hi <tool_call>{"name": "f').content == "Hi "


@pytest.mark.parametrize(
    "text, content, calls",
    [
        ("Hello {world}", "Hello {world}", ()),
        ('{"foo": 1} is JSON', '{"foo": 1} is JSON', ()),
        ('<|python_tag|>{"name": 5}', '{"name": 5}', ()),
        (
            '{"type": "function", "name": "f", "parameters": {"a": 1}}',
            "",
            (ParsedCall("f", '{"a": 1}'),),
        ),
        ('{"name": "f", "parameters": {}}\nDone.', "Done.", (ParsedCall("f", "{}"),)),
        (
            '{"name": "f", "parameters": {}}{"name": "g", "parameters": {}}',
            "",
            (ParsedCall("f", "{}"), ParsedCall("g", "{}")),
        ),
        ('{"name": "f", "parameters": {}}; oops', "; oops", (ParsedCall("f", "{}"),)),
        ('{"name": "f", "parameters": {}};', "", (ParsedCall("f", "{}"),)),
        ('Sure. <|python_tag|>{"name": "f", "parameters": {}}', "Sure. ", (ParsedCall("f", "{}"),)),
        ('{"name": "f", "parameters": {"a": 1} x', "x", (ParsedCall("f", '{"a": 1}'),)),
        ("<|python_ta", "<|python_ta", ()),
    ],
)
def test_llama3_json_edge_cases(text, content, calls):
    final = run(FORMATS[1], text, markers=())
    assert final.content == content
    assert final.calls == calls


@pytest.mark.parametrize(
    "text, content, calls",
    [
        ("[TOOL_CALLS] not a call", "[TOOL_CALLS] not a call", ()),
        ('[TOOL_CALLS][{"foo": 1}] x', '[TOOL_CALLS][{"foo": 1}] x', ()),
        ("[TOOL_CALLS]f[AR", "[TOOL_CALLS]f[AR", ()),
        ("[TOOL_CALLS]bad name[ARGS]{}", "[TOOL_CALLS]bad name[ARGS]{}", ()),
        (
            '[TOOL_CALLS][{"name": "f", "arguments": {}}, 42, {"name": "g"}] after',
            '42, {"name": "g"}] after',
            (ParsedCall("f", "{}"),),
        ),
        (
            '[TOOL_CALLS][{"name": "f", "arguments": {}} oops',
            "oops",
            (ParsedCall("f", "{}"),),
        ),
        (
            'A[TOOL_CALLS]f[CALL_ID]a1B2c3D4e[ARGS]{"x": 1} B [TOOL_CALLS]g[ARGS] {} ',
            "AB ",
            (ParsedCall("f", '{"x": 1}', "a1B2c3D4e"), ParsedCall("g", "{}")),
        ),
        (
            '[TOOL_CALLS][{"id": "abcdefghi", "name": "f", "arguments": {}}, {"name": "g", "arguments": {}, "id": "zzz"}]',
            "",
            (ParsedCall("f", "{}", "abcdefghi"), ParsedCall("g", "{}")),
        ),
        ('[TOOL_CALLS]f[ARGS]{"a": "b"', "", (ParsedCall("f", '{"a": "b"'),)),
        ("x [TOOL_CA", "x [TOOL_CA", ()),
    ],
)
def test_mistral_edge_cases(text, content, calls):
    final = run(FORMATS[2], text, markers=())
    assert final.content == content
    assert final.calls == calls


def test_mistral_call_id_arrives_with_the_header():
    text = '[TOOL_CALLS]f[CALL_ID]abc123xyz[ARGS]{"a": 1}'
    parser = make_parser("mistral")
    events = []
    for ch in text:
        events += parser.feed(ch)
    opened = [e for e in events if isinstance(e, CallOpened)]
    assert opened == [CallOpened(0, "abc123xyz")]
    assert events.index(opened[0]) < events.index(CallNamed(0, "f"))


@pytest.mark.parametrize(
    "text, content, calls",
    [
        ("Plain text answer", "Plain text answer", ()),
        ('  {"foo": 1} x', '  {"foo": 1} x', ()),
        ('{"tool_call": 5}', '{"tool_call": 5}', ()),
        ('{"response": {"a": [1]}}', '{"a": [1]}', ()),
        ('{"response": "x"}\n', "x", ()),
        (
            '{"tool_calls": [{"name": "f", "arguments": {}}, 42]}',
            "42]}",
            (ParsedCall("f", "{}"),),
        ),
        (
            '{"tool_calls": [{"name": "f", "arguments": {}, "id": "call_1"}], "response": "done"}',
            "done",
            (ParsedCall("f", "{}"),),
        ),
        (
            '{"tool_calls": [{"id": "call_1", "name": "f", "arguments": {"a": 1}}]}',
            "",
            (ParsedCall("f", '{"a": 1}', "call_1"),),
        ),
        ('{"tool_call": {"name": "f", "arguments": {"a": 1}, oops}}', "oops}}", (ParsedCall("f", '{"a": 1}'),)),
    ],
)
def test_generic_edge_cases(text, content, calls):
    final = run(FORMATS[4], text, markers=())
    assert final.content == content
    assert final.calls == calls


def test_generic_response_streams_decoded_as_it_arrives():
    text = json.dumps({"response": 'He said "hé 😀"\nbye'}, ensure_ascii=True)
    final = run(FORMATS[4], text)
    assert final.content == 'He said "hé 😀"\nbye'
    assert partial_of("generic", text[: text.index("said") + 4]).content == "He said"
    # a split \\u escape is held back, never shown half-decoded
    cut = text.index("\\u00e9") + 4
    assert partial_of("generic", text[:cut]).content == 'He said "h'


@pytest.mark.parametrize(
    "text, content, calls",
    [
        ("TOOL_CALLS are nice", "TOOL_CALLS are nice", ()),
        ('TOOL_CALL {"x": 1} ok', 'TOOL_CALL {"x": 1} ok', ()),
        ('a TOOL_CALL: {"name": "f", "arguments": {"a": 1}} b', "a b", (ParsedCall("f", '{"a": 1}'),)),
        ('TOOL_CALL {"name": "f", "arguments": {"a": 1} oops', "oops", (ParsedCall("f", '{"a": 1}'),)),
        ("The end. T", "The end. T", ()),
        ("TOOL_CALL", "TOOL_CALL", ()),
    ],
)
def test_emulated_edge_cases(text, content, calls):
    final = run(FORMATS[5], text, markers=())
    assert final.content == content
    assert final.calls == calls


def test_emulated_call_streams_before_the_object_closes():
    text = 'Checking.\nTOOL_CALL {"name": "get_weather", "arguments": {"city": "Par'
    partial = partial_of("emulated", text)
    assert partial.calls == (ParsedCall("get_weather", '{"city": "Par'),)
    assert partial.content == "Checking.\n"


def test_emulated_partial_marker_is_held_back():
    assert partial_of("emulated", "Done. TOOL_C").content == "Done. "
    assert partial_of("emulated", "Done. TOOL_Cx").content == "Done. TOOL_Cx"


def test_large_pieces_and_one_shot_agree():
    text = hermes([WEATHER, TIME], "Sure.", reasoning="hmm")
    one_shot = feed_all("hermes", text)
    assert run(FORMATS[0], text, pieces_by(text, [5, 40, 41, 90])) == one_shot


# ------------------------------------------------------------ properties

SAMPLE_CALLS = [
    ("get_weather", '{"city": "東京 😀", "unit": "c"}'),
    ("write_file", '{"path": "a\\\\b.txt", "content": "line \\"1\\"\\n</tool_call> [TOOL_CALLS] TOOL_CALL }]"}'),
    ("noop", "{}"),
    ("nested", '{"a": [1, {"b": [true, null, -2.5e-3]}], "c": {"d": "\\u00e9\\ud83d\\ude00"}}'),
]


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    content=st.sampled_from(["", "Sure, calling.", "Hmm: <tool T [x] {y} 😀"]),
)
def test_random_splittings_keep_every_rule(fmt, data, content):
    calls = data.draw(st.lists(st.sampled_from(SAMPLE_CALLS), max_size=3), label="calls")
    if fmt.render is emulated and "TOOL_CALL" in content:
        content = content.replace("TOOL_CALL", "")
    text = fmt.render(calls, content)
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=max(1, len(text) - 1)), max_size=25), label="cuts")
    markers = fmt.markers if not content.startswith("Hmm") else ()
    final = check_stream(fmt.id, text, pieces_by(text, cuts), markers=markers)
    assert [(c.name, c.arguments) for c in final.calls] == calls
    if calls:
        assert final.content == expected_content(fmt, content, calls)
    elif fmt.render is not mistral_named or not calls:
        assert final.content == content


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_hermes_reasoning_random_splittings(data):
    reasoning = data.draw(st.sampled_from(["", " think  hard \n", "a </thin b", "<think> nested?"]))
    calls = data.draw(st.lists(st.sampled_from(SAMPLE_CALLS), max_size=2))
    text = hermes(calls, "ok", reasoning=reasoning)
    cuts = data.draw(st.lists(st.integers(min_value=1, max_value=len(text) - 1), max_size=20))
    final = check_stream("hermes", text, pieces_by(text, cuts), markers=("<tool_call>", "</tool_call>"))
    assert final.reasoning == reasoning.strip()
    assert [(c.name, c.arguments) for c in final.calls] == calls


GARBAGE_TOKENS = list('{}[]":,; \n<>/|_abcnmeTOLCAS\\u0') + [
    "<tool_call>",
    "</tool_call>",
    "[TOOL_CALLS]",
    "TOOL_CALL",
    '"name"',
    '"arguments"',
    '"parameters"',
    '"response"',
    '"tool_calls"',
    "[ARGS]",
    "[CALL_ID]",
    "<|python_tag|>",
    "<think>",
    "</think>",
]


@pytest.mark.parametrize("format_id", ["hermes", "llama3_json", "mistral", "generic", "emulated"])
@settings(max_examples=60, deadline=None)
@given(text=st.lists(st.sampled_from(GARBAGE_TOKENS), max_size=30).map("".join))
def test_arbitrary_text_never_crashes_and_stays_consistent(format_id, text):
    """Garbage is content or calls, never an exception, and still parses the same in any split."""
    check_stream(format_id, text)
