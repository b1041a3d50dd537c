"""NVIDIA Nemotron Nano v2 tool calls: ``<TOOLCALL>[{"name": ..., "arguments": {...}}, ...]</TOOLCALL>``.

Grammar (llama.cpp's Nemotron v2 handler)::

    [<think> reasoning </think>] content <TOOLCALL> [ {call}, ... ] </TOOLCALL> content

The call objects are ``{"name": ..., "arguments": ...}``, read by
:class:`~callscope.engine.formats._kit.json_call_machine.CallReader` (arguments stream
verbatim). Text before and after the block is content (llama.cpp keeps both).
The rules for bad input are those of :mod:`callscope.engine.formats._kit.call_blocks`:
``<TOOLCALL>`` not followed by calls is content, verbatim; an array broken
after a call is read to ``</TOOLCALL>`` and dropped; a missing closer lets
content resume after the array.
"""

from __future__ import annotations

from callscope.engine.formats._kit.call_blocks import CallBlockParser, array_block, array_envelope
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.writing import newline_between, think

OPEN = "<TOOLCALL>"
CLOSE = "</TOOLCALL>"


class Parser(CallBlockParser):
    """Incremental Nemotron Nano v2 parser (see the module docstring)."""

    think = ("<think>", "</think>")
    block_open = OPEN
    block_close = CLOSE


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """``<think>`` reasoning, content, then one ``<TOOLCALL>`` block holding every call."""
    if not calls:
        return think(reasoning) + content
    block = array_block(OPEN, [{"name": name, "arguments": args} for name, args in calls], CLOSE)
    return think(reasoning) + content + newline_between(content, calls) + block


SPEC = FormatSpec(
    id="nemotron_v2",
    description='Nemotron Nano v2: <TOOLCALL>[{"name": ..., "arguments": {...}}]</TOOLCALL>, optional <think>',
    parser=Parser,
    thinking=True,
    markers=Markers(leak=(OPEN, CLOSE), markup=(r"</?think>",)),
    write=write,
    envelopes=(array_envelope(OPEN, CLOSE),),
    signs=(TemplateSign(861, "<SPECIAL_10> role marker (llama.cpp: Nemotron v2)", ("<SPECIAL_10>",)),),
    template="nemotron_v2.jinja",
)
