"""Swiss AI Apertus tool calls: ``<|tools_prefix|>[{"NAME": {...}}, ...]<|tools_suffix|>``.

Grammar (llama.cpp's Apertus handler: each call is an object whose one key
is the tool's name and whose value is its arguments; reasoning between
``<|inner_prefix|>`` and ``<|inner_suffix|>``)::

    [<|inner_prefix|> reasoning <|inner_suffix|>] content <|tools_prefix|> [ {NAME: {...}}, ... ] <|tools_suffix|> content

Elements are read by :class:`~callscope.engine.formats._kit.call_array.NameKeyReader`:
the key is complete when its value starts, so the call opens named and its
arguments stream verbatim from their ``{``. The rules for bad input are those
of :mod:`callscope.engine.formats._kit.call_blocks` (an element that is not an object
with one key is not a call; a cut-off array keeps its last call's arguments so
far; a missing ``<|tools_suffix|>`` lets content resume after the array).
"""

from __future__ import annotations

import json

from callscope.engine.formats._kit.call_array import NameKeyReader
from callscope.engine.formats._kit.call_blocks import CallBlockParser, array_block, array_envelope
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign

OPEN = "<|tools_prefix|>"
CLOSE = "<|tools_suffix|>"
THINK = ("<|inner_prefix|>", "<|inner_suffix|>")


class Parser(CallBlockParser):
    """Incremental Apertus parser (see the module docstring)."""

    think = THINK
    block_open = OPEN
    block_close = CLOSE
    element = NameKeyReader


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Reasoning in ``<|inner_prefix|>`` tags, content, then every call in one ``<|tools_prefix|>`` block."""
    thought = f"{THINK[0]}{reasoning}{THINK[1]}" if reasoning else ""
    if not calls:
        return thought + content
    return thought + content + array_block(OPEN, [{name: args} for name, args in calls], CLOSE)


SPEC = FormatSpec(
    id="apertus",
    description='Apertus: <|tools_prefix|>[{"name": {arguments}}]<|tools_suffix|>, <|inner_prefix|> reasoning',
    parser=Parser,
    thinking=True,
    markers=Markers(leak=(OPEN, CLOSE, *THINK)),
    write=write,
    envelopes=(array_envelope(OPEN, CLOSE, head=lambda name: f"{{{json.dumps(name)}: "),),
    signs=(
        TemplateSign(
            863,
            "<|system_start|> and <|tools_prefix|> markers (llama.cpp: Apertus)",
            ("<|system_start|>", OPEN),
        ),
    ),
    template="apertus.jinja",
)
