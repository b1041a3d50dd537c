"""The JSON families (group 2): granite, nemotron_v2, apriel, apertus, command_r7b, gigachat3,
functionary_v3_2, solar_open and pythonic, plus the llama3_json and mistral forms they brought.

Every stream goes through :func:`tests.support.format_harness.check_stream` (incremental ==
from-scratch on every prefix, names announced once, append-only arguments, no marker in
content, fragments concatenate to the terminal arguments). Then, per format, the model
outputs the peers' tests use (llama.cpp's ``test-chat``, vLLM's and SGLang's parser tests)
parse to the calls those peers expect: written here as our own strings with the same
structure, never copied. Where a peer's expectation cannot hold for a streaming parser
(a call it drops only after seeing its end), the test says what we do instead and why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callscope.engine.core.parse_model import CallOpened, Parse, ParsedCall
from callscope.engine.formats import get_spec, make_parser
from tests.support.format_harness import check_stream, feed_all, partial_of, pieces_by


@dataclass(frozen=True)
class Fmt:
    id: str
    markers: tuple[str, ...]  # never content, not even half-typed
    content_gap: str = ""  # what the writer puts between content and calls, kept as content
    thinking: bool = False

    def __str__(self) -> str:
        return self.id


FORMATS = [
    Fmt("granite", ("<|tool_call|>",), thinking=True),
    Fmt("nemotron_v2", ("<TOOLCALL>", "</TOOLCALL>"), "\n", thinking=True),
    Fmt("apriel", ("<tool_calls>", "</tool_calls>"), "\n", thinking=True),
    Fmt("apertus", ("<|tools_prefix|>", "<|tools_suffix|>", "<|inner_prefix|>", "<|inner_suffix|>"), thinking=True),
    Fmt("command_r7b", ("<|START_ACTION|>", "<|END_ACTION|>", "<|START_THINKING|>", "<|END_THINKING|>"), thinking=True),
    Fmt("gigachat3", ("<|message_sep|>", "<|role_sep|>", "<|function_call|>")),
    Fmt("functionary_v3_2", (">>>",)),
    Fmt(
        "solar_open",
        ("<|tool_calls|>", "<|tool_call:begin|>", "<|tool_call:args|>", "<|content|>", "<|end|>"),
        thinking=True,
    ),
    Fmt("pythonic", ("<|tool_call_start|>", "<|tool_call_end|>")),
]
BY_ID = {f.id: f for f in FORMATS}

CALLS = [
    ("get_weather", {"city": "Zürich 東京 😀", "unit": "celsius"}),
    ("write_file", {"path": "a\\b.txt", "content": 'say "hi"\n</TOOLCALL> ]} <|tool_call_end|> >>>all\n'}),
    ("noop", {}),
    ("nested", {"a": [1, {"b": [True, None, -2.5]}], "c": {"d": "é"}}),
]


def written(fmt: Fmt, calls, content: str = "", reasoning: str = "") -> str:
    return get_spec(fmt.id).write(calls, content, reasoning)


def as_data(parse: Parse) -> list[tuple[str | None, object]]:
    return [(c.name, json.loads(c.arguments)) for c in parse.calls]


def expected_content(fmt: Fmt, content: str, calls, reasoning: str) -> str:
    if not calls:
        return content
    if fmt.id == "apriel":  # its template writes "\n<tool_calls>" even after no content; after </thinking> it is layout
        return content if reasoning else content + "\n"
    return content + fmt.content_gap if content else content


# ------------------------------------------------------------ every format, from its writer


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_one_call_after_content_streams_and_parses(fmt):
    text = written(fmt, CALLS[:1], "Let me check.")
    final = check_stream(fmt.id, text, markers=fmt.markers)
    assert as_data(final) == [CALLS[0]]
    assert final.content == expected_content(fmt, "Let me check.", CALLS[:1], "")


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_parallel_calls_keep_their_order(fmt):
    text = written(fmt, CALLS)
    final = check_stream(fmt.id, text, markers=())
    assert as_data(final) == CALLS


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_content_only_turn(fmt):
    text = written(fmt, [], "Paris is sunny, 24 °C {not a call} [1] a > b")
    final = check_stream(fmt.id, text, markers=fmt.markers)
    assert final.calls == ()
    assert final.content == "Paris is sunny, 24 °C {not a call} [1] a > b"


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.thinking], ids=str)
def test_reasoning_is_trimmed_and_never_content(fmt):
    text = written(fmt, CALLS[:1], "Checking.", reasoning="  think  hard \n")
    final = check_stream(fmt.id, text, markers=fmt.markers)
    assert final.reasoning == "think  hard"
    assert as_data(final) == [CALLS[0]]
    assert final.content == expected_content(fmt, "Checking.", CALLS[:1], "r")


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f.thinking], ids=str)
def test_thinking_mode_starts_inside_reasoning(fmt):
    spec = get_spec(fmt.id)
    closer = {"granite": "</think>", "nemotron_v2": "</think>", "apriel": "</thinking>"}.get(fmt.id)
    closer = (
        closer or {"apertus": "<|inner_suffix|>", "command_r7b": "<|END_THINKING|>", "solar_open": "<|end|>"}[fmt.id]
    )
    text = "plan it\n" + closer + written(fmt, CALLS[:1])
    parser = spec.parser(thinking=True)
    parser.feed(text[:4])
    assert parser.snapshot().reasoning == "plan" and parser.snapshot().content == ""
    parser.feed(text[4:])
    parser.finish()
    final = parser.snapshot()
    assert final.reasoning == "plan it" and as_data(final) == [CALLS[0]]


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_arguments_stream_before_the_call_ends(fmt):
    name, args = CALLS[1]
    text = written(fmt, [(name, args)])
    cut = text.index("say") + 3
    partial = partial_of(fmt.id, text[:cut])
    assert [c.name for c in partial.calls] == [name]
    assert partial.calls[0].arguments.endswith("say")  # streamed as written, not at the end


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_truncated_mid_arguments_keeps_what_was_written(fmt):
    text = written(fmt, [("get_weather", {"city": "Paris", "days": [1, 2, 3]})])
    cut = text.index("2")
    final = check_stream(fmt.id, text[:cut], markers=())
    assert [c.name for c in final.calls] == ["get_weather"]
    # JSON formats stream the model's own text; pythonic writes a separator when the next item begins
    assert final.calls[0].arguments.endswith("[1" if fmt.id == "pythonic" else "[1, ")


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_names_appear_only_complete(fmt):
    text = written(fmt, [("a_rather_long_function_name", {"x": 1}), ("second_one", {})])
    final = feed_all(fmt.id, text)
    for cut in range(len(text) + 1):
        for index, call in enumerate(partial_of(fmt.id, text[:cut]).calls):
            assert call.name in (None, final.calls[index].name), (fmt.id, text[:cut])


# ------------------------------------------------------------ properties


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@settings(max_examples=40, deadline=None)
@given(data=st.data(), content=st.sampled_from(["", "Sure, calling.", "a < b > c {x} [y] 😀"]))
def test_random_splittings_keep_every_rule(fmt, data, content):
    calls = data.draw(st.lists(st.sampled_from(CALLS), max_size=3), label="calls")
    reasoning = data.draw(st.sampled_from(["", "hmm, { [ <"])) if fmt.thinking else ""
    text = written(fmt, calls, content, reasoning)
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=25), label="cuts")
    final = check_stream(fmt.id, text, pieces_by(text, cuts), markers=fmt.markers)
    assert as_data(final) == calls
    assert final.content == expected_content(fmt, content, calls, reasoning)
    assert final.reasoning == reasoning.strip()


FRAGMENTS = {
    "granite": ["<|tool_call|>", "<think>", "</think>", "<response>", "</response>", "<|tool_"],
    "nemotron_v2": ["<TOOLCALL>", "</TOOLCALL>", "<think>", "</think>", "<TOOL"],
    "apriel": ["<tool_calls>", "</tool_calls>", "<thinking>", "</thinking>", "<tool_c"],
    "apertus": ["<|tools_prefix|>", "<|tools_suffix|>", "<|inner_prefix|>", "<|inner_suffix|>", '{"f": '],
    "command_r7b": [
        "<|START_ACTION|>",
        "<|END_ACTION|>",
        "<|START_THINKING|>",
        "<|END_THINKING|>",
        "<co>",
        "</co: 1>",
        '"tool_name"',
        '"parameters"',
        '"tool_call_id"',
        "<|START_RESPONSE|>",
        "<|END_RESPONSE|>",
    ],
    "gigachat3": ["<|message_sep|>", "\n\n", "function call<|role_sep|>", "<|function_call|>", "</s>", "function"],
    "functionary_v3_2": [">>>", "all\n", "python\n", "f\n", ">>", ">"],
    "solar_open": [
        "<|think|>",
        "<|end|>",
        "<|begin|>",
        "assistant",
        "<|content|>",
        "<|flush|>",
        "<|tool_calls|>",
        "<|tool_call:begin|>",
        "<|tool_call:name|>",
        "<|tool_call:args|>",
        "<|tool_call:end|>",
        "<|calls|>",
    ],
    "pythonic": [
        "[",
        "]",
        "(",
        ")",
        "f",
        "=",
        "'",
        '"',
        "\\",
        "<|tool_call_start|>",
        "<|tool_call_end|>",
        "<|python_start|>",
        "True",
        "1e9",
        ",",
        "{",
        "}",
        ":",
        "b'",
    ],
}
COMMON = ['{"name": "f"', '"arguments"', ": ", "{", "}", "[", "]", ",", '"', "x", "1", " ", "\n", "東", "\\"]


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_arbitrary_text_never_crashes_and_stays_consistent(fmt, data):
    """Text glued from the format's marker fragments is content or calls, never an exception, in any split."""
    tokens = data.draw(st.lists(st.sampled_from(FRAGMENTS[fmt.id] + COMMON), max_size=30))
    text = "".join(tokens)
    cuts = data.draw(st.lists(st.integers(1, 400), max_size=8))
    check_stream(fmt.id, text, pieces_by(text, cuts))


