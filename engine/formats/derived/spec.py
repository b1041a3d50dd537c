"""A :class:`~callscope.engine.formats._kit.spec.FormatSpec` made from a description: parser, markers, writer, grammar.

A derived format works everywhere a format id works once registered
(:func:`register_derived`): ``replay-text``, ``run``'s forced calls (its
envelope spells the template's own syntax, byte for byte), the capture
checker's markers, the text pane's markup. It declares no template signs, so
it never takes over the detection of other templates.
"""

from __future__ import annotations

import json
import re
from typing import Any

from callscope.engine.formats._kit.gbnf import (
    ArgumentRules,
    CallsLayout,
    Envelope,
    ParameterRule,
    lit,
    parameter_blocks,
)
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers
from callscope.engine.formats._kit.writing import dumps
from callscope.engine.formats.derived import json_family, tag_json, tag_tagged
from callscope.engine.formats.derived.description import ID, INDEX, JSON, KEY, TAG_JSON, TAG_TAGGED, FormatDescription
from callscope.engine.formats.derived.machine import DerivedParser, parser_class

#: Family -> its parser base class.
FAMILY_PARSERS: dict[str, type[DerivedParser]] = {
    JSON: json_family.Parser,
    TAG_JSON: tag_json.Parser,
    TAG_TAGGED: tag_tagged.Parser,
}
#: The id every derived format's id starts with.
PREFIX = "derived_"
#: An id made for the writer and the grammar where a template writes one ({id}: 9 letters and digits, as Mistral checks).
WRITTEN_ID = "call{:05d}"

_SLUG = re.compile(r"[^a-z0-9]+")


def derived_id(name: str) -> str:
    """The format id of the description learnt from template ``name`` (a path or any label)."""
    stem = name.replace("\\", "/").rsplit("/", 1)[-1]
    for suffix in (".jinja", ".j2", ".json", ".gguf", ".txt"):
        stem = stem.removesuffix(suffix)
    slug = _SLUG.sub("_", stem.lower()).strip("_")[:40].strip("_")
    return PREFIX + (slug or "template")


def derived_spec(description: FormatDescription, format_id: str | None = None) -> FormatSpec:
    """The spec of a derived format (``format_id``: default :func:`derived_id` of the description's source)."""
    format_id = format_id or derived_id(description.source)
    base = FAMILY_PARSERS[description.family]
    parser = parser_class(base, description, "Derived" + "".join(p.title() for p in format_id.split("_")))
    leak = tuple(m for m in description.markers() if _special(m) and m not in _reasoning(description))
    markup = tuple(re.escape(m) for m in (*leak, *_reasoning(description)))
    bare = not description.opener()
    return FormatSpec(
        id=format_id,
        description=f"derived from {description.source or 'a chat template'}: {description.title}",
        parser=parser,
        markers=Markers(leak=leak, markup=markup),
        write=lambda calls, content, reasoning: write(description, calls, content, reasoning),
        thinking=True,
        envelopes=(
            Envelope(
                lambda name, args: call_grammar(description, name, args),
                layout=_layout(description),
                content=not bare,
                single_call=not description.parallel,
            ),
        ),
    )


def register_derived(description: FormatDescription, format_id: str | None = None) -> FormatSpec:
    """Make the derived format known everywhere (replacing an earlier one of the same id); returns its spec."""
    from callscope.engine.formats import register_format

    return register_format(derived_spec(description, format_id), replace=True)


def _reasoning(d: FormatDescription) -> tuple[str, ...]:
    return tuple(m.strip() for m in (d.reasoning_start, d.reasoning_end) if m.strip())


def _special(marker: str) -> bool:
    """A marker no prose would contain: markup characters or special-token glyphs, at least 3 characters."""
    return len(marker) >= 3 and (any(c in marker for c in "<>[]|") or any(ord(c) > 0x2000 for c in marker))


# ------------------------------------------------------------------ writing


def _filled(pattern: str, index: int) -> str:
    """A pattern as written for call ``index``: its index, and an id where it holds one."""
    return pattern.replace(INDEX, str(index)).replace(ID, WRITTEN_ID.format(index + 1))


