"""The 2026 call families, from their template alone: peers' cases, thinking on and off, random splits.

Each family (:data:`~callscope.engine.templates.families.FAMILIES`) is read by the parser
``--format auto`` picks for its template (a dedicated one, or the format derived from the
template). Here, for every family:

* peers' cases: the outputs vLLM, SGLang and llama.cpp test the same syntax with, written
  again in the family template's own markers (never copied), streamed one character at a
  time through :func:`~tests.support.format_harness.check_stream`;
* thinking: where the template has a thinking switch, an output written with it on (the
  prompt opened reasoning: the text closes it) and one written with it off (the text
  starts with the call, or with content) both parse right from the template alone
  (``--thinking auto``);
* hypothesis: random splits of the family's own writing keep every streaming rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from callscope.engine.formats import get_spec, make_parser
from callscope.engine.templates.families import FAMILIES, family
from callscope.engine.templates.format_choice import choose_format
from callscope.engine.templates.roundtrip import check_turns
from tests.support.format_harness import check_stream, split_property

VLLM = "vLLM tests/tool_parsers/"
SGLANG = "SGLang test/srt/test_function_call_parser.py"
LLAMACPP = "llama.cpp tests/test-chat.cpp"

pytestmark = pytest.mark.usefixtures("forget_derived")


def chosen(name: str):
    """The choice --format auto makes for the family's template, made now (it registers a derived format,
    which ``forget_derived`` unregisters after the test: other tests list every format)."""
    return choose_format(family(name).template())


def fn(name: str, **props: Any) -> dict[str, Any]:
    properties = {k: v if isinstance(v, dict) else {"type": v} for k, v in props.items()}
    return {"type": "function", "function": {"name": name, "description": name, "parameters": {
        "type": "object", "properties": properties}}}


TOOLS = [
    fn("get_weather", city="string", days="integer", metric="boolean"),
    fn("read_file", path="string"),
    fn("special_function", arg1="integer"),
    fn("special_function_with_opt", arg1="integer", arg2="integer"),
    fn("note", text="string"),
]


@dataclass(frozen=True)
class Case:
    family: str
    peer: str
    text: str
    calls: list[tuple[str, dict[str, Any]]]
    content: str | None = None
    reasoning: str | None = None
    thinking: bool | str = False
    tools: list[dict[str, Any]] = field(default_factory=lambda: TOOLS)

    def __str__(self) -> str:
        return f"{self.family}:{self.peer.split(': ')[-1]}"


def invoke(name: str, **args: Any) -> str:
    """A call in the name-tags family's spelling: every argument's name is its own tag."""
    body = "".join(f"<{k}>{v if isinstance(v, str) else json.dumps(v)}</{k}>\n" for k, v in args.items())
    return f'<invoke name="{name}">\n{body}</invoke>\n'


def kimi3(name: str, **args: Any) -> str:
    """A call in the shared-closer family's spelling: <|open|>TAG ...<|sep|> ... <|close|>TAG<|sep|>."""
    def kind(v: Any) -> str:
        return "string" if isinstance(v, str) else "boolean" if isinstance(v, bool) else "number"

    body = "".join(f'<|open|>arg key="{k}" type="{kind(v)}"<|sep|>{v if isinstance(v, str) else json.dumps(v)}'
                   "<|close|>arg<|sep|>" for k, v in args.items())
    return f'<|open|>call tool="{name}"<|sep|>{body}<|close|>call<|sep|>'


def joined(name: str, **args: Any) -> str:
    body = "".join(f"<p={k}>{v if isinstance(v, str) else json.dumps(v)}</p>" for k, v in args.items())
    return f"<fn={name}>{body}"


