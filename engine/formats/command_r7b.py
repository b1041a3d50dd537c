"""Cohere Command R7B tool calls: ``<|START_ACTION|>[{"tool_call_id": ..., "tool_name": ..., "parameters": {...}}]<|END_ACTION|>``.

Grammar (llama.cpp's Command R7B handler)::

    [<|START_THINKING|> reasoning <|END_THINKING|>]
    ( <|START_RESPONSE|> content <|END_RESPONSE|> | <|START_ACTION|> [ {call}, ... ] <|END_ACTION|> | content )

Call objects are ``{"tool_call_id": ..., "tool_name": ..., "parameters":
...}``, read by :class:`~callscope.engine.formats._kit.json_call_machine.CallReader`
with Cohere's keys: the model writes ``tool_call_id`` first, so it is complete
before the call opens and becomes the call's id (it goes out with the first
delta and never changes); ``parameters`` stream verbatim. The response markers
are removed from content, and so are citations (``<co>`` ... ``</co: 0:[1]>``,
as vLLM strips them), in content and reasoning alike. The rules for bad input
are those of :mod:`callscope.engine.formats._kit.call_blocks`.
"""

from __future__ import annotations

import json

from callscope.engine.formats._kit.call_blocks import CallBlockParser
from callscope.engine.formats._kit.gbnf import ArgumentRules, CallsLayout, Envelope, lit
from callscope.engine.formats._kit.json_call_machine import CallKeys, CallReader
from callscope.engine.formats._kit.parser import FormatParser
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.writing import dumps

START_ACTION = "<|START_ACTION|>"
END_ACTION = "<|END_ACTION|>"
THINK = ("<|START_THINKING|>", "<|END_THINKING|>")
RESPONSE = ("<|START_RESPONSE|>", "<|END_RESPONSE|>")
CITATION = ("<co>", ("</co:", ">"))

COHERE_KEYS = CallKeys(name=("tool_name",), arguments=("parameters",), id=("tool_call_id",))


def _element(parser: FormatParser) -> CallReader:
    return CallReader(parser, COHERE_KEYS)


class Parser(CallBlockParser):
    """Incremental Command R7B parser (see the module docstring)."""

    think = THINK
    block_open = START_ACTION
    block_close = END_ACTION
    dropped = (*RESPONSE, CITATION[0])
    dropped_spans = (CITATION[1],)
    element = staticmethod(_element)


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Reasoning in thinking tags, then the calls as one action block (the template's layout), else the response."""
    thought = f"{THINK[0]}{reasoning}{THINK[1]}" if reasoning else ""
    if not calls:
        return thought + (f"{RESPONSE[0]}{content}{RESPONSE[1]}" if content else "")
    objects = [{"tool_call_id": str(i), "tool_name": name, "parameters": args} for i, (name, args) in enumerate(calls)]
    elements = ",\n    ".join(dumps(o) for o in objects)
    return thought + content + f"{START_ACTION}[\n    {elements}\n]{END_ACTION}"


def action_call(name: str, args: ArgumentRules) -> str:
    """One element of the action array; the model numbers its calls (a digit)."""
    head = lit('{"tool_call_id": "')
    tail = lit(f'", "tool_name": {json.dumps(name)}, "parameters": ')
    return f"{head} [0-9] {tail} {args.json()} {lit('}')}"


SPEC = FormatSpec(
    id="command_r7b",
    description="Command R7B: <|START_ACTION|>[{tool_call_id, tool_name, parameters}]<|END_ACTION|>, thinking tags",
    parser=Parser,
    thinking=True,
    markers=Markers(leak=(START_ACTION, END_ACTION, *THINK, *RESPONSE), markup=(r"<co>", r"</co:[^>]*>")),
    write=write,
    envelopes=(
        Envelope(
            action_call,
            layout=CallsLayout(open=lit(START_ACTION + "[\n    "), sep=lit(",\n    "), close=lit("\n]" + END_ACTION)),
        ),
    ),
    signs=(
        TemplateSign(
            303,
            "<|END_THINKING|><|START_ACTION|> markers (llama.cpp: Command R7B)",
            (THINK[1] + START_ACTION,),
        ),
    ),
    template="command_r7b.jinja",
)
