"""ByteDance Seed-OSS tool calls: Qwen3-Coder's ``<function=...>`` calls inside ``<seed:tool_call>``.

Wire format (content first, optional ``<seed:think>`` reasoning before it)::

    <seed:think>REASONING</seed:think>CONTENT
    <seed:tool_call>
    <function=NAME>
    <parameter=KEY>VALUE</parameter>
    </function>
    </seed:tool_call>

The parser is :class:`~callscope.engine.formats._kit.function_xml.FunctionXmlMachine` (every rule is in
its docstring) with Seed's block and reasoning tags, as llama.cpp's Seed-OSS handler and vLLM's
``seed_oss`` parser read them:

* the value of ``<parameter=KEY>`` is typed by the request's schema (a string is its raw text, any
  other declared type its JSON, an undeclared one JSON if it parses, else a string); Seed writes
  no newline after ``<parameter=KEY>``, and one newline after it or before ``</parameter>`` is
  layout either way;
* ``</parameter>`` closes a value only when ``</function>``, ``</seed:tool_call>`` or the next
  ``<parameter=NAME>`` follows it (NAME one of the function's parameters when the schema lists
  them), so a value may quote the closer;
* reasoning is ``<seed:think>`` ... ``</seed:think>`` at the start (``Parser(tools, thinking=True)``
  when the prompt ended with ``<seed:think>``); a call written inside reasoning, or Seed's
  ``<seed:cot_budget_reflect>`` notes, stay reasoning text;
* ``<seed:eos>`` (the end-of-sequence token a server may let through) is dropped from content.
"""

from __future__ import annotations

from callscope.engine.formats._kit.function_xml import (
    FUNCTION,
    FUNCTION_END,
    PARAMETER,
    PARAMETER_END,
    FunctionXmlMachine,
    function_call_grammar,
)
from callscope.engine.formats._kit.gbnf import Envelope
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.writing import dumps, newline_between

TOOL_CALL = "<seed:tool_call>"
TOOL_CALL_END = "</seed:tool_call>"
THINK = "<seed:think>"
THINK_END = "</seed:think>"
EOS = "<seed:eos>"


class Parser(FunctionXmlMachine):
    """Incremental Seed-OSS parser (see :mod:`callscope.engine.formats._kit.function_xml` for the rules)."""

    block_open = TOOL_CALL
    block_close = TOOL_CALL_END
    stray_markers = (EOS,)
    _think_open = THINK
    _think_close = THINK_END


# -------------------------------------------------------------------- spec


def _value(value: object) -> str:
    return value if isinstance(value, str) else dumps(value)


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """``<seed:think>`` reasoning, content, then one ``<seed:tool_call>`` block per call, as Seed's template writes it."""
    head = f"{THINK}{reasoning}{THINK_END}" if reasoning else ""
    blocks = []
    for name, args in calls:
        params = "".join(f"{PARAMETER}{key}>{_value(value)}{PARAMETER_END}\n" for key, value in args.items())
        blocks.append(f"{TOOL_CALL}\n{FUNCTION}{name}>\n{params}{FUNCTION_END}\n{TOOL_CALL_END}")
    return head + content + newline_between(content, calls) + "\n".join(blocks)


SPEC = FormatSpec(
    id="seed_oss",
    description="ByteDance Seed-OSS: <seed:tool_call><function=NAME><parameter=KEY>VALUE</parameter>...",
    parser=Parser,
    thinking=True,
    markers=Markers(
        leak=(TOOL_CALL, TOOL_CALL_END, FUNCTION, FUNCTION_END, PARAMETER, PARAMETER_END, EOS),
        markup=(r"<(?:function|parameter)=[^<>\n]*>", r"</?seed:think>", r"</?seed:cot_budget_reflect>"),
    ),
    write=write,
    envelopes=(Envelope(function_call_grammar(TOOL_CALL, TOOL_CALL_END, value_newlines=False), content=True),),
    signs=(
        TemplateSign(853, f"{THINK} reasoning tag (llama.cpp: Seed-OSS)", (THINK,)),
        TemplateSign(854, f"{TOOL_CALL} marker (llama.cpp: Seed-OSS)", (TOOL_CALL,)),
    ),
    template="seed_oss.jinja",
)