# ------------------------------------------------------------ granite (llama.cpp test-chat)


def run(format_id: str, text: str, markers: tuple[str, ...] = ()) -> Parse:
    return check_stream(format_id, text, markers=markers)


def test_granite_cases():
    one = '<|tool_call|>[{"name": "lookup", "arguments": {"n": 7}}]'
    assert run("granite", one).calls == (ParsedCall("lookup", '{"n": 7}'),)
    thought = run("granite", "<think>I weigh\nit</think><response>Fine, thanks!\nAnd you?</response>")
    assert (thought.reasoning, thought.content) == ("I weigh\nit", "Fine, thanks!\nAnd you?")
    # partial prefixes: the name alone opens the call, a cut argument object streams as far as written
    assert partial_of("granite", '<|tool_call|>[{"name": "lookup"').calls == (ParsedCall("lookup", ""),)
    assert partial_of("granite", '<|tool_call|>[{"name": "lookup", "arguments": {"ar').calls == (
        ParsedCall("lookup", '{"ar'),
    )
    assert (
        partial_of("granite", "<think").content == "" and partial_of("granite", "<think>I weigh").reasoning == "I weigh"
    )
    assert partial_of("granite", "<think>I weigh</think><response").content == ""
    broken = run("granite", '<think>x</think><|tool_call|>[{"name": "lookup", "arguments": {"n": 7}, {')
    assert broken.reasoning == "x" and broken.calls == (ParsedCall("lookup", '{"n": 7}'),)


