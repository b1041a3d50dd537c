"""How a template writes tool calls, learnt from its renders: the call part of a format description.

The generation of one call (:data:`~renders.FIRST` with two string arguments)
and of two calls are taken apart around the needles:

1. The family. The call is JSON-native when a JSON object around the name
   holds both the name (as a member value, or as its only key) and the
   arguments; else tag + JSON arguments when a JSON object after the name is
   the arguments; else tag + tagged arguments when the keys and values appear
   after the name, each framed the same way.
2. The call's *core* (the object; or the name through the arguments) in both
   renders; then ``call_start`` is what the text before the first core and the
   text between the two cores end with, ``call_end`` what the text between them
   and the text after the last core start with (cut at marker boundaries), the
   separator is what is left between them, and the section markers are what is
   left before the first and after the last call. A template that renders one
   call only has no section: everything around its call frames the call.
3. Family details: the JSON member names; the text between the name and the
   arguments (``{index}`` where the two calls differ by their index, ``{id}``
   where the id is written); for tagged arguments the key and value framing,
   from the two string arguments, and how a non-string value is framed, from a
   call with an integer.

Everything is a diff of renders; nothing here knows a model family. What cannot
be described is said in ``notes`` and gives no description.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from callscope.engine.formats.derived.description import ID, INDEX, JSON, KEY, TAG_JSON, TAG_TAGGED, FormatDescription
from callscope.engine.templates.affixes import common_prefix, marker_prefix, marker_suffix
from callscope.engine.templates.framing import Framing
from callscope.engine.templates.renders import (
    ARGS_AB,
    FIRST,
    KEY_A,
    KEY_N,
    NUMBER,
    SECOND,
    VALUE_A,
    Renders,
)

_DECODER = json.JSONDecoder()
_ARGS_SECOND = {KEY_A: VALUE_A}


@dataclass(slots=True)
class Generations:
    """The analysed renders cut down to what the model generates (the reasoning block before calls removed)."""

    one: str
    two: str | None
    typed: str | None
    empty: str | None
    #: What came before the calls in ``one`` (an empty reasoning block the template writes), if anything.
    lead: str = ""
    thinking: bool = False


@dataclass(slots=True)
class Tagged:
    """How tagged arguments are framed (see :class:`FormatDescription`'s fields of the same names)."""

    key_prefix: str
    key_suffix: str
    value_lead: str
    value_trail: str
    value_end: str
    separator: str


@dataclass(slots=True)
class Core:
    """Where one call's core is in a generation, and its family's facts."""

    start: int
    end: int
    name_key: str = "name"
    arguments_key: str = "arguments"
    id_key: str = ""
    #: JSON: the member of an outer object the call sits in (the OpenAI shape).
    wrapper_key: str = ""
    #: Tag families: the text between the name and the arguments.
    name_suffix: str = ""
    tagged: Tagged | None = None


@dataclass(slots=True)
class Learnt:
    """The call part of a description, or why there is none."""

    description: FormatDescription | None
    notes: list[str] = field(default_factory=list)
    generations: Generations | None = None


def generations(renders: Renders, framing: Framing) -> Generations | None:
    """The call renders as generations (None when the one-call render is missing or not framed)."""

    def cut(text: str | None) -> tuple[str, bool] | None:
        return framing.cut(text) if text is not None else None

    one = cut(renders.one_call)
    if one is None:
        return None
    lead, body = _split_reasoning(one[0], framing)
    rest = [cut(t) for t in (renders.two_calls, renders.typed_call, renders.empty_call)]
    two, typed, empty = (_split_reasoning(r[0], framing)[1] if r is not None else None for r in rest)
    return Generations(body, two, typed, empty, lead, one[1])


def _split_reasoning(text: str, framing: Framing) -> tuple[str, str]:
    """``(the reasoning block a render writes before its calls, the rest)``."""
    end = framing.reasoning_end.strip()
    if not end:
        return "", text
    at = text.find(end)
    first = text.find(FIRST)
    if at < 0 or (first >= 0 and at > first):
        return "", text
    cut = at + len(end)
    return text[:cut], text[cut:]


def learn(renders: Renders, framing: Framing, ids: tuple[str, ...], end_of_turn: str = "") -> Learnt:
    """The call syntax (see the module docstring); ``end_of_turn`` cuts what trails the calls."""
    gens = generations(renders, framing)
    if gens is None:
        return Learnt(None, ["the template renders no assistant tool call"])
    one = gens.one
    if FIRST not in one:
        return Learnt(None, ["the rendered tool call does not contain the function's name"], gens)
    for family, find in _FINDERS.items():
        core = find(one, FIRST, ARGS_AB, ids[0], None)
        if core is None:
            continue
        second = _second_core(family, gens.two, ids)
        learnt = _frame(family, gens, core, second, ids, end_of_turn)
        learnt.generations = gens
        return learnt
    return Learnt(None, ["no JSON object, JSON arguments or tagged arguments found around the function's name"], gens)


def _second_core(family: str, two: str | None, ids: tuple[str, ...]) -> tuple[Core, Core] | None:
    if two is None or SECOND not in two:
        return None
    find = _FINDERS[family]
    first = find(two, FIRST, ARGS_AB, ids[0], None)
    if first is None:
        return None
    second = find(two[first.end :], SECOND, _ARGS_SECOND, ids[1], first.tagged)
    if second is None:
        return None
    second.start += first.end
    second.end += first.end
    return first, second


# ------------------------------------------------------------------ cores


def _json_core(text: str, name: str, args: dict[str, Any], call_id: str, known: Tagged | None = None) -> Core | None:
    """The innermost JSON object around ``name`` that holds the name and the arguments."""
    at = text.find(json.dumps(name))
    if at < 0:
        return None
    starts = [i for i in range(at, -1, -1) if text[i] == "{"][:32]
    for start in starts:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            continue
        if end <= at or not isinstance(value, dict):
            continue
        if list(value) == [name] and _same_arguments(value[name], args):
            return Core(start, end, name_key="", arguments_key="")
        name_key = next((k for k, v in value.items() if v == name), None)
        args_key = next((k for k, v in value.items() if _same_arguments(v, args)), None)
        if name_key and args_key:
            id_key = next((k for k, v in value.items() if v == call_id), "")
            return _wrapped(text, starts, start, value) or Core(start, end, name_key, args_key, id_key)
    return None


def _wrapped(text: str, starts: list[int], inner: int, call: dict[str, Any]) -> Core | None:
    """The call object as one member of an outer object (``{"type": "function", "function": {...}}``), if it is."""
    for start in starts:
        if start >= inner:
            continue
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            key = next((k for k, v in value.items() if v == call), None)
            if key is not None:
                name_key = next(k for k, v in call.items() if v == FIRST or v == SECOND)
                args_key = next(k for k, v in call.items() if isinstance(v, (dict, str)) and k != name_key)
                core = Core(start, end, name_key, args_key)
                core.wrapper_key = key
                return core
    return None


def _same_arguments(value: Any, args: dict[str, Any]) -> bool:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return False
    return value == args


def _name_at(text: str, name: str) -> int:
    """Where ``name`` is written as a name (not inside a longer word)."""
    at = text.find(name)
    while at >= 0:
        after = text[at + len(name) : at + len(name) + 1]
        if not (after.isalnum() or after == "_"):
            return at
        at = text.find(name, at + 1)
    return -1


def _tag_json_core(
    text: str, name: str, args: dict[str, Any], call_id: str, known: Tagged | None = None
) -> Core | None:
    """The name in markup, then a JSON object that is the arguments."""
    at = _name_at(text, name)
    if at < 0:
        return None
    name_end = at + len(name)
    for start in [i for i, c in enumerate(text) if c == "{" and i >= name_end][:8]:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            continue
        if _same_arguments(value, args):
            return Core(at, end, name_suffix=text[name_end:start])
    return None


def _tagged_core(text: str, name: str, args: dict[str, Any], call_id: str, known: Tagged | None = None) -> Core | None:
    """The name in markup, then every key and value framed the same way (the last value's end included).

    The framing is learnt from two arguments; ``known`` is that framing when
    locating a later call (whose single argument cannot teach it).
    """
    at = _name_at(text, name)
    if at < 0:
        return None
    name_end = at + len(name)
    spots: list[tuple[int, int, int]] = []  # (key start, key end, value start) per argument
    pos = name_end
    for key, value in args.items():
        k = text.find(key, pos)
        v = text.find(str(value), k + len(key)) if k >= 0 else -1
        if v < 0:
            return None
        spots.append((k, k + len(key), v))
        pos = v + len(str(value))
    values = [str(v) for v in args.values()]
    keys = list(args)
    if known is None:
        if len(spots) < 2:
            return None
        (k1, k1_end, v1), (k2, k2_end, v2) = spots[0], spots[1]
        between = text[v1 + len(values[0]) : k2]  # value end + separator + key prefix
        after = text[v2 + len(values[1]) :]
        closing = marker_prefix(between, after)
        if not closing.strip():  # the value's closer names its key (<city>Paris</city>): the key is a placeholder
            closing = marker_prefix(between.replace(keys[0], KEY), after.replace(keys[1], KEY, 1))
            if KEY not in closing:
                closing = ""
            between = between.replace(keys[0], KEY, 1)
        # the key's opener is what follows the value's closer (a closer and an opener may share a token)
        key_prefix = marker_suffix(text[name_end:k1], between[len(closing) :])
        key_suffix = text[k1_end:v1]
        if key_suffix != text[k2_end:v2] or not closing.strip():
            return None
        lead = key_suffix[len(key_suffix.rstrip()) :]
        trail = closing[: len(closing) - len(closing.lstrip())]
        known = Tagged(
            key_prefix=key_prefix,
            key_suffix=key_suffix[: len(key_suffix) - len(lead)],
            value_lead=lead,
            value_trail=trail,
            value_end=closing.lstrip(),
            separator=between[len(closing) : len(between) - len(key_prefix)],
        )
    last_value_end = spots[-1][2] + len(values[-1])
    closing = (known.value_trail + known.value_end).replace(KEY, keys[-1])
    if not text.startswith(closing, last_value_end):
        return None
    suffix_end = spots[0][0] - len(known.key_prefix)
    if suffix_end < name_end:
        return None
    return Core(at, last_value_end + len(closing), name_suffix=text[name_end:suffix_end], tagged=known)


_FINDERS = {JSON: _json_core, TAG_JSON: _tag_json_core, TAG_TAGGED: _tagged_core}


# ------------------------------------------------------------------ framing the calls


def _frame(
    family: str, gens: Generations, core: Core, second: tuple[Core, Core] | None, ids: tuple[str, ...], end_of_turn: str
) -> Learnt:
    one = gens.one
    notes: list[str] = []
    # an id written outside the call's core (before the name) becomes the {id} placeholder of the markers
    before, after = one[: core.start].replace(ids[0], ID), _before(one[core.end :], end_of_turn).replace(ids[0], ID)
    fields: dict[str, Any] = {"family": family}
    if second is not None:
        two = gens.two or ""
        first, other = second
        mid = two[first.end : other.start].replace(ids[0], ID).replace(ids[1], ID)
        call_start = marker_suffix(before, mid)
        call_end = marker_prefix(mid, after) if after.strip() else ""
        if len(call_start) + len(call_end) > len(mid):
            call_end = ""
        fields["call_separator"] = mid[len(call_end) : len(mid) - len(call_start)]
        section_start, section_end = before[: len(before) - len(call_start)], after[len(call_end) :]
        fields["parallel"] = True
    else:
        notes.append("the template renders one call per turn (two calls did not render)")
        call_start, call_end, section_start, section_end = before, after, "", ""
        fields["parallel"] = False
    if family == JSON:
        array = _array_wrapped(section_start, section_end, fields.get("call_separator", ""), gens.two, second)
        if array:
            section_start = section_start.rstrip()[:-1]
            section_end = section_end.lstrip()[1:]
        fields.update(array=array, name_key=core.name_key, arguments_key=core.arguments_key or "arguments")
        fields["id_key"] = core.id_key
        fields["wrapper_key"] = core.wrapper_key
    else:
        suffix = core.name_suffix.replace(ids[0], ID)
        if second is not None:
            suffix = _general_suffix(suffix, second[1].name_suffix.replace(ids[1], ID))
        fields["name_suffix"] = suffix
        tagged = core.tagged
        if tagged is not None:
            fields.update(
                key_prefix=tagged.key_prefix,
                key_suffix=tagged.key_suffix,
                value_lead=tagged.value_lead,
                value_trail=tagged.value_trail,
                value_end=tagged.value_end,
                argument_separator=tagged.separator,
            )
            typed = _typed_key_suffix(gens.typed, tagged)
            if typed is None:
                notes.append("a non-string value is framed differently from a string (the tagged family cannot read it)")
                return Learnt(None, notes)
            fields["key_suffix_json"] = typed
    fields.update(section_start=section_start, section_end=section_end, call_start=call_start, call_end=call_end)
    if family != JSON and not (call_start.strip() or section_start.strip()):
        notes.append("nothing marks where a call starts: the name is not in markup")
        return Learnt(None, notes)
    return Learnt(FormatDescription(**fields), notes)


def _before(text: str, marker: str) -> str:
    """``text`` up to ``marker`` (a stop token after the calls is not part of the section)."""
    at = text.find(marker) if marker else -1
    return text if at < 0 else text[:at]


def _array_wrapped(start: str, end: str, separator: str, two: str | None, second: tuple[Core, Core] | None) -> bool:
    """The calls are elements of one JSON array (``[`` ends the section start, ``]`` starts its end)."""
    if not (start.rstrip().endswith("[") and end.lstrip().startswith("]")):
        return False
    if second is None or two is None:
        return True
    opener = two.rfind("[", 0, second[0].start)
    try:
        value, _ = _DECODER.raw_decode(two, opener)
    except ValueError:
        return False
    return isinstance(value, list) and len(value) == 2 and separator.strip() == ","


def _general_suffix(first: str, second: str) -> str:
    """The name suffix with ``{index}`` where the two calls' suffixes differ by their index (``:0`` / ``:1``)."""
    if second == first:
        return first
    shared = len(common_prefix(first, second))
    if first[shared : shared + 1] == "0" and second[shared : shared + 1] == "1" and first[shared + 1 :] == second[shared + 1 :]:
        return first[:shared] + INDEX + first[shared + 1 :]
    return first


def _typed_key_suffix(typed: str | None, tagged: Tagged) -> str | None:
    """How the key of a non-string value is framed ("" : as a string's); None when the value ends differently."""
    if typed is None:
        return ""
    k = typed.find(KEY_N)
    v = typed.find(str(NUMBER), k) if k >= 0 else -1
    if v < 0:
        return ""
    suffix = typed[k + len(KEY_N) : v]
    after = typed[v + len(str(NUMBER)) :]
    if not after.startswith((tagged.value_trail + tagged.value_end).replace(KEY, KEY_N)):
        return None
    if not suffix.endswith(tagged.value_lead):
        return None
    suffix = suffix[: len(suffix) - len(tagged.value_lead)]
    return "" if suffix == tagged.key_suffix else suffix


__all__ = ["Generations", "Learnt", "generations", "learn"]
