"""GBNF grammars that make a model write a genuine tool call in a chosen wire format.

A 135M model does not call tools on its own; constrained sampling makes it.
The grammar has two halves. The format's wire syntax (markers, the JSON call
object or XML parameter blocks, whether a short content line may come first,
how several calls are laid out) is the envelope its spec declares
(:class:`~callscope.engine.formats._kit.gbnf.Envelope`); this module never names a
format. The argument rules come from each tool's JSON schema, through
llama-cpp-python's ``SchemaConverter`` (``$ref``/``$defs`` resolved first, so
Pydantic and ``pydantic_function_tool`` schemas work). The model still chooses
every token inside those rules, so the parser sees a real token-by-token
generation.

Schemas are tightened for the forced run only (:func:`tighten`: strings get a
``maxLength``, arrays a ``maxItems`` never below their ``minItems``, small
integer ranges become enums, string formats the converter lacks or gets wrong
become patterns whose every match is valid, JSON strings no raw control
characters) so a tiny model cannot ramble inside a string until
``--max-tokens`` and what it writes validates against the schema.

A format with several syntaxes declares one envelope per *form* (Mistral's
``array`` and ``args``); ``forms`` (format id -> form) picks one, the first is
the default.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from callscope.engine.core.errors import GrammarError, ToolChoiceError
from callscope.engine.formats import (
    CannotForce,
    Envelope,
    FormatSpec,
    ParameterRule,
    all_specs,
    declared_type,
    get_spec,
    lit,
    repeat,
)

OFF = "off"
ANY = "any"

# A JSON string character without raw control characters (JSON forbids them; the stock rule allows them).
_JSON_CHAR = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})'
# The same inside a Python string literal (pythonic calls): no ``\/``, which Python keeps as two characters.
_PY_CHAR = r'[^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4})'
#: Rule names of the Python-literal converter (pythonic calls) are its JSON names with this prefix.
_PY = "py-"
# A character of the short content line a forced run may write before its calls (after a capital).
_CONTENT_CHAR = "[a-z ,.']"
# A character of a raw-text value (XML-parameter formats): no ``<`` (it could start the closer), no control.
_RAW_CHAR = r"[^<\x00-\x1F]"
# The first character of raw text that must not read as JSON (a value of undeclared type is JSON if it parses).
_RAW_PROSE_START = r'[^<\x00-\x20"\[{0-9tfn-]'
_RAW_UUID = ' "-" '.join(f"[0-9a-fA-F]{{{n}}}" for n in (8, 4, 4, 4, 12))
_RAW_SCALARS = {
    "integer": '"-"? [0-9]{1,6}',
    "number": '"-"? [0-9]{1,6} ("." [0-9]{1,4})?',
    "boolean": '("true" | "false")',
}
#: Schema errors the converter raises (it asserts on what it does not support).
_CONVERTER_ERRORS = (AssertionError, KeyError, ValueError, TypeError, NotImplementedError, IndexError, AttributeError)


def forceable_formats() -> tuple[str, ...]:
    """The formats a call can be forced in: those whose spec declares a grammar envelope."""
    return tuple(spec.id for spec in all_specs() if spec.envelopes)


def form_choices() -> dict[str, tuple[str, ...]]:
    """Format id -> the forced-call syntaxes it offers (default first), for formats with several."""
    return {spec.id: spec.forms for spec in all_specs() if spec.forms}


@dataclass(frozen=True, slots=True)
class ForcedGrammar:
    """A grammar and what it forces: shown in the report's source and recorded in traces."""

    gbnf: str
    format_id: str
    tool_names: tuple[str, ...]
    min_calls: int
    max_calls: int
    content_chars: int
    #: Which of the format's syntaxes was forced, for a format with several (its envelope's ``form``); else None.
    form: str | None = None
    #: How that syntax is described ("[TOOL_CALLS]NAME[ARGS] form"); "" for none.
    form_label: str = ""

    def describe(self) -> str:
        which = self.tool_names[0] if len(self.tool_names) == 1 else "any of " + ", ".join(self.tool_names)
        if self.max_calls == 1:
            calls = "one call"
        elif self.min_calls == self.max_calls:
            calls = f"{self.max_calls} calls"
        else:
            calls = f"{self.min_calls}-{self.max_calls} calls"
        syntax = f"{self.format_id} syntax"
        if self.form_label:
            syntax += f" ({self.form_label})"
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
    forms: Mapping[str, str] | None = None,
) -> ForcedGrammar | None:
    """The GBNF forcing calls to the tools ``force`` allows, in ``format_id``; None for ``--force-tool off``.

    ``forms`` picks a syntax per format (format id -> form name, :func:`form_choices`);
    formats it does not mention get their default.
    """
    allowed = forced_tools(force, tools)
    if allowed is None:
        return None
    spec = _forceable_spec(format_id)
    envelope = _envelope(spec, (forms or {}).get(format_id))
    if not 1 <= min_calls <= max_calls:
        raise GrammarError(f"need 1 <= min_calls <= max_calls, got {min_calls} and {max_calls}")
    if envelope.single_call:
        min_calls = max_calls = 1
    if not envelope.content:
        content_chars = 0
    rules = _Rules(max_string)
    call_rules = [rules.call(i, tool, envelope) for i, tool in enumerate(allowed)]
    rules.add("call", " | ".join(call_rules))
    rules.add("root", ("content? " if content_chars > 0 else "") + envelope.layout.expression(min_calls, max_calls))
    if content_chars > 0:
        rules.add("content", f'[A-Z] {repeat(_CONTENT_CHAR, 0, max(0, content_chars - 1))} "\\n"')
    names = tuple(str(_fn(t)["name"]) for t in allowed)
    form = envelope.form if spec.forms else None
    return ForcedGrammar(rules.text(), format_id, names, min_calls, max_calls, content_chars, form, envelope.label)


