"""MiniMax-M2 tool calls: ``<invoke name="...">`` calls with ``<parameter name="...">`` values.

Wire format (content first, optional ``<think>`` reasoning before it)::

    <think>REASONING</think>CONTENT
    <minimax:tool_call>
    <invoke name="NAME">
    <parameter name="KEY">VALUE</parameter>
    </invoke>
    <invoke name="NAME2">...</invoke>
    </minimax:tool_call>

The parser is :class:`~callscope.engine.formats._kit.invoke_xml.InvokeXmlMachine` (every rule is in its
docstring) with MiniMax's block tags, as llama.cpp's MiniMax-M2 handler and vLLM's
``minimax_m2`` parser read them: values typed by the request's schema (a string is its raw text;
another declared type its JSON; an undeclared one JSON if it parses, else a string, as
llama.cpp reads it), one newline after ``<parameter name="KEY">`` and one before
``</parameter>`` are layout, ``</parameter>`` counts only when the next parameter,
``</invoke>`` or ``</minimax:tool_call>`` follows. ``Parser(tools, thinking=True)`` starts inside
reasoning (the prompt ended with ``<think>``, MiniMax's thinking mode).
"""

from __future__ import annotations

from callscope.engine.formats._kit.gbnf import (
    ArgumentRules,
    CallsLayout,
    Envelope,
    ParameterRule,
    lit,
    parameter_blocks,
)
from callscope.engine.formats._kit.invoke_xml import InvokeXmlMachine
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.writing import dumps, newline_between, think

TOOL_CALL = "<minimax:tool_call>"
TOOL_CALL_END = "</minimax:tool_call>"
INVOKE = '<invoke name="'
INVOKE_END = "</invoke>"
PARAMETER = '<parameter name="'
PARAMETER_END = "</parameter>"


class Parser(InvokeXmlMachine):
    """Incremental MiniMax-M2 parser (see :mod:`callscope.engine.formats._kit.invoke_xml` for the rules)."""

    block_opens = (TOOL_CALL,)
    block_closes = (TOOL_CALL_END,)
    invoke = INVOKE
    invoke_end = INVOKE_END
    parameter = PARAMETER
    parameter_end = PARAMETER_END
    _layout_newlines = True


# -------------------------------------------------------------------- spec


def _value(value: object) -> str:
    return value if isinstance(value, str) else dumps(value)


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """``<think>`` reasoning, content, then one ``<minimax:tool_call>`` block of invokes, as MiniMax's template writes it."""
    if not calls:
        return think(reasoning) + content
    invokes = "".join(
        f'{INVOKE}{name}">\n'
        + "".join(f'{PARAMETER}{key}">{_value(value)}{PARAMETER_END}\n' for key, value in args.items())
        + f"{INVOKE_END}\n"
        for name, args in calls
    )
    return think(reasoning) + content + newline_between(content, calls) + f"{TOOL_CALL}\n{invokes}{TOOL_CALL_END}"


def _parameter(param: ParameterRule) -> str:
    return " ".join((lit(f'{PARAMETER}{param.key}">'), param.value, lit(PARAMETER_END + "\n")))


def grammar_call(name: str, args: ArgumentRules) -> str:
    """``<invoke name="NAME">`` then one ``<parameter name="KEY">VALUE</parameter>`` line per argument."""
    return " ".join((lit(f'{INVOKE}{name}">\n'), parameter_blocks(args, _parameter), lit(INVOKE_END)))


SPEC = FormatSpec(
    id="minimax_m2",
    description='MiniMax-M2: <minimax:tool_call><invoke name="NAME"><parameter name="KEY">VALUE</parameter>...',
    parser=Parser,
    thinking=True,
    markers=Markers(
        leak=(TOOL_CALL, TOOL_CALL_END),
        markup=(r'<invoke name="[^"<>\n]*">', r'<parameter name="[^"<>\n]*">', r"</(?:invoke|parameter)>", r"</?think>"),
    ),
    write=write,
    envelopes=(
        Envelope(
            grammar_call,
            layout=CallsLayout(open=lit(TOOL_CALL + "\n"), sep=lit("\n"), close=lit("\n" + TOOL_CALL_END)),
            content=True,
        ),
    ),
    signs=(
        TemplateSign(883, "]~!b[ and ]~b] role tokens (llama.cpp: MiniMax-M2)", ("]~!b[", "]~b]")),
        TemplateSign(884, f"{TOOL_CALL} marker (llama.cpp: MiniMax-M2)", (TOOL_CALL,)),
    ),
    template="minimax_m2.jinja",
)
