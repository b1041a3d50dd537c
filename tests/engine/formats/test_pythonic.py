"""Python-literal arguments: the pythonic format and Llama 3.1's built-in tools.

:class:`~callscope.engine.formats._kit.python_args.PythonArgsScan` turns keyword arguments into
their JSON while they are written; these tests pin its rules (what streams, what is
held, what breaks), check that random Python values written with ``repr`` come back as
exactly ``json.dumps(value, ensure_ascii=False)`` in any split, and replay the structure
of the model outputs in vLLM's pythonic / Llama 4 / LFM2 tests and llama.cpp's built-in
tool tests (our own strings, the same shapes).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callscope.engine.core.parse_model import ParsedCall
from callscope.engine.formats._kit.python_args import PythonArgsScan
from callscope.engine.formats.pythonic import call_text
from tests.support.format_harness import check_stream, feed_all, partial_of, pieces_by

MARKERS = ("<|tool_call_start|>", "<|tool_call_end|>", "<|python_start|>", "<|python_end|>")


def scan(source: str, pieces: list[str] | None = None, lenient: bool = True) -> tuple[str, bool, list[str]]:
    """Feed ``source`` (the text after a call's ``(``): the JSON emitted, whether it broke, each emission."""
    out: list[str] = []
    parser = PythonArgsScan(out.append, lenient)
    for piece in pieces or [source]:
        parser.feed(piece)
        if parser.done:
            break
    else:
        parser.finish()
    return "".join(out), parser.broken, out


@pytest.mark.parametrize(
    "source, expected",
    [
        ("town='Lisbon', scale='kelvin')", {"town": "Lisbon", "scale": "kelvin"}),
        (")", {}),
        ("extra={})", {"extra": {}}),
        ("steps=[])", {"steps": []}),
        (
            "who='Ana Lima', years=41, home={'town': 'Porto', 'zone': 'N'}, job=None, ok=True, nick=['An', 'Nana'])",
            {
                "who": "Ana Lima",
                "years": 41,
                "home": {"town": "Porto", "zone": "N"},
                "job": None,
                "ok": True,
                "nick": ["An", "Nana"],
            },
        ),
        (
            r"""place='Saint John\'s Wood', label='\"big\" units')""",
            {"place": "Saint John's Wood", "label": '"big" units'},
        ),
        ("marks={'hot', 'new'})", {"marks": ["hot", "new"]}),
        ("hour=08, minute=09)", {"hour": 8, "minute": 9}),
        (
            "x=-1.5e3, y=+2, z=0x1F, w=1_000, v=(1, 2), e=1e-3)",
            {"x": -1500.0, "y": 2, "z": 31, "w": 1000, "v": [1, 2], "e": 0.001},
        ),
        ("a='''it's''', b=r'c:\\tmp', c=\"x\" )", {"a": "it's", "b": "c:\\tmp", "c": "x"}),
        ("m={1: 'one', True: None, 2.5: []})", {"m": {"1": "one", "true": None, "2.5": []}}),
        ("s={'k'}, t={'j'} )", {"s": ["k"], "t": ["j"]}),
        ("t='\\u00e9\\N{BLACK STAR}\\x41\\101\\t\\\n', u='')", {"t": "é★AA\t", "u": ""}),
        ("ok=true, no=false, nil=null)", {"ok": True, "no": False, "nil": None}),
        ("run='tail -n '12,40p' /var/log/app.log')", {"run": "tail -n '12,40p' /var/log/app.log"}),
        ("run='pick -F \"]\" out.txt')", {"run": 'pick -F "]" out.txt'}),
        ("run='cat > g.py << END\nimport os\nprint(2)\nEND')", {"run": "cat > g.py << END\nimport os\nprint(2)\nEND"}),
        ("run='echo a\x00b')", {"run": "echo a\x00b"}),
        (
            "run='cd /src && python3 -c \\\"import math\nprint(fmt(2*y, sep='\\\\,'))\\\"')",
            {"run": "cd /src && python3 -c \"import math\nprint(fmt(2*y, sep='\\,'))\""},
        ),
    ],
)
def test_python_arguments_become_json(source, expected):
    text, broken, _ = scan(source)
    assert not broken and json.loads(text) == expected
    assert text == json.dumps(expected, ensure_ascii=False)  # json.dumps's spelling, as vLLM reports calls


@pytest.mark.parametrize(
    "source", ["x=b'z')", "x=f'z')", "x=1e999)", "'positional')", "x=undefined)", "x=1])", "x=--1)"]
)
def test_what_cannot_be_json_breaks_the_scan(source):
    assert scan(source)[1]


def test_strict_quotes_close_at_the_first_quote():
    text, broken, _ = scan("a='x 'y')", lenient=False)
    assert broken and text == '{"a": "x "'


def test_strings_stream_as_written_and_tokens_wait_until_complete():
    _, _, pieces = scan("a='abc', b=12345, c=True)", list("a='abc', b=12345, c=True)"))
    assert pieces[:4] == ["{", '"a": ', '"', "a"]  # the string's characters one by one
    assert "12345" in pieces and "1" not in pieces  # the number only once it ended
    assert "true" in pieces


def test_a_brace_is_held_until_dict_or_set_is_known():
    _, _, pieces = scan("s={'k'}, d={'k': 1})", list("s={'k'}, d={'k': 1})"))
    joined = "".join(pieces)
    assert joined == '{"s": ["k"], "d": {"k": 1}}'
    assert '["k"]' in pieces and '{"k": ' in pieces  # the first element came out with its container's opener


PY_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,7}", fullmatch=True)