def test_granite_marker_without_calls_is_content_verbatim():
    assert run("granite", "<|tool_call|>no calls here").content == "<|tool_call|>no calls here"
    assert run("granite", '<|tool_call|>[{"foo": 1}] x').content == '<|tool_call|>[{"foo": 1}] x'


# ------------------------------------------------------------ nemotron v2


def test_nemotron_cases():
    call = '<TOOLCALL>[{"name": "lookup", "arguments": {"n": 7}}]</TOOLCALL>'
    assert run("nemotron_v2", call, ("<TOOLCALL>", "</TOOLCALL>")).calls == (ParsedCall("lookup", '{"n": 7}'),)
    both = run("nemotron_v2", "<think>I weigh\nit</think>" + call + "All done.\nBye?")
    assert (both.reasoning, both.content) == ("I weigh\nit", "All done.\nBye?")
    assert both.calls == (ParsedCall("lookup", '{"n": 7}'),)


def test_nemotron_broken_array_is_read_to_its_closer():
    final = run("nemotron_v2", '<TOOLCALL>[{"name": "f", "arguments": {}}, 42, {"name": "g"}]</TOOLCALL>after')
    assert final.calls == (ParsedCall("f", "{}"),) and final.content == "after"
    missing = run("nemotron_v2", '<TOOLCALL>[{"name": "f", "arguments": {}}] and more')
    assert missing.content == "and more"


