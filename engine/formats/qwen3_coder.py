"""Qwen3-Coder / Qwen3.5 XML tool calls, streamed as JSON arguments built append-only.

Wire format (one or more blocks, content before them, optional ``<think>`` first)::

    <tool_call>
    <function=NAME>
    <parameter=KEY>
    VALUE
    </parameter>
    </function>
    </tool_call>

The parser is :class:`~callscope.engine.formats._kit.function_xml.FunctionXmlMachine` with the
``<tool_call>`` block (Seed-OSS writes the same functions in ``<seed:tool_call>``); its
docstring has every rule. In short, the JSON arguments are built the way llama.cpp's PEG
mapper builds them (``common/chat-peg-parser.cpp``), but strictly append-only
(:mod:`callscope.engine.formats._kit.xml_values`):

* ``{`` and the name once ``<function=NAME>`` is complete (the name is final at ``>``);
* ``"KEY":`` (``,"KEY":`` from the second parameter on) once ``<parameter=KEY>`` is complete;
* a ``string`` value (schema type from the request's tools): ``"`` when the value starts, then the
  text JSON-escaped as it arrives, the closing ``"`` only once the closer was seen;
* a value of a declared scalar type (integer, number, boolean, null): the raw text as it
  arrives, unquoted (``{"n":1`` then ``{"n":12``); a Python literal (``True``, ``False``,
  ``None``) is held while it could be one and written as ``true``/``false``/``null``;
* a declared ``object`` or ``array``: read as a Python literal, of which JSON is all but a
  subset, and streamed as JSON (``{'a': None, 'b': (1,)}`` is ``{"a": null, "b": [1]}``);
* a value whose type the tools do not declare: held until complete, then written once, raw if
  it parses as a JSON number/true/false/null/object/array (a Python literal, a Python dict,
  list or tuple as its JSON), else as a JSON string. Never guessed and revised;
* ``}`` at ``</function>`` (llama.cpp closes the call at its TOOL_CLOSE tag, ``</function>``).

``</parameter>`` closes a value only when ``</function>``, ``</tool_call>`` or the next
``<parameter=NAME>`` follows it (NAME one of the function's parameters when the schema lists
them, as vLLM checks), or the generation ends: a value may quote the closer.

``Parser(tools, thinking=True)`` starts inside reasoning (a prompt that ends with ``<think>``,
Qwen3.5 thinking mode); by default reasoning exists only when the generation opens ``<think>``.
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
from callscope.engine.formats._kit.writing import dumps, newline_between, think

TOOL_CALL = "<tool_call>"
TOOL_CALL_END = "</tool_call>"


class Parser(FunctionXmlMachine):
    """Incremental Qwen3-Coder XML parser (see :mod:`callscope.engine.formats._kit.function_xml` for the rules)."""

    block_open = TOOL_CALL
    block_close = TOOL_CALL_END


# -------------------------------------------------------------------- spec


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """``<think>`` reasoning, content, then one XML block per call: strings bare, other values as JSON."""
    blocks = []
    for name, args in calls:
        params = "".join(
            f"{PARAMETER}{key}>\n{value if isinstance(value, str) else dumps(value)}\n{PARAMETER_END}\n"
            for key, value in args.items()
        )
        blocks.append(f"{TOOL_CALL}\n{FUNCTION}{name}>\n{params}{FUNCTION_END}\n{TOOL_CALL_END}")
    return think(reasoning) + content + newline_between(content, calls) + "\n".join(blocks)


SPEC = FormatSpec(
    id="qwen3_coder",
    description="Qwen3-Coder / Qwen3.5 XML: <tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</tool_call>",
    parser=Parser,
    thinking=True,
    markers=Markers(
        leak=(TOOL_CALL, TOOL_CALL_END, FUNCTION, FUNCTION_END, PARAMETER, PARAMETER_END),
        markup=(r"<(?:function|parameter)=[^<>\n]*>", r"</?think>"),
    ),
    write=write,
    envelopes=(Envelope(function_call_grammar(TOOL_CALL, TOOL_CALL_END, value_newlines=True), content=True),),
    signs=(
        TemplateSign(
            600,
            "<tool_call> with <function=...> and <parameter=...> blocks (llama.cpp: Qwen3-Coder XML)",
            (TOOL_CALL, FUNCTION, PARAMETER),
        ),
    ),
    template="qwen3_coder.jinja",
)
