"""GBNF grammars that make a model write a genuine tool call in a chosen wire format.

A 135M model does not call tools on its own; constrained sampling makes it.
The grammar spells the format's exact wire syntax (markers, the JSON envelope
or XML parameter blocks), allows an optional short content line before the
calls where the format has content, then one or more calls, and takes the
argument rules from each tool's JSON schema (llama-cpp-python's
``SchemaConverter``). The model still chooses every token inside those rules,
so the parser sees a real token-by-token generation.

Schemas are tightened for the forced run only (strings get a ``maxLength``,
arrays a ``maxItems``, JSON strings no raw control characters) so a tiny model
cannot ramble inside a string until ``--max-tokens``.

Mistral has two generations of call syntax and either can be forced
(``mistral_form``): ``array`` writes the Nemo/v3 form
``[TOOL_CALLS][{"name": ..., "arguments": {...}, "id": ...}, ...]``, ``args``
the v11+ form ``[TOOL_CALLS]NAME[ARGS]{...}`` with one ``[TOOL_CALLS]`` per
call (no ``[CALL_ID]``: the engine mints the id, as servers do).
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from callscope.engine.decode.errors import GrammarError, ToolChoiceError

OFF = "off"
ANY = "any"

#: Formats a call can be forced in.
FORCEABLE_FORMATS = (
    "hermes",
    "qwen3_coder",
    "llama3_json",
    "mistral",
    "emulated",
    "generic",
    "deepseek_v31",
    "gpt_oss",
)
#: Formats whose wire syntax has free content before the calls.
_CONTENT_FORMATS = ("hermes", "qwen3_coder", "mistral", "emulated", "deepseek_v31")
#: Formats that carry exactly one call per turn.
_SINGLE_CALL_FORMATS = ("gpt_oss",)

#: Mistral's array form ``[TOOL_CALLS][{...}, ...]`` (Nemo, v3 tokenizer).
MISTRAL_ARRAY = "array"
#: Mistral's named form ``[TOOL_CALLS]NAME[ARGS]{...}``, one marker per call (v11+ tokenizer).
MISTRAL_ARGS = "args"
MISTRAL_FORMS = (MISTRAL_ARRAY, MISTRAL_ARGS)
#: A tool name the named form can carry (what the mistral parser reads as ``NAME``).
_MISTRAL_NAME = re.compile(r"[A-Za-z0-9_.:\-]+")

# A JSON string character without raw control characters (JSON forbids them; the stock rule allows them).
_JSON_CHAR = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'


@dataclass(frozen=True, slots=True)
class ForcedGrammar:
    """A grammar and what it forces: shown in the report's source and recorded in traces."""

    gbnf: str
    format_id: str
    tool_names: tuple[str, ...]
    min_calls: int
    max_calls: int
    content_chars: int
    #: Which Mistral syntax was forced (:data:`MISTRAL_FORMS`); None for other formats.
    mistral_form: str | None = None

    def describe(self) -> str:
        which = self.tool_names[0] if len(self.tool_names) == 1 else "any of " + ", ".join(self.tool_names)
        if self.max_calls == 1:
            calls = "one call"
        elif self.min_calls == self.max_calls:
            calls = f"{self.max_calls} calls"
        else:
            calls = f"{self.min_calls}-{self.max_calls} calls"
        syntax = f"{self.format_id} syntax"
        if self.mistral_form == MISTRAL_ARGS:
            syntax += " ([TOOL_CALLS]NAME[ARGS] form)"
        elif self.mistral_form == MISTRAL_ARRAY:
            syntax += " ([TOOL_CALLS][...] array form)"
        return f"{calls} to {which} in {syntax}"