# ------------------------------------------------------------ apriel


def test_apriel_cases():
    final = run(
        "apriel",
        'Okay.<thinking>need the tool</thinking>\n<tool_calls>[{"name": "lookup", "arguments": {"n": 7}, "id": "x1"}, '
        '{"name": "other", "arguments": {}}]</tool_calls>',
        ("<tool_calls>", "</tool_calls>"),
    )
    assert (final.content, final.reasoning) == ("Okay.", "need the tool")
    # an id written after the name is not the call's id: the id goes out with the call's first delta
    assert final.calls == (ParsedCall("lookup", '{"n": 7}'), ParsedCall("other", "{}"))


# ------------------------------------------------------------ apertus (llama.cpp, vLLM)


def test_apertus_cases():
    call = '<|tools_prefix|>[{"lookup": {"n": 7}}]<|tools_suffix|>'
    assert run("apertus", call).calls == (ParsedCall("lookup", '{"n": 7}'),)
    both = run("apertus", "<|inner_prefix|>I weigh\nit<|inner_suffix|>" + call + "All done.\nBye?")
    assert (both.reasoning, both.content) == ("I weigh\nit", "All done.\nBye?")
    two = run(
        "apertus", '<|tools_prefix|>[{"a": {"x": "Oslo"}}, {"b": {"y": [1, 2], "z": {"w": "v"}}}]<|tools_suffix|>'
    )
    assert [(c.name, json.loads(c.arguments)) for c in two.calls] == [
        ("a", {"x": "Oslo"}),
        ("b", {"y": [1, 2], "z": {"w": "v"}}),
    ]
    before = run("apertus", 'Checking now. <|tools_prefix|>[{"a": {"x": "Oslo"}}]<|tools_suffix|>')
    assert before.content == "Checking now. "
    # a cut-off array and a missing suffix still give the call (vLLM reads both so)
    assert run("apertus", '<|tools_prefix|>[{"a": {"x": "Oslo"}}').calls == (ParsedCall("a", '{"x": "Oslo"}'),)
    assert run("apertus", '<|tools_prefix|>[{"a": {"x": "Oslo"}}]').calls == (ParsedCall("a", '{"x": "Oslo"}'),)


def test_apertus_split_markers_never_leak():
    text = 'Intro<|tools_prefix|>[{"f": {"a": 1}}]<|tools_suffix|>'
    for pieces in (["Intro", "<|tools_", "prefix|>", '[{"f": ', '{"a": 1}}]', "<|tools_suf", "fix|>"], list(text)):
        final = check_stream("apertus", text, pieces, markers=("<|tools_prefix|>", "<|tools_suffix|>"))
        assert final.content == "Intro" and final.calls == (ParsedCall("f", '{"a": 1}'),)


def test_apertus_element_that_is_not_a_call():
    assert run("apertus", "<|tools_prefix|>[{}]<|tools_suffix|>").content == "<|tools_prefix|>[{}]<|tools_suffix|>"


# ------------------------------------------------------------ command r7b (llama.cpp, vLLM)