def _forceable_spec(format_id: str) -> FormatSpec:
    try:
        spec = get_spec(format_id)
    except ValueError:
        spec = None
    if spec is None or not spec.envelopes:
        raise GrammarError(
            f"cannot force a tool call in format {format_id!r}; forceable: {', '.join(forceable_formats())}"
        )
    return spec


def _envelope(spec: FormatSpec, form: str | None) -> Envelope:
    try:
        return spec.envelope(form)
    except ValueError as exc:
        raise GrammarError(str(exc)) from None


def _fn(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool.get("function", tool) if isinstance(tool, dict) else {}
    return fn if isinstance(fn, dict) else {}


def _make_converter(raw_pattern: bool = False, python: bool = False) -> Any:
    r"""llama-cpp-python's ``SchemaConverter``, with ``$ref`` rules named per tool.

    The stock converter names the rule of ``#/$defs/Address`` just ``Address``,
    so two tools with different ``Address`` models would share one rule; refs
    are resolved with the tool's own base (``t0``), and the rule is ``t0-Address``.

    ``python``: values as Python literals rather than JSON (pythonic calls): a
    JSON object, array, string or number is already Python source, so only the
    constants differ (``True``/``False``/``None``) and ``\/`` is left out of
    strings; the primitive rules get their own names (``py-boolean``) so they
    live beside the JSON ones in one grammar.
    """
    from llama_cpp.llama_grammar import INVALID_RULE_CHARS_RE, PRIMITIVE_RULES, STRING_FORMAT_RULES, SchemaConverter

    class Converter(SchemaConverter):
        def _resolve_ref(self, ref: str) -> str:
            base, _, fragment = ref.partition("#")
            name = INVALID_RULE_CHARS_RE.sub("-", f"{base}-{fragment.rsplit('/', 1)[-1]}")
            if name not in self._rules and ref not in self._refs_being_resolved:
                self._refs_being_resolved.add(ref)
                name = self.visit(self._refs[ref], name)
                self._refs_being_resolved.remove(ref)
            return name

    class PythonConverter(Converter):
        _OWN = {"boolean": '("True" | "False") space', "null": '"None" space', "char": _PY_CHAR}

        def _add_primitive(self, name: str, rule: Any) -> str:
            content = self._OWN.get(name, rule.content)
            for dep in rule.deps:
                content = re.sub(rf"(?<![\w-]){re.escape(dep)}(?![\w-])", _PY + dep, content)
            added = self._add_rule(_PY + name if name != "root" else name, content)
            for dep in rule.deps:
                if _PY + dep not in self._rules:
                    self._add_primitive(dep, PRIMITIVE_RULES.get(dep) or STRING_FORMAT_RULES.get(dep))
            return added

        def _generate_constant_rule(self, value: Any) -> str:
            return self._format_literal(python_literal(value))

    cls = PythonConverter if python else Converter
    return cls(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=raw_pattern)


def python_literal(value: Any) -> str:
    """``value`` (JSON data) as Python source: JSON spelling, but ``True``/``False``/``None``."""
    if value is True:
        return "True"
    if value is False:
        return "False"
    if value is None:
        return "None"
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {python_literal(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


class _Rules:
    """Accumulates GBNF: the schema converter's rules plus the envelope's (calls, root, content)."""

    def __init__(self, max_string: int) -> None:
        self.max_string = max_string
        self.converter = _make_converter()
        self._raw = _make_converter(raw_pattern=True)  # bare (unquoted) pattern rules for raw-text values
        self._raw._rules = self.converter._rules  # one rule set, one ref table
        self._raw._refs = self.converter._refs
        self.python = _make_converter(python=True)  # Python-literal values (pythonic calls)
        self.python._rules = self.converter._rules
        self.python._refs = self.converter._refs
        self.rules: dict[str, str] = {}

    def add(self, name: str, rule: str) -> None:
        self.rules[name] = rule

    def text(self) -> str:
        rules = {name: _bounded_open_object(name, rule) for name, rule in self.converter._rules.items()}
        if "char" in rules:
            rules["char"] = _JSON_CHAR
        if "string" in rules:  # the free string (object keys, unknown formats): bounded like the others
            rules["string"] = f'"\\"" {repeat("char", 0, self.max_string)} "\\"" space'
        if _PY + "string" in rules:
            rules[_PY + "string"] = f'"\\"" {repeat(_PY + "char", 0, self.max_string)} "\\"" space'
        rules.setdefault("space", '" "?')
        rules.update(self.rules)
        return "\n".join(f"{name} ::= {rule}" for name, rule in rules.items())

    def call(self, index: int, tool: dict[str, Any], envelope: Envelope) -> str:
        """Add the rule of one call to ``tool`` in the envelope's syntax; return its name."""
        name = str(_fn(tool)["name"])
        rule = f"t{index}-call"
        try:
            self.rules[rule] = envelope.call(name, _ToolArguments(self, index, tool))
        except CannotForce as exc:
            raise GrammarError(f"tool {name!r}: {exc}") from None
        return rule

    # ------------------------------------------------------------ schema side

    def visit(self, schema: Any, name: str) -> str:
        return self.converter.visit(schema, name)

    def deref(self, schema: Any) -> Any:
        """``schema`` with ``$ref`` chains followed (refs are resolved to absolute ones by then)."""
        for _ in range(32):  # a ref cycle without structure in between: give up, the converter reports it
            if not isinstance(schema, dict) or "$ref" not in schema:
                break
            schema = self.converter._refs[schema["$ref"]]
        return schema

    def raw_value(self, name: str, spec: Any, declared: Any) -> str:
        """The GBNF of a parameter value written as raw text, as XML-parameter formats write it.

        ``declared`` is the parameter's schema as the request has it: the parser
        reads a value by its declared type (a string is its bare text, another
        declared type its JSON, an undeclared one JSON if it parses and a string
        otherwise), so the text must be what reads back as valid.
        """
        kind = declared_type(declared)
        target = self.deref(spec)
        values = _literal_values(target)
        if values is not None:
            return "(" + " | ".join(lit(v if isinstance(v, str) else json.dumps(v)) for v in values) + ")"
        if kind in _RAW_SCALARS:
            return _RAW_SCALARS[kind]
        if kind == "string":
            return self.raw_string(_string_branch(self, target), name)
        if kind is None and _free_form(target):
            return self.raw_string({}, name)
        if kind is None:
            return self.undeclared_value(spec, name)
        return self.visit(spec, name)  # object, array, null: the parser takes their JSON as written

    def undeclared_value(self, spec: Any, name: str) -> str:
        """A value whose type the parser cannot tell (``anyOf``, ``$ref``, several types): JSON, or prose for strings."""
        branches = [self.deref(b) for b in _branches(self.deref(spec))]
        if not any(_is_string(b) for b in branches):
            return self.visit(spec, name)  # through its $ref, so a shared model stays one rule
        alternatives = [
            self.raw_string(b, f"{name}-{i}", prose=True) if _is_string(b) else self.visit(b, f"{name}-{i}")
            for i, b in enumerate(branches)
        ]
        return "(" + " | ".join(alternatives) + ")"

    def raw_string(self, schema: dict[str, Any], name: str, prose: bool = False) -> str:
        """Bare text for a string schema: its pattern or format, else 1..``max_string`` characters.

        ``prose``: the text must not read as JSON (a number, ``true``, an object),
        for a value the parser turns into JSON when it parses.
        """
        if "pattern" in schema:
            return self._raw.visit({"pattern": schema["pattern"]}, f"{name}-raw")
        if str(schema.get("format", "")).startswith("uuid"):
            return _RAW_UUID
        low = max(1 if prose else 0, int(schema.get("minLength", 1)))
        high = max(low, int(schema.get("maxLength", self.max_string)))
        first = _RAW_PROSE_START if prose else _RAW_CHAR
        if low == 0:
            return f"({first} {repeat(_RAW_CHAR, 0, high - 1)})?" if high > 0 else '""'
        return f"{first} {repeat(_RAW_CHAR, low - 1, high - 1)}"


class _ToolArguments:
    """One tool's argument rules, built on request (:class:`~callscope.engine.formats._kit.gbnf.ArgumentRules`)."""

    def __init__(self, rules: _Rules, index: int, tool: dict[str, Any]) -> None:
        self._rules = rules
        self._index = index
        self._tool = tool
        self._declared = _fn(tool).get("parameters") or {"type": "object", "properties": {}}
        self._schema: Any = None
        self._json: str | None = None
        self._python: str | None = None

    def json(self) -> str:
        if self._json is None:
            name = f"t{self._index}-args"
            with self._schema_errors():
                rule = self._rules.visit(self._prepared(), name)
            # no optional space after the arguments object: raw-body formats would keep it in the arguments
            body = self._rules.converter._rules.get(rule, "")
            if body.endswith(' "}" space'):
                self._rules.converter._rules[rule] = body[: -len(" space")]
            self._json = rule
        return self._json

    def parameters(self) -> list[ParameterRule]:
        with self._schema_errors():
            schema = self._rules.deref(self._prepared())
            schema = schema if isinstance(schema, dict) else {}
            props = schema.get("properties") or {}
            declared = self._declared.get("properties") if isinstance(self._declared, dict) else None
            declared = declared if isinstance(declared, dict) else {}
            required = [k for k in schema.get("required", []) if k in props]
            optional = [k for k in props if k not in required]
            return [
                ParameterRule(
                    key,
                    self._rules.raw_value(f"t{self._index}-{key}", props[key], declared.get(key)),
                    key in required,
                    declared_type(declared.get(key)),
                )
                for key in required + optional
            ]

    def python(self) -> str:
        if self._python is None:
            schema = self._rules.deref(self._prepared())
            schema = schema if isinstance(schema, dict) else {}
            props = schema.get("properties") or {}
            required = [k for k in schema.get("required", []) if k in props]
            optional = [k for k in props if k not in required]
            for key in props:
                if not str(key).isidentifier():
                    raise CannotForce(f"parameter {key!r} is not a Python name, so it cannot be a keyword argument")
            with self._schema_errors():
                kvs = {
                    key: f"{lit(key + '=')} {self._rules.python.visit(props[key], f't{self._index}-py-{key}')}"
                    for key in required + optional
                }
                sep = lit(", ")
                if required:
                    body = f" {sep} ".join(kvs[k] for k in required)
                    body += "".join(f" ({sep} {kvs[k]})?" for k in optional)
                elif optional:
                    firsts = [
                        kvs[k] + "".join(f" ({sep} {kvs[j]})?" for j in optional[i + 1 :])
                        for i, k in enumerate(optional)
                    ]
                    body = "(" + " | ".join(firsts) + ")?"
                else:
                    body = '""'
            name = f"t{self._index}-py-kwargs"
            self._rules.add(name, body)
            self._python = name
        return self._python

    def _prepared(self) -> Any:
        """The parameters schema tightened for the run, its ``$ref``s resolved (once)."""
        if self._schema is None:
            with self._schema_errors():
                schema = tighten(self._declared, self._rules.max_string)
                if isinstance(schema, dict):
                    schema = self._rules.converter.resolve_refs(schema, f"t{self._index}")
                self._schema = schema
        return self._schema

    @contextlib.contextmanager
    def _schema_errors(self) -> Iterator[None]:
        try:
            yield
        except _CONVERTER_ERRORS as exc:
            raise GrammarError(
                f"tool {_fn(self._tool).get('name')!r}: cannot turn its parameters into a grammar ({exc})"
            ) from None


#: Most members of an open-ended object or array (``additionalProperties``, free-form JSON): a forced run needs an end.
_OPEN_MEMBERS = 3


def _bounded_open_object(name: str, rule: str) -> str:
    """The converter's unbounded repetitions (``kv ( "," space kv )*``) for open-ended objects, bounded.

    The converter ignores ``maxProperties``; unbounded, a small model writes
    member after member until ``--max-tokens``. That is the ``additionalProperties``
    members and the free-form ``object``/``array`` primitives (a ``{}`` schema).
    """
    if name.endswith("additional-kvs") or name in ("object", "array", _PY + "object", _PY + "array"):
        return rule.replace(")*", f"){{0,{_OPEN_MEMBERS - 1}}}")
    return rule


# ---------------------------------------------------------------- schema shapes


def _literal_values(schema: Any) -> list[Any] | None:
    if not isinstance(schema, dict):
        return None
    if "enum" in schema and isinstance(schema["enum"], list):
        return schema["enum"]
    if "const" in schema:
        return [schema["const"]]
    return None


def _branches(schema: dict[str, Any]) -> list[Any]:
    """The alternatives of a union schema (``anyOf``/``oneOf``), else the schema itself."""
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return schema[key]
    return [schema]


def _is_string(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "string" and _literal_values(schema) is None


def _string_branch(rules: _Rules, schema: dict[str, Any]) -> dict[str, Any]:
    """The string alternative of a nullable string (``["string", "null"]`` becomes an ``anyOf``)."""
    for branch in _branches(schema):
        branch = rules.deref(branch)
        if _is_string(branch):
            return branch
    return schema


_STRUCTURE = ("type", "anyOf", "oneOf", "allOf", "$ref", "properties", "items", "prefixItems", "enum", "const")


def _free_form(schema: Any) -> bool:
    """A schema that says nothing about its value (``{}`` or just a description): any text will do."""
    return isinstance(schema, dict) and not any(k in schema for k in _STRUCTURE)


# ---------------------------------------------------------------- tightening

#: String formats as patterns every match of which is valid: the converter has no rule for some
#: (email, uri, hostname, ipv4) and its date rule allows February 31st. (``[.]``, not ``\.``: the
#: converter copies ``\.`` into the grammar, where it is no escape.)
_DATE = r"(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])"
_TIME = r"([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z"
_NAME = r"[a-z][a-z0-9]{0,9}"
_FORMAT_PATTERNS = {
    "date": f"^{_DATE}$",
    "time": f"^{_TIME}$",
    "date-time": f"^{_DATE}T{_TIME}$",
    "email": rf"^{_NAME}([.]{_NAME})?@{_NAME}[.](com|org|net|io)$",
    "hostname": rf"^{_NAME}[.](com|org|net|io)$",
    "uri": rf"^https://{_NAME}[.](com|org|net|io)(/{_NAME}){{0,2}}$",
    "url": rf"^https://{_NAME}[.](com|org|net|io)(/{_NAME}){{0,2}}$",
    "ipv4": r"^(1[0-9]{2}|[1-9]?[0-9])([.](1[0-9]{2}|[1-9]?[0-9])){3}$",
}
#: Most values of a bounded integer range written out as an enum (the converter ignores minimum/maximum).
_ENUM_RANGE = 100


def tighten(schema: Any, max_string: int) -> Any:
    """A copy of ``schema`` bounded for a forced run (strings, arrays, integers, free-form objects).

    Every bound keeps the schema's own: ``maxLength`` and ``maxItems`` never fall
    below ``minLength`` and ``minItems``, and a value the tightened schema allows
    is one the original allows.
    """
    return _tighten(copy.deepcopy(schema), max_string)


def _tighten(node: Any, max_string: int) -> Any:
    if not isinstance(node, dict):
        return node
    kind = node.get("type")
    if isinstance(kind, list) and len(kind) > 1 and "enum" not in node and "const" not in node:
        # the converter turns a type list into bare types, dropping every bound: one branch per type keeps them
        rest = {k: v for k, v in node.items() if k != "type"}
        return {"anyOf": [_tighten({**copy.deepcopy(rest), "type": t}, max_string) for t in kind]}
    for key in ("properties", "$defs", "definitions"):
        if isinstance(node.get(key), dict):
            node[key] = {k: _tighten(v, max_string) for k, v in node[key].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            node[key] = _tighten(node[key], max_string)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems", "items"):
        if isinstance(node.get(key), list):
            node[key] = [_tighten(v, max_string) for v in node[key]]
    if kind == "string":
        _tighten_string(node, max_string)
    elif kind == "array":
        low = node.get("minItems", 0) if isinstance(node.get("minItems"), int) else 0
        high = node.get("maxItems") if isinstance(node.get("maxItems"), int) else 3
        node["maxItems"] = max(low, min(high, 3))
    elif kind == "integer":
        _integer_range_as_enum(node)
    elif kind == "object" and "properties" not in node and "additionalProperties" not in node:
        node["properties"] = {}
        node["additionalProperties"] = False
    return node


def _tighten_string(node: dict[str, Any], max_string: int) -> None:
    if "enum" in node or "const" in node:
        return
    pattern = node.get("pattern")
    if isinstance(pattern, str):
        # JSON Schema patterns match anywhere; the converter wants them anchored (anchoring only narrows them)
        node["pattern"] = ("" if pattern.startswith("^") else "^") + pattern + ("" if pattern.endswith("$") else "$")
        return
    if node.get("format") in _FORMAT_PATTERNS:
        node["pattern"] = _FORMAT_PATTERNS[node["format"]]
        return
    if "format" in node:
        return  # uuid and the like: the converter's own rule is exact
    if "maxLength" not in node:
        node.setdefault("minLength", 1)
    low = node.get("minLength", 0) if isinstance(node.get("minLength"), int) else 0
    high = node.get("maxLength") if isinstance(node.get("maxLength"), int) else max_string
    node["maxLength"] = max(low, min(high, max_string))


def _integer_range_as_enum(node: dict[str, Any]) -> None:
    if "enum" in node or "const" in node:
        return
    low, high = _bound(node, "minimum", "exclusiveMinimum", 1), _bound(node, "maximum", "exclusiveMaximum", -1)
    if low is not None and high is not None and 0 <= high - low < _ENUM_RANGE:
        step = node.get("multipleOf")
        values = range(low, high + 1)
        node["enum"] = [v for v in values if not isinstance(step, int) or step <= 0 or v % step == 0]


def _bound(node: dict[str, Any], inclusive: str, exclusive: str, direction: int) -> int | None:
    """An integer bound of ``node`` (``direction`` 1 for a lower bound, -1 for an upper one), or None."""
    found: list[int] = []
    draft4_exclusive = node.get(exclusive) is True  # draft 4: ``"exclusiveMinimum": true`` beside ``minimum``
    for key in (inclusive, exclusive):
        value = node.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            rounded = math.ceil(value) if direction > 0 else math.floor(value)
            if (key == exclusive or draft4_exclusive) and rounded == value:
                rounded += direction
            found.append(int(rounded))
    if not found:
        return None
    return max(found) if direction > 0 else min(found)


def compile_grammar(gbnf: str, llama: Any) -> Any:
    """A ``LlamaGrammar`` after checking llama.cpp accepts the text (it would crash the sampler otherwise).

    llama.cpp says why it refuses a grammar on stderr only (then prints the whole
    grammar); that stream is captured while it parses, and its reason becomes the
    error's one line.
    """
    import llama_cpp
    from llama_cpp import LlamaGrammar

    with _captured_stderr() as said:
        sampler = llama_cpp.llama_sampler_init_grammar(llama._model.vocab, gbnf.encode("utf-8"), b"root")
    if not sampler:
        raise GrammarError(f"llama.cpp rejected the forced-call grammar: {_parse_reason(said.text)}")
    llama_cpp.llama_sampler_free(sampler)
    return LlamaGrammar.from_string(gbnf, verbose=False)


class _Said:
    """What a native library wrote to stderr inside :func:`_captured_stderr` (set when the block ends)."""

    text = ""


@contextlib.contextmanager
def _captured_stderr() -> Iterator[_Said]:
    """Capture what native code writes to file descriptor 2 (C's ``stderr``) during the block.

    Python's ``sys.stderr`` is left alone; the descriptor is pointed at a temporary
    file and restored afterwards, even on error.
    """
    import os
    import sys
    import tempfile

    said = _Said()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield said
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            said.text = sink.read(64 * 1024).decode("utf-8", "replace")


def _parse_reason(stderr: str) -> str:
    """llama.cpp's reason for refusing a grammar, from what it printed ("parse: error parsing grammar: ...")."""
    for line in stderr.splitlines():
        if "error parsing grammar" in line:
            return line.split("error parsing grammar:", 1)[1].strip() or line.strip()
    for line in stderr.splitlines():
        if line.strip():
            return line.strip()
    return "llama.cpp gave no reason"
