"""ServiceNow Apriel 1.5 tool calls: ``<tool_calls>[{"name": ..., "arguments": {...}}, ...]</tool_calls>``.

Grammar (llama.cpp's Apriel 1.5 handler: reasoning in ``<thinking>`` tags,
the calls one JSON array in ``<tool_calls>``; Apriel's template writes the
content, then the reasoning, then the calls)::

    content [<thinking> reasoning </thinking>] content <tool_calls> [ {call}, ... ] </tool_calls> content

The call objects are ``{"name": ..., "arguments": ..., "id": ...}``, read by
:class:`~callscope.engine.formats._kit.json_call_machine.CallReader` (arguments stream
verbatim; an ``"id"`` written after the name is not the call's id, which goes
out with the call's first delta). The rules for bad input are those of
:mod:`callscope.engine.formats._kit.call_blocks`.
"""

from __future__ import annotations

from callscope.engine.formats._kit.call_blocks import CallBlockParser, array_block, array_envelope
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign

OPEN = "<tool_calls>"
CLOSE = "</tool_calls>"
THINK = ("<thinking>", "</thinking>")


class Parser(CallBlockParser):
    """Incremental Apriel parser (see the module docstring)."""

    think = THINK
    block_open = OPEN
    block_close = CLOSE


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Content, ``<thinking>`` reasoning, then ``\\n<tool_calls>[...]</tool_calls>`` (Apriel's template order)."""
    thought = f"{THINK[0]}{reasoning}{THINK[1]}" if reasoning else ""
    if not calls:
        return content + thought
    return content + thought + "\n" + array_block(OPEN, [{"name": n, "arguments": a} for n, a in calls], CLOSE)


SPEC = FormatSpec(
    id="apriel",
    description='Apriel 1.5: <tool_calls>[{"name": ..., "arguments": {...}}]</tool_calls>, <thinking> reasoning',
    parser=Parser,
    thinking=True,
    markers=Markers(leak=(OPEN, CLOSE), markup=(r"</?thinking>",)),
    write=write,
    envelopes=(array_envelope(OPEN, CLOSE),),
    signs=(
        TemplateSign(
            691,
            "<thinking>, <available_tools> and <tool_calls>[...] markers (llama.cpp: Apriel 1.5; before Hermes,"
            " whose <tool_call> Apriel's prompt also mentions)",
            (
                "<thinking>",
                "</thinking>",
                "<available_tools>",
                "<|assistant|>",
                "<|tool_result|>",
                "<tool_calls>[",
                "]</tool_calls>",
            ),
        ),
    ),
    template="apriel.jinja",
)