@settings(max_examples=150, deadline=None)
@given(args=st.dictionaries(KEYS, PY_VALUES, max_size=4), data=st.data())
def test_random_python_values_round_trip_in_any_split(args, data):
    source = call_text("f", args)[2:]  # after "f("
    cuts = data.draw(st.lists(st.integers(1, max(1, len(source) - 1)), max_size=12))
    text, broken, _ = scan(source, pieces_by(source, cuts))
    assert not broken
    assert text == json.dumps(args, ensure_ascii=False)


@settings(max_examples=80, deadline=None)
@given(
    calls=st.lists(st.tuples(KEYS, st.dictionaries(KEYS, PY_VALUES, max_size=3)), min_size=1, max_size=3),
    content=st.sampled_from(["", "On it. ", "a [b] (c) 'd' <|x"]),
    data=st.data(),
)
def test_random_pythonic_generations_keep_every_rule(calls, content, data):
    from callscope.engine.formats import get_spec

    text = get_spec("pythonic").write(calls, content, "")
    cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=20))
    final = check_stream("pythonic", text, pieces_by(text, cuts), markers=MARKERS)
    assert [(c.name, json.loads(c.arguments)) for c in final.calls] == calls
    assert final.content == content


# ------------------------------------------------------------ the pythonic format (vLLM)

CITY = "forecast(town='Lisbon', scale='kelvin')"
CITY_ARGS = '{"town": "Lisbon", "scale": "kelvin"}'


def test_pythonic_lists_of_calls():
    assert check_stream("pythonic", f"[{CITY}]", markers=MARKERS).calls == (ParsedCall("forecast", CITY_ARGS),)
    two = check_stream("pythonic", f"[{CITY}, enroll(who='Bo', years=9)]")
    assert two.calls == (ParsedCall("forecast", CITY_ARGS), ParsedCall("enroll", '{"who": "Bo", "years": 9}'))
    tight = check_stream("pythonic", "[forecast(town='Rome',scale='C'),enroll(who='Bo',years=9)]")
    assert [c.name for c in tight.calls] == ["forecast", "enroll"]
    assert check_stream("pythonic", "[forecast()]").calls == (ParsedCall("forecast", "{}"),)
    assert check_stream("pythonic", "How may I help?").content == "How may I help?"


def test_pythonic_large_steps():
    text = "[forecast(town='Lis\", \"bon'), forecast(), go(steps=[])]"
    final = check_stream("pythonic", text, ["[forecast(town='Lis", '", "bon\'), forecast(), go(steps=[])]'])
    assert [c.name for c in final.calls] == ["forecast", "forecast", "go"]


def test_pythonic_llama4_and_lfm2_wrappers():
    llama4 = check_stream(
        "pythonic", f"<|python_start|>[{CITY}, enroll(who='Bo', years=9)]<|python_end|>", markers=MARKERS
    )
    assert [c.name for c in llama4.calls] == ["forecast", "enroll"] and llama4.content == ""
    lfm2 = check_stream(
        "pythonic", f"<|tool_call_start|>[{CITY}]<|tool_call_end|>\nLooking that up for you.", markers=MARKERS
    )
    assert lfm2.calls == (ParsedCall("forecast", CITY_ARGS),) and lfm2.content == "Looking that up for you."
    spaced = check_stream("pythonic", f"<|tool_call_start|> [{CITY}]<|tool_call_end|>")
    assert spaced.calls == (ParsedCall("forecast", CITY_ARGS),)
    dotted = check_stream(
        "pythonic",
        "<|tool_call_start|>[shop.order(items=[{'n': 'rice', 'kg': 2}], to='1 Elm St, Town')]<|tool_call_end|>",
    )
    assert dotted.calls[0].name == "shop.order"
    assert json.loads(dotted.calls[0].arguments) == {"items": [{"n": "rice", "kg": 2}], "to": "1 Elm St, Town"}


