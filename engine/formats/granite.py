"""IBM Granite 3.x tool calls: ``<|tool_call|>[{"name": ..., "arguments": {...}}, ...]``.

Grammar (llama.cpp's Granite handler: the calls are a JSON array after the
marker, which ends the turn; thinking mode wraps the answer in tags)::

    [<think> reasoning </think>] [<response>] content [</response>] [<|tool_call|> [ {call}, ... ]] content

The call objects are ``{"name": ..., "arguments": ...}`` and are read by
:class:`~callscope.engine.formats._kit.json_call_machine.CallReader` (arguments stream
verbatim as the model writes them). ``<response>`` and ``</response>`` are
removed from content, as llama.cpp does. Granite 3.1 may write the marker as the
plain text ``<tool_call>``; followed by the array it opens the calls the same way
(vLLM's ``granite`` parser strips either). The marker has no closer: whatever
follows the array is content. The rules for bad input (a marker that is not
followed by calls is content, verbatim; a call cut short keeps its arguments)
are those of :mod:`callscope.engine.formats._kit.call_blocks`.
"""

from __future__ import annotations

from callscope.engine.formats._kit.call_blocks import CallBlockParser, array_block, array_envelope
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.writing import think

TOOL_CALL = "<|tool_call|>"
#: Granite 3.1's spelling of the marker, as plain text.
TOOL_CALL_TEXT = "<tool_call>"
THINK = ("<think>", "</think>")
RESPONSE = ("<response>", "</response>")


class Parser(CallBlockParser):
    """Incremental Granite parser (see the module docstring)."""

    think = THINK
    block_open = TOOL_CALL
    block_open_alternates = (TOOL_CALL_TEXT,)
    dropped = RESPONSE


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """``<think>`` reasoning, content, then ``<|tool_call|>`` and the calls as one JSON array (Granite's template)."""
    block = array_block(TOOL_CALL, [{"name": name, "arguments": args} for name, args in calls]) if calls else ""
    return think(reasoning) + content + block


SPEC = FormatSpec(
    id="granite",
    description='Granite 3.x: <|tool_call|>[{"name": ..., "arguments": {...}}, ...], optional <think> reasoning',
    parser=Parser,
    thinking=True,
    markers=Markers(leak=(TOOL_CALL,), markup=(r"</?think>", r"</?response>")),
    write=write,
    envelopes=(array_envelope(TOOL_CALL),),
    signs=(
        TemplateSign(
            307,
            "<|tool_call|> marker and a thinking switch (llama.cpp: Granite)",
            (TOOL_CALL, "elif thinking"),
        ),
    ),
    template="granite.jinja",
)