def forced_tools(force: str, tools: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The tools ``--force-tool`` allows (None for ``off``); unknown names raise :class:`ToolChoiceError`."""
    if force == OFF:
        return None
    tools = tools or []
    if not tools:
        raise ToolChoiceError(f"--force-tool {force}: the request has no tools to call (pass --tools FILE)")
    if force == ANY:
        return list(tools)
    named = [t for t in tools if _fn(t).get("name") == force]
    if not named:
        names = ", ".join(str(_fn(t).get("name")) for t in tools)
        raise ToolChoiceError(
            f"--force-tool {force!r}: no such tool in the request; its tools are: {names} (or any, off)"
        )
    return named


def build_tool_grammar(
    format_id: str,
    tools: list[dict[str, Any]] | None,
    force: str = ANY,
    max_calls: int = 1,
    content_chars: int = 0,
    max_string: int = 24,
    min_calls: int = 1,
    mistral_form: str = MISTRAL_ARRAY,
) -> ForcedGrammar | None:
    """The GBNF forcing calls to the tools ``force`` allows, in ``format_id``; None for ``--force-tool off``.

    ``mistral_form`` picks Mistral's syntax (:data:`MISTRAL_FORMS`); other formats ignore it.
    """
    if mistral_form not in MISTRAL_FORMS:
        raise GrammarError(f"unknown Mistral call form {mistral_form!r}; known forms: {', '.join(MISTRAL_FORMS)}")
    allowed = forced_tools(force, tools)
    if allowed is None:
        return None
    if format_id not in FORCEABLE_FORMATS:
        raise GrammarError(
            f"cannot force a tool call in format {format_id!r}; forceable: {', '.join(FORCEABLE_FORMATS)}"
        )
    if not 1 <= min_calls <= max_calls:
        raise GrammarError(f"need 1 <= min_calls <= max_calls, got {min_calls} and {max_calls}")
    if format_id in _SINGLE_CALL_FORMATS:
        min_calls = max_calls = 1
    if format_id not in _CONTENT_FORMATS:
        content_chars = 0
    form = mistral_form if format_id == "mistral" else None
    builder = _Builder(max_string, form)
    call_rules = [builder.call_rule(format_id, i, tool) for i, tool in enumerate(allowed)]
    builder.rules["call"] = " | ".join(call_rules)
    builder.rules["root"] = _root(format_id, min_calls, max_calls, content_chars, form)
    if content_chars > 0:
        builder.rules["content"] = f'[A-Z] [a-z ,.\']{{0,{max(0, content_chars - 1)}}} "\\n"'
    names = tuple(str(_fn(t)["name"]) for t in allowed)
    return ForcedGrammar(builder.text(), format_id, names, min_calls, max_calls, content_chars, form)


def _fn(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool.get("function", tool) if isinstance(tool, dict) else {}
    return fn if isinstance(fn, dict) else {}


def lit(text: str) -> str:
    """A GBNF string literal."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _root(format_id: str, min_calls: int, max_calls: int, content_chars: int, mistral_form: str | None) -> str:
    content = "content? " if content_chars > 0 else ""
    more = f"{{{min_calls - 1},{max_calls - 1}}}"
    if format_id == "mistral" and mistral_form == MISTRAL_ARGS:
        calls = f"call{{{min_calls},{max_calls}}}"  # each call carries its own [TOOL_CALLS]
    elif format_id == "mistral":
        calls = f'"[TOOL_CALLS][" call ("," space call){more} "]"'
    elif format_id == "generic":
        calls = f'"{{\\"tool_calls\\": [" call ("," space call){more} "]}}"'
    elif format_id == "deepseek_v31":
        calls = f'"<｜tool▁calls▁begin｜>" call (call){more} "<｜tool▁calls▁end｜>"'
    elif format_id == "llama3_json":
        calls = f'call (";" space call){more}'
    elif format_id == "gpt_oss":
        calls = "call"
    else:  # hermes, qwen3_coder, emulated: one block per call, newline-separated
        calls = f'call ("\\n" call){more}'
    return content + calls


class _Builder:
    """Accumulates GBNF rules: JSON-schema rules from llama-cpp-python plus the format's envelope."""

    def __init__(self, max_string: int, mistral_form: str | None = None) -> None:
        from llama_cpp.llama_grammar import SchemaConverter

        self.max_string = max_string
        self.mistral_form = mistral_form
        self.converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
        self.rules: dict[str, str] = {}

    def text(self) -> str:
        rules = dict(self.converter._rules)
        if "char" in rules:
            rules["char"] = _JSON_CHAR
        rules.setdefault("space", '" "?')
        rules.update(self.rules)
        return "\n".join(f"{name} ::= {rule}" for name, rule in rules.items())

    def json_args(self, index: int, tool: dict[str, Any]) -> str:
        schema = _fn(tool).get("parameters") or {"type": "object", "properties": {}}
        try:
            rule = self.converter.visit(tighten(schema, self.max_string), f"t{index}-args")
            # no optional space after the arguments object: raw-body formats would keep it in the arguments
            body = self.converter._rules.get(rule, "")
            if body.endswith(' "}" space'):
                self.converter._rules[rule] = body[: -len(" space")]
            return rule
        except (AssertionError, KeyError, ValueError, TypeError, NotImplementedError) as exc:
            raise GrammarError(
                f"tool {_fn(tool).get('name')!r}: cannot turn its parameters into a grammar ({exc})"
            ) from None

    def call_rule(self, format_id: str, index: int, tool: dict[str, Any]) -> str:
        name = str(_fn(tool)["name"])
        rule = f"t{index}-call"
        if format_id == "qwen3_coder":
            self.rules[rule] = self._xml_call(index, name, tool)
            return rule
        args = self.json_args(index, tool)
        envelope = {
            "hermes": (f'<tool_call>\n{{"name": {json.dumps(name)}, "arguments": ', "}\n</tool_call>"),
            "emulated": (f'TOOL_CALL {{"name": {json.dumps(name)}, "arguments": ', "}"),
            "llama3_json": (f'{{"name": {json.dumps(name)}, "parameters": ', "}"),
            "generic": (f'{{"name": {json.dumps(name)}, "arguments": ', "}"),
            "deepseek_v31": (f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>", "<｜tool▁call▁end｜>"),
            "gpt_oss": (f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>", "<|call|>"),
        }
        if format_id == "mistral" and self.mistral_form == MISTRAL_ARGS:
            if not _MISTRAL_NAME.fullmatch(name):
                raise GrammarError(
                    f"tool {name!r}: the [TOOL_CALLS]NAME[ARGS] form needs a name of letters, digits and _.:- "
                    "(use --mistral-form array)"
                )
            self.rules[rule] = f"{lit('[TOOL_CALLS]' + name + '[ARGS]')} {args}"
            return rule
        if format_id == "mistral":
            # Mistral Nemo calls carry a 9-character alphanumeric id the model writes itself.
            head = lit(f'{{"name": {json.dumps(name)}, "arguments": ')
            id_open, id_close = lit(', "id": "'), lit('"}')
            self.rules[rule] = f"{head} {args} {id_open} [a-zA-Z0-9]{{9}} {id_close}"
            return rule
        head, tail = envelope[format_id]
        self.rules[rule] = f"{lit(head)} {args} {lit(tail)}"
        return rule

    def _xml_call(self, index: int, name: str, tool: dict[str, Any]) -> str:
        """Qwen3-Coder: ``<function=NAME>`` then one ``<parameter=KEY>`` block per argument, raw values."""
        params = _fn(tool).get("parameters") or {}
        props = params.get("properties") or {}
        required = [k for k in params.get("required", []) if k in props]
        optional = [k for k in props if k not in required]
        parts = []
        for key in required + optional:
            value = self._xml_value(index, key, props[key])
            block = f"{lit(f'<parameter={key}>' + chr(10))} {value} {lit(chr(10) + '</parameter>' + chr(10))}"
            parts.append(block if key in required else f"({block})?")
        body = " ".join(parts) if parts else ""
        return f"{lit(f'<tool_call>{chr(10)}<function={name}>{chr(10)}')} {body} {lit('</function>' + chr(10) + '</tool_call>')}"

    def _xml_value(self, index: int, key: str, spec: dict[str, Any]) -> str:
        kind = spec.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            kind = kinds[0] if len(kinds) == 1 else None
        values = spec.get("enum") if "enum" in spec else ([spec["const"]] if "const" in spec else None)
        if values is not None:
            return "(" + " | ".join(lit(v if isinstance(v, str) else json.dumps(v)) for v in values) + ")"
        if kind == "integer":
            return '"-"? [0-9]{1,6}'
        if kind == "number":
            return '"-"? [0-9]{1,6} ("." [0-9]{1,4})?'
        if kind == "boolean":
            return '("true" | "false")'
        if kind in ("object", "array"):
            return self.converter.visit(tighten(spec, self.max_string), f"t{index}-{key}")
        # strings and untyped values: raw text that cannot start a closing tag
        return f"[^<\\x00-\\x1F] [^<\\x00-\\x1F]{{0,{self.max_string - 1}}}"


def tighten(schema: Any, max_string: int) -> Any:
    """A copy of ``schema`` bounded for a forced run (strings, arrays, free-form objects)."""
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        for key in ("properties", "$defs", "definitions"):
            if isinstance(node.get(key), dict):
                node[key] = {k: walk(v) for k, v in node[key].items()}
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                node[key] = walk(node[key])
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            if isinstance(node.get(key), list):
                node[key] = [walk(v) for v in node[key]]
        kind = node.get("type")
        free = not any(k in node for k in ("enum", "const", "pattern", "format", "maxLength"))
        if kind == "string" and free:
            node["maxLength"] = max_string
            node.setdefault("minLength", 1)
        if kind == "array" and "maxItems" not in node:
            node["maxItems"] = 3
        if kind == "object" and "properties" not in node and "additionalProperties" not in node:
            node["properties"] = {}
            node["additionalProperties"] = False
        return node

    return walk(schema)


def compile_grammar(gbnf: str, llama: Any) -> Any:
    """A ``LlamaGrammar`` after checking llama.cpp accepts the text (it would crash the sampler otherwise)."""
    import llama_cpp
    from llama_cpp import LlamaGrammar

    sampler = llama_cpp.llama_sampler_init_grammar(llama._model.vocab, gbnf.encode("utf-8"), b"root")
    if not sampler:
        raise GrammarError("llama.cpp rejected the forced-call grammar (see the parse error above)")
    llama_cpp.llama_sampler_free(sampler)
    return LlamaGrammar.from_string(gbnf, verbose=False)