def test_pythonic_empty_block_means_no_calls():
    for body in ("", " "):
        final = check_stream("pythonic", f"<|tool_call_start|>[{body}]<|tool_call_end|>", markers=MARKERS)
        assert final.calls == () and final.content == ""


def test_pythonic_a_call_that_is_not_one_is_skipped():
    # vLLM drops a sibling whose arguments cannot be JSON; the call opens only once its first value is
    # valid, so such a call is never announced and the next one is read
    for bad in ("bad(x=b'z')", "calc(x=1e999)"):
        final = check_stream("pythonic", f"[{bad}, {CITY}]")
        assert final.calls == (ParsedCall("forecast", CITY_ARGS),), bad
    assert check_stream("pythonic", "[go(x=1])]").calls == ()  # mismatched brackets: no call at all
    assert check_stream("pythonic", "[go(x=1])]").content == "[go(x=1])]"


def test_pythonic_a_broken_call_after_it_opened_keeps_its_arguments():
    # vLLM's non-streaming parser drops the whole call; when streaming, its name went out with its
    # first valid value, so the call stays with what it had (the engine reports the invalid JSON)
    final = check_stream("pythonic", f"[{CITY}, g(a='x 'y', b='z')]")
    assert [c.name for c in final.calls] == ["forecast", "g"] and final.calls[1].arguments == '{"a": "x "'


def test_pythonic_prose_that_looks_like_a_list_is_content():
    for text in ("[Note] see [1, 2]", "[1, 2, 3]", "[]", "<|python_start|>not a list", "[f x]"):
        assert check_stream("pythonic", text, markers=()).content == text, text


def test_pythonic_partial_prefixes():
    assert partial_of("pythonic", "<|tool_call_start|>[forecast(town=").calls == ()  # no value yet
    assert partial_of("pythonic", "<|tool_call_start|>[forecast(town='Lis").calls == (
        ParsedCall("forecast", '{"town": "Lis'),
    )
    assert partial_of("pythonic", "<|tool_call_st").content == ""
    assert feed_all("pythonic", "<|tool_call_start|>[forecast(town='Lis").calls == (
        ParsedCall("forecast", '{"town": "Lis'),
    )


# ------------------------------------------------------------ llama3_json built-in tools (llama.cpp)


@pytest.mark.parametrize(
    "text, name, args",
    [
        ("<|python_tag|>code_interpreter.call(code=\"print('yo')\")", "code_interpreter", {"code": "print('yo')"}),
        ('<|python_tag|>python.call(code="x = 1")', "python", {"code": "x = 1"}),
        (
            '<|python_tag|>brave_search.call(query="tides in Porto")<|eom_id|>',
            "brave_search",
            {"query": "tides in Porto"},
        ),
        ('<|python_tag|>wolfram_alpha.call(query="3*7")', "wolfram_alpha", {"query": "3*7"}),
        ('<|python_tag|> brave_search . call(query="a", count=3)', "brave_search", {"query": "a", "count": 3}),
    ],
)
def test_llama3_builtin_tools(text, name, args):
    final = check_stream("llama3_json", text, markers=("<|python_tag|>", "<|eom_id|>"))
    assert [(c.name, json.loads(c.arguments)) for c in final.calls] == [(name, args)]
    assert final.content == ""


def test_llama3_builtin_streams_and_code_is_content_otherwise():
    text = '<|python_tag|>brave_search.call(query="tides in Porto")'
    assert partial_of("llama3_json", text[: text.index("Porto")]).calls == (
        ParsedCall("brave_search", '{"query": "tides in '),
    )
    assert check_stream("llama3_json", "<|python_tag|>import math\nprint(2)").content == "import math\nprint(2)"
    assert (
        check_stream("llama3_json", "<|python_tag|>brave_search.call(query=b'x')").content
        == "brave_search.call(query=b'x')"
    )