def test_command_r7b_cases():
    assert run("command_r7b", "Fine, thanks!\nAnd you?").content == "Fine, thanks!\nAnd you?"
    response = run("command_r7b", "<|START_RESPONSE|>Fine, thanks!\nAnd you?<|END_RESPONSE|>")
    assert response.content == "Fine, thanks!\nAnd you?"
    final = run(
        "command_r7b",
        '<|START_THINKING|>I weigh\nit<|END_THINKING|><|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "lookup", '
        '"parameters": {"n": 7}}\n]<|END_ACTION|>',
    )
    assert final.reasoning == "I weigh\nit"
    assert final.calls == (ParsedCall("lookup", '{"n": 7}', "0"),)  # the model's tool_call_id is the call id
    partial = partial_of(
        "command_r7b",
        '<|START_THINKING|>I weigh<|END_THINKING|><|START_ACTION|>[\n {"tool_call_id": "0", "tool_name": "look',
    )
    assert partial.reasoning == "I weigh" and partial.calls == ()


def test_command_r7b_parallel_ids_and_citations():
    final = run(
        "command_r7b",
        "<|START_THINKING|> first the plan<|END_THINKING|><|START_ACTION|>\n[\n"
        '    {"tool_call_id": "0", "tool_name": "a", "parameters": {"q": "one"}},\n'
        '    {"tool_call_id": "1", "tool_name": "b", "parameters": {"x": 42}}\n]\n<|END_ACTION|>',
    )
    assert final.reasoning == "first the plan"
    assert final.calls == (ParsedCall("a", '{"q": "one"}', "0"), ParsedCall("b", '{"x": 42}', "1"))
    cited = run(
        "command_r7b",
        "<|START_THINKING|>A rainbow <co>glyph: 🌈</co: 0:[2]><|END_THINKING|>\n"
        "<|START_RESPONSE|>alpha <co>beta</co: 0:[1,2],1:[3]><|END_RESPONSE|>",
    )
    assert (cited.reasoning, cited.content) == ("A rainbow glyph: 🌈", "alpha beta")
    assert run("command_r7b", "<|START_THINKING|>only a thought<|END_THINKING|>").reasoning == "only a thought"


def test_command_r7b_a_citation_closer_is_short_and_tagless():
    assert run("command_r7b", "x </co: 1> y").content == "x  y"
    unclosed = "see </co: " + "w" * 80  # no closer within 64 characters: it was text
    assert run("command_r7b", unclosed).content == unclosed
    assert run("command_r7b", "<|START_THINKING|>r </co: x<|END_THINKING|>done").reasoning == "r </co: x"


def test_command_r7b_id_goes_out_with_the_header():
    text = '<|START_ACTION|>[{"tool_call_id": "7", "tool_name": "f", "parameters": {}}]<|END_ACTION|>'
    parser = make_parser("command_r7b")
    events = [e for ch in text for e in parser.feed(ch)]
    assert [e for e in events if isinstance(e, CallOpened)] == [CallOpened(0, "7")]


# ------------------------------------------------------------ gigachat 3 (vLLM, SGLang, llama.cpp)

SEP = "<|message_sep|>\n\n"
HEADER = "function call<|role_sep|>\n"


def test_gigachat3_cases():
    plain = run("gigachat3", SEP + HEADER + '{"name": "remember", "arguments": {"op": "add", "key": "prefs"}}')
    assert plain.calls == (ParsedCall("remember", '{"op": "add", "key": "prefs"}'),) and plain.content == ""
    empty = run("gigachat3", SEP + HEADER + '{"name": "remember", "arguments": {}}')
    assert empty.calls == (ParsedCall("remember", "{}"),)
    nested = '{"name": "remember", "arguments": {"op": "add", "value": {"short": true, "emoji": false}}}'
    assert json.loads(run("gigachat3", SEP + HEADER + nested).calls[0].arguments)["value"] == {
        "short": True,
        "emoji": False,
    }
    eos = run("gigachat3", "Noted." + SEP + HEADER + '{"name": "remember", "arguments": {"key": "t"}}</s>')
    assert eos.content == "Noted." and eos.calls == (ParsedCall("remember", '{"key": "t"}'),)
    v31 = run("gigachat3", 'On it.<|function_call|>{"name": "remember", "arguments": {"key": "t"}}</s>')
    assert v31.content == "On it." and v31.calls == (ParsedCall("remember", '{"key": "t"}'),)
    assert run("gigachat3", "How may I help?").content == "How may I help?"