CASES = [
    # ------------------------------------------------ name tags (MiniMax-M3: llama.cpp's minimax_m3 handler)
    Case("name_tags", LLAMACPP + ": minimax_m3 one call, typed by the schema",
         "<tool_call>\n" + invoke("get_weather", city="São Paulo", days=4, metric=True) + "</tool_call>",
         [("get_weather", {"city": "São Paulo", "days": 4, "metric": True})], ""),
    Case("name_tags", VLLM + "test_minimax_m3_tool_parser.py: content, then parallel invokes",
         "Checking both.\n<tool_call>\n" + invoke("get_weather", city="Rome") + invoke("read_file", path="a.txt")
         + "</tool_call>", [("get_weather", {"city": "Rome"}), ("read_file", {"path": "a.txt"})], "Checking both.\n"),
    Case("name_tags", VLLM + "test_minimax_m3_tool_parser.py: markup inside a value",
         "<tool_call>\n" + invoke("note", text="use <b>bold</b> and </invoke> here") + "</tool_call>",
         [("note", {"text": "use <b>bold</b> and </invoke> here"})], ""),
    Case("name_tags", LLAMACPP + ": minimax_m3 reasoning, then a call (thinking on)",
         "The user wants Lyon.\n</think>\n\n<tool_call>\n" + invoke("get_weather", city="Lyon") + "</tool_call>",
         [("get_weather", {"city": "Lyon"})], "", "The user wants Lyon.", thinking="auto"),
    # ------------------------------------------------ shared closer (Kimi-K3)
    Case("shared_closer", VLLM + "test_kimi_k3_tool_parser.py: two arguments, one closer token for value and call",
         kimi3("get_weather", city="Oslo", days=2), [("get_weather", {"city": "Oslo", "days": 2})], ""),
    Case("shared_closer", VLLM + "test_kimi_k3_tool_parser.py: calls one after another",
         "Two lookups." + kimi3("get_weather", city="Rome", metric=False) + kimi3("read_file", path="/etc/hosts"),
         [("get_weather", {"city": "Rome", "metric": False}), ("read_file", {"path": "/etc/hosts"})], "Two lookups."),
    Case("shared_closer", LLAMACPP + ": Kimi-K3 thinking channel, then a call (thinking on)",
         "Need the forecast.<|close|>think<|sep|>" + kimi3("get_weather", city="Kyiv"),
         [("get_weather", {"city": "Kyiv"})], "", "Need the forecast.", thinking="auto"),
    # ------------------------------------------------ calls joined without a separator
    Case("joined_calls", SGLANG + ": two calls back to back, no separator",
         joined("get_weather", city="Paris", days=3) + joined("read_file", path="notes.txt"),
         [("get_weather", {"city": "Paris", "days": 3}), ("read_file", {"path": "notes.txt"})], ""),
    Case("joined_calls", SGLANG + ": content, then one call at the end of the turn",
         "Let me look.\n" + joined("get_weather", city="Nice"), [("get_weather", {"city": "Nice"})], "Let me look.\n"),
    # ------------------------------------------------ pythonic after leading text (LFM2.5, SGLang's detector)
    Case("pythonic_text", SGLANG + " PythonicDetector: text before the list",
         "Sure, checking both. [get_weather(city='Paris', days=2), read_file(path=\"/tmp/a\")]",
         [("get_weather", {"city": "Paris", "days": 2}), ("read_file", {"path": "/tmp/a"})], "Sure, checking both. "),
    Case("pythonic_text", VLLM + "test_pythonic_tool_parser.py: Python literals",
         "[get_weather(city='Lima', metric=True, days=None)]",
         [("get_weather", {"city": "Lima", "metric": True, "days": None})], ""),
    Case("pythonic_text", LLAMACPP + ": LFM2.5 content, then the wrapped list",
         "I'll check.<|tool_call_start|>[get_weather(city='Bern')]<|tool_call_end|>",
         [("get_weather", {"city": "Bern"})], "I'll check."),
    # ------------------------------------------------ functools (FireFunction v2)
    Case("functools", LLAMACPP + ": FireFunction call",
         ' functools[{"name": "special_function", "arguments": {"arg1": 1}}]', [("special_function", {"arg1": 1})], ""),
    Case("functools", LLAMACPP + ": FireFunction content only", "Hello, world!\nWhat's up?", [],
         "Hello, world!\nWhat's up?"),
    Case("functools", VLLM + "test_firefunction: two calls in the list",
         'Sure. functools[{"name": "get_weather", "arguments": {"city": "Bonn"}}, {"name": "read_file", '
         '"arguments": {"path": "x"}}]', [("get_weather", {"city": "Bonn"}), ("read_file", {"path": "x"})], "Sure."),
    # ------------------------------------------------ an opener the prompt already holds (Command R+)
    Case("prompt_holds", LLAMACPP + ": Command R+ action block",
         'Act:\n```json\n[{"tool_name": "special_function", "parameters": {"arg1": 1}}]\n```',
         [("special_function", {"arg1": 1})], ""),
    Case("prompt_holds", LLAMACPP + ": Command R+ with the header the prompt holds written again",
         '<|bot|>\nAct:\n```json\n[{"tool_name": "get_weather", "parameters": {"city": "Graz"}}]\n```',
         [("get_weather", {"city": "Graz"})], ""),
    Case("prompt_holds", LLAMACPP + ": Command R+ answer", "<|bot|>Hello, world!\nWhat's up?", [],
         "Hello, world!\nWhat's up?"),
    # ------------------------------------------------ [THINK] (Ministral 3: llama.cpp's ministral_3 cases)
    Case("think_brackets", LLAMACPP + ": Ministral content", "Hello, world!\nWhat's up?", [], "Hello, world!\nWhat's up?"),
    Case("think_brackets", LLAMACPP + ": Ministral reasoning, then content",
         "[THINK]I'm\nthinking[/THINK]Hello, world!\nWhat's up?", [], "Hello, world!\nWhat's up?", "I'm\nthinking"),
    Case("think_brackets", LLAMACPP + ": Ministral reasoning, then a call",
         '[THINK]I\'m\nthinking[/THINK][TOOL_CALLS]special_function[ARGS]{"arg1":1}',
         [("special_function", {"arg1": 1})], "", "I'm\nthinking"),
    Case("think_brackets", LLAMACPP + ": Ministral parallel calls",
         '[TOOL_CALLS]special_function[ARGS]{"arg1": 1}[TOOL_CALLS]special_function_with_opt[ARGS]{"arg1": 1, "arg2": 2}',
         [("special_function", {"arg1": 1}), ("special_function_with_opt", {"arg1": 1, "arg2": 2})], ""),
    Case("think_brackets", LLAMACPP + ": Ministral fake tool call marker in reasoning",
         '[THINK]Let me think about [TOOL_CALLS]special_function[ARGS]{"arg1":1} and more[/THINK]'
         '[TOOL_CALLS]special_function[ARGS]{"arg1": 1}', [("special_function", {"arg1": 1})], "",
         'Let me think about [TOOL_CALLS]special_function[ARGS]{"arg1":1} and more'),
]