def write_call(d: FormatDescription, index: int, name: str, args: dict[str, Any]) -> str:
    """One call as the template writes it, markers included (``call_start`` ... ``call_end``)."""
    if d.family == JSON:
        call = {name: args} if not d.name_key else {d.name_key: name, d.arguments_key: args}
        body = dumps({d.wrapper_key: call} if d.wrapper_key else call)
    elif d.family == TAG_JSON:
        body = name + _filled(d.name_suffix, index) + dumps(args)
    else:
        params = []
        for key, value in args.items():
            text = value if isinstance(value, str) else dumps(value)
            suffix = d.key_suffix if isinstance(value, str) or not d.key_suffix_json else d.key_suffix_json
            params.append(d.key_prefix + key + suffix + d.value_lead + text + d.value_trail + d.value_end.replace(KEY, key))
        body = name + _filled(d.name_suffix, index) + d.argument_separator.join(params)
    return _filled(d.call_start, index) + body + d.call_end


def write(d: FormatDescription, calls: list[Call], content: str, reasoning: str) -> str:
    """The generation of a model that writes ``calls`` the template's way (reasoning and content first)."""
    text = ""
    if calls and not d.opener():
        content = ""  # a bare JSON call is the whole generation: calls or content, not both
    if reasoning:
        text += (d.reasoning_start or "<think>") + reasoning + (d.reasoning_end or "</think>")
    text += content
    if calls:
        separator = d.call_separator or ("," if d.array else "")
        body = separator.join(write_call(d, i, name, args) for i, (name, args) in enumerate(calls))
        if d.array:
            body = "[" + body + "]"
        text += ("\n" if content and d.opener() else "") + d.section_start + body + d.section_end
    return text


# ------------------------------------------------------------------ grammar


def _pattern_gbnf(text: str) -> str:
    """A written pattern as GBNF: literals, ``{index}`` a digit, ``{id}`` nine letters or digits."""
    parts = []
    for piece in re.split(r"(\{index\}|\{id\})", text):
        if piece == INDEX:
            parts.append("[0-9]")
        elif piece == ID:
            parts.append("[a-zA-Z0-9]{9}")
        elif piece:
            parts.append(lit(piece))
    return " ".join(parts) if parts else '""'


def call_grammar(d: FormatDescription, name: str, args: ArgumentRules) -> str:
    """The GBNF of one call to ``name`` in the template's syntax (markers byte for byte)."""
    if d.family == JSON:
        head = f"{{{json.dumps(name)}: " if not d.name_key else f"{{{json.dumps(d.name_key)}: {json.dumps(name)}, {json.dumps(d.arguments_key)}: "
        if d.wrapper_key:
            head, tail = f"{{{json.dumps(d.wrapper_key)}: " + head, "}}"
        else:
            tail = "}"
        return f"{_pattern_gbnf(d.call_start)} {lit(head)} {args.json()} {lit(tail + d.call_end)}"
    head = f"{_pattern_gbnf(d.call_start)} {lit(name)} {_pattern_gbnf(d.name_suffix)}"
    if d.family == TAG_JSON:
        return f"{head} {args.json()} {lit(d.call_end)}"

    def block(param: ParameterRule) -> str:
        suffix = d.key_suffix if param.kind == "string" or not d.key_suffix_json else d.key_suffix_json
        opening = lit(d.key_prefix + param.key + suffix + d.value_lead)
        return f"{opening} {param.value} {lit(d.value_trail + d.value_end.replace(KEY, param.key) + d.argument_separator)}"

    return f"{head} {parameter_blocks(args, block)} {lit(d.call_end)}"


def _layout(d: FormatDescription) -> CallsLayout:
    """How the calls of a turn sit together; a prompt that opens reasoning has it closed before them."""
    separator = d.call_separator or ("," if d.array else "")
    close_reasoning = d.reasoning_end.strip() + "\n\n" if d.opens_reasoning and d.reasoning_end.strip() else ""
    opening = close_reasoning + d.section_start + ("[" if d.array else "")
    return CallsLayout(
        open=lit(opening) if opening else "",
        sep=lit(separator) if separator else "",
        close=lit(("]" if d.array else "") + d.section_end) if d.section_end or d.array else "",
    )


__all__ = ["FAMILY_PARSERS", "PREFIX", "call_grammar", "derived_id", "derived_spec", "register_derived", "write", "write_call"]