def test_gigachat3_split_tokens_never_leak():
    text = "On it." + SEP + HEADER + '{"name": "remember", "arguments": {"key": "t"}}</s>'
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    final = check_stream("gigachat3", text, pieces, markers=("<|message_sep|>", "<|role_sep|>", "</s>"))
    assert final.content == "On it." and final.calls[0].arguments == '{"key": "t"}'


def test_gigachat3_not_a_call_is_content():
    # SGLang drops a call whose arguments are not an object, or that has none; a streaming parser has announced
    # it by then (the name is complete first), so the call stays and the engine reports what is wrong with it
    no_name = run("gigachat3", SEP + HEADER + '{"arguments": {"op": "add"}}')
    assert no_name.calls == (ParsedCall(None, '{"op": "add"}'),)
    assert run("gigachat3", SEP + HEADER + "not json").content == HEADER + "not json"


# ------------------------------------------------------------ functionary v3.2 (llama.cpp)


def test_functionary_cases():
    mixed = run("functionary_v3_2", "all\nFine, thanks!\nyes\nAnd you?>>>lookup\n" + '{"n": 7}\n')
    assert mixed.content == "Fine, thanks!\nyes\nAnd you?" and mixed.calls == (ParsedCall("lookup", '{"n": 7}'),)
    code = run("functionary_v3_2", "python\n# a script\nprint('yo')")
    assert code.calls == (ParsedCall("python", json.dumps({"code": "# a script\nprint('yo')"})),)
    trailing = run("functionary_v3_2", 'lookup\n{"n": 7} \n              ')
    assert trailing.calls == (ParsedCall("lookup", '{"n": 7}'),) and trailing.content == ""
    assert run("functionary_v3_2", "all\nFine, thanks!\nAnd you?").content == "Fine, thanks!\nAnd you?"


def test_functionary_raw_code_streams_as_json():
    text = "python\nx = '\"'\nprint(x)"
    steps = []
    parser = make_parser("functionary_v3_2")
    for ch in text:
        parser.feed(ch)
        if parser.snapshot().calls:
            steps.append(parser.snapshot().calls[0].arguments)
    parser.finish()
    final = parser.snapshot().calls[0].arguments
    assert json.loads(final) == {"code": "x = '\"'\nprint(x)"}
    assert all(final.startswith(s) for s in steps) and len(set(steps)) > 5


def test_functionary_prose_recipient_is_content():
    assert run("functionary_v3_2", "Hello there, a >>> b").content == "Hello there, a >>> b"
    assert run("functionary_v3_2", "name\nnot an object").content == "name\nnot an object"


# ------------------------------------------------------------ solar open (llama.cpp, vLLM, SGLang)


def test_solar_open_cases():
    mixed = run(
        "solar_open",
        "<|content|>One moment.\n<|end|><|begin|>assistant<|tool_calls|><|tool_call:begin|>0<|tool_call:name|>"
        'forecast<|tool_call:args|>{"city":"Oslo"}<|tool_call:end|>',
    )
    assert mixed.content == "One moment.\n" and mixed.calls == (ParsedCall("forecast", '{"city":"Oslo"}', "0"),)
    assert run("solar_open", "<|content|>If x < y, use {a} or [b].\n").content == "If x < y, use {a} or [b].\n"
    thought = run("solar_open", "<|think|>Work it out.<|end|><|content|>Oslo.")
    assert (thought.reasoning, thought.content) == ("Work it out.", "Oslo.")
    flushed = run(
        "solar_open",
        "Checking.<|flush|><|tool_calls|><|tool_call:begin|><|tool_call:name|>forecast<|tool_call:args|>"
        '{"city": "Oslo"}<|tool_call:end|><|calls|>',
    )
    assert flushed.content == "Checking." and flushed.calls == (ParsedCall("forecast", '{"city": "Oslo"}'),)
    ided = run(
        "solar_open",
        "<|think|>A tool it is.<|end|><|begin|>assistant<|tool_calls|><|tool_call:begin|>q9w8e7r6t5"
        '<|tool_call:name|>forecast<|tool_call:args|>{"city": "Oslo"}<|tool_call:end|>',
    )
    assert ided.reasoning == "A tool it is." and ided.calls[0].id == "q9w8e7r6t5"
    assert run("solar_open", "<|think|>Still going").reasoning == "Still going"
    assert run("solar_open", "<|begin|>assistant<|content|>Hey").content == "Hey"


