"""DeepSeek V3.2 tool calls in DSML: ``<｜DSML｜invoke name="...">`` with typed ``<｜DSML｜parameter>`` values.

Wire format (``｜`` is U+FF5C; content first, reasoning before it in thinking mode)::

    CONTENT

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="NAME">
    <｜DSML｜parameter name="KEY" string="true">VALUE</｜DSML｜parameter>
    <｜DSML｜parameter name="N" string="false">12</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

The parser is :class:`~callscope.engine.formats._kit.invoke_xml.InvokeXmlMachine` (every rule is in its
docstring) with DSML's tags, as llama.cpp's DeepSeek V3.2 handler and vLLM's ``deepseek_v32``
parser read them:

* the schema types a parameter it declares (a string is its exact text, escaped; another single
  type its raw JSON; a union is held and written as JSON if it parses), whatever ``string="..."``
  says, as vLLM coerces it; an undeclared parameter is a string when ``string="true"``, else
  JSON if it parses; Python's ``True``/``False``/``None`` become JSON;
* the value is exactly the text between the tags (no layout newline); ``</｜DSML｜parameter>``
  counts only when the next parameter, ``</｜DSML｜invoke>`` or the block closer follows;
* the block is ``<｜DSML｜function_calls>`` (V3.2) or ``<｜DSML｜tool_calls>`` (DeepSeek V4, the
  same markup), closed by either closer;
* reasoning: ``<think>`` ... ``</think>`` (``Parser(tools, thinking=True)`` when the prompt ended
  with ``<think>``); a block opener right inside reasoning also ends it (llama.cpp's thinking end
  tags are ``</think>`` and the block opener).
"""

from __future__ import annotations

from callscope.engine.formats._kit.gbnf import CallsLayout, Envelope, lit
from callscope.engine.formats._kit.invoke_xml import InvokeXmlMachine
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.writing import think

DSML = "｜DSML｜"
FUNCTION_CALLS = f"<{DSML}function_calls>"
FUNCTION_CALLS_END = f"</{DSML}function_calls>"
#: DeepSeek V4 names the block tool_calls.
TOOL_CALLS = f"<{DSML}tool_calls>"
TOOL_CALLS_END = f"</{DSML}tool_calls>"
INVOKE = f'<{DSML}invoke name="'
INVOKE_END = f"</{DSML}invoke>"
PARAMETER = f'<{DSML}parameter name="'
PARAMETER_END = f"</{DSML}parameter>"


class Parser(InvokeXmlMachine):
    """Incremental DeepSeek V3.2 DSML parser (see :mod:`callscope.engine.formats._kit.invoke_xml` for the rules)."""

    block_opens = (FUNCTION_CALLS, TOOL_CALLS)
    block_closes = (FUNCTION_CALLS_END, TOOL_CALLS_END)
    invoke = INVOKE
    invoke_end = INVOKE_END
    parameter = PARAMETER
    parameter_end = PARAMETER_END
    string_attribute = True
    _reasoning_exits = (FUNCTION_CALLS, TOOL_CALLS)


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Reasoning, content, a blank line, then one ``<｜DSML｜function_calls>`` block, as DeepSeek's encoder writes it."""
    if not calls:
        return think(reasoning) + content
    gap = "\n\n" if content else ""
    return think(reasoning) + content + gap + f"{FUNCTION_CALLS}\n{Parser.invokes_text(calls)}{FUNCTION_CALLS_END}"


SPEC = FormatSpec(
    id="deepseek_v32",
    description='DeepSeek V3.2 DSML: <｜DSML｜function_calls><｜DSML｜invoke name="NAME"><｜DSML｜parameter ...>',
    parser=Parser,
    thinking=True,
    markers=Markers(
        leak=(DSML,),
        markup=(r'</?｜DSML｜[a-z_]+(?:\s+[a-z]+="[^"<>\n]*")*>', r"</?think>"),
    ),
    write=write,
    envelopes=(
        Envelope(
            Parser.grammar_call,
            layout=CallsLayout(open=lit(FUNCTION_CALLS + "\n"), sep=lit("\n"), close=lit("\n" + FUNCTION_CALLS_END)),
            content=True,
        ),
    ),
    signs=(TemplateSign(95, f"DSML tags {DSML} (llama.cpp: DeepSeek V3.2)", (DSML,)),),
    template="deepseek_v32.jinja",
)