def test_every_family_has_peer_cases():
    assert {c.family for c in CASES} == {f.name for f in FAMILIES}


@pytest.mark.parametrize("case", CASES, ids=str)
def test_peers_cases_parse_as_they_expect(case):
    choice = chosen(case.family)
    format_id = choice.format_id
    if case.thinking == "auto":
        final = read(format_id, case.text, case.tools, choice.thinking("auto"))
    else:
        markers = tuple(m for m in get_spec(format_id).markers.leak if m not in case.text.split("</think>")[0])
        final = check_stream(format_id, case.text, tools=case.tools, markers=markers)
    assert [(c.name, json.loads(c.arguments)) for c in final.calls] == case.calls
    if case.content is not None:
        assert final.content == case.content
    if case.reasoning is not None:
        assert final.reasoning == case.reasoning


def read(format_id: str, text: str, tools: list[dict[str, Any]], thinking: bool | str):
    """``text`` fed one character at a time to a parser that starts with ``thinking``; the terminal parse."""
    parser = make_parser(format_id, tools, thinking)
    for char in text:
        parser.feed(char)
    parser.finish()
    return parser.snapshot()


# ------------------------------------------------------------------ thinking on and off, from the template alone

SWITCHED = [f for f in FAMILIES if f.switch]


def test_the_families_with_a_switch_open_reasoning_by_default():
    assert {f.name for f in SWITCHED} == {"name_tags", "shared_closer"}
    assert all(chosen(f.name).may_open_reasoning for f in SWITCHED)


@pytest.mark.parametrize("fam", SWITCHED, ids=lambda f: f.name)
def test_outputs_with_thinking_on_and_off_parse_from_the_template_alone(fam):
    """The template's own call turn with the switch on and off: the parser is told neither (auto)."""
    choice = chosen(fam.name)
    turns = {turn.enable_thinking: turn for turn in check_turns(fam.template().renderer())
             if turn.switch == fam.switch or turn.enable_thinking is None}
    on, off = turns[None], turns[False]  # the default is on
    assert on.thinking and not off.thinking
    thought = "Weighing which tool to call first. "  # the reasoning the model writes before it closes the block
    for turn, text in ((on, thought + on.generation), (off, off.generation)):
        final = read(choice.format_id, text, None, choice.thinking("auto"))
        assert [(c.name, json.loads(c.arguments)) for c in final.calls] == [(n, a) for n, a in turn.calls]
        assert final.content == ""
        assert final.reasoning.startswith(thought.strip()) if turn.thinking else final.reasoning == ""


@pytest.mark.parametrize("fam", SWITCHED, ids=lambda f: f.name)
def test_plain_content_with_thinking_off_is_content(fam):
    """Thinking off and no call: the generation ends undecided, so it was content."""
    choice = chosen(fam.name)
    final = read(choice.format_id, "Paris is sunny today.", None, choice.thinking("auto"))
    assert (final.content, final.reasoning, final.calls) == ("Paris is sunny today.", "", ())


# ------------------------------------------------------------------ random splits

WEATHER = ("get_weather", {"city": "Paris", "days": 3})
READ = ("read_file", {"path": "/tmp/notes.txt"})


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_random_splits_keep_every_rule(fam):
    format_id = chosen(fam.name).format_id
    write = get_spec(format_id).write
    samples = [write([WEATHER], "Let me check.", ""), write([WEATHER, READ], "", ""), write([READ], "", "")]
    split_property(format_id, samples, TOOLS, 40)()