# ------------------------------------------------------------ mistral v11 (vLLM)


def test_mistral_v11_without_args_token():
    one = run("mistral", '[TOOL_CALLS]sum_them{"a": 1.5, "b": 2}')
    assert one.calls == (ParsedCall("sum_them", '{"a": 1.5, "b": 2}'),)
    two = run("mistral", '[TOOL_CALLS]plus{"a": 1.5, "b": 2}[TOOL_CALLS]times{"a": 2, "b": 7}')
    assert [c.name for c in two.calls] == ["plus", "times"]
    before = run("mistral", 'yo[TOOL_CALLS]plus[ARGS]{"a": 1, "b": 2}')
    assert before.content == "yo" and before.calls == (ParsedCall("plus", '{"a": 1, "b": 2}'),)
    cut = run("mistral", 'yo{yo[TOOL_CALLS]sh{"cmd": "echo(\\"hi\\")\\nre.compile(r\'{}\')"')
    assert cut.content == "yo{yo" and cut.calls == (ParsedCall("sh", '{"cmd": "echo(\\"hi\\")\\nre.compile(r\'{}\')"'),)


def test_mistral_call_id_with_and_without_args_token():
    for text in ('[TOOL_CALLS]f[CALL_ID]k3Y9pQ2wZ[ARGS]{"a": 1}', '[TOOL_CALLS]f[CALL_ID]k3Y9pQ2wZ{"a": 1}'):
        parser = make_parser("mistral")
        opened = [e for ch in text for e in parser.feed(ch) if isinstance(e, CallOpened)]
        assert opened == [CallOpened(0, "k3Y9pQ2wZ")]
        assert run("mistral", text).calls == (ParsedCall("f", '{"a": 1}', "k3Y9pQ2wZ"),)


def test_mistral_bare_name_at_the_end_is_not_a_call():
    # vLLM reads "[TOOL_CALLS]name" at the end as a call without arguments; a name cut off by the end of
    # generation looks the same, and names go out only complete, so it stays content here
    assert run("mistral", "[TOOL_CALLS]ping").calls == ()


# ------------------------------------------------------------ llama3_json: leading text (vLLM)


def test_llama3_call_after_leading_text():
    final = run("llama3_json", 'Here you go: {"name": "incidents", "parameters": {}} Anything else?')
    assert final.calls == (ParsedCall("incidents", "{}"),)
    assert final.content == "Here you go: Anything else?"
    many = run(
        "llama3_json",
        'Results: {"name": "s", "parameters": {"q": "a"}}; {"name": "t", "parameters": {}} ; '
        '{"name": "s", "parameters": {"q": "b"}} More?',
    )
    assert [c.name for c in many.calls] == ["s", "t", "s"] and many.content == "Results: More?"


def test_llama3_objects_in_prose_are_content():
    assert (
        run("llama3_json", 'Done. {"name": "s", "parameters": {"q": 1}} I used {s} here.').content
        == "Done. I used {s} here."
    )
    quoted = run("llama3_json", '{"name": "s", "parameters": {"q": 1}} You passed {"q": 1}')
    assert quoted.content == 'You passed {"q": 1}' and [c.name for c in quoted.calls] == ["s"]
    assert partial_of("llama3_json", 'Note {"query": "x", "p').content == 'Note {"query": "x", "p'


@pytest.mark.parametrize("separator", ["; ", ";", ";\n", "\n"])
def test_llama3_parallel_separators(separator):
    text = '{"name": "s", "parameters": {"q": "a"}}' + separator + '{"name": "t", "parameters": {}}'
    final = check_stream("llama3_json", text, pieces_by(text, list(range(7, len(text), 7))))
    assert [(c.name, c.arguments) for c in final.calls] == [("s", '{"q": "a"}'), ("t", "{}")]
