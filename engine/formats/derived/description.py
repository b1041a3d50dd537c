"""What a chat template teaches a model to write: the plain-data description a derived parser runs on.

:mod:`callscope.engine.templates` learns it by rendering a template with variants and
diffing the renders; the derived parsers (:mod:`callscope.engine.formats.derived`) read
generations with it, the writer writes them, the grammar forces them. It is
plain data (strings and flags), JSON-serialisable both ways, so it can be shown,
stored and tested on its own.

A generation in a derived format is::

    [reasoning_start reasoning reasoning_end]  content
    section_start  call (call_separator call)*  section_end   content ...

where every marker may be empty, and one call is, by family:

* ``json``: ``call_start {"name": NAME, "arguments": {...}} call_end``: the
  whole call is one JSON object (``name_key``/``arguments_key`` name its
  members; ``name_key == ""``: the name is the object's only key,
  ``{"NAME": {...}}``); with ``array`` the calls are the elements of one JSON
  array between the section markers;
* ``tag_json``: ``call_start NAME name_suffix {...} call_end``: the name in
  markup, the arguments one JSON object;
* ``tag_tagged``: ``call_start NAME name_suffix (key_prefix KEY key_suffix
  VALUE value_end argument_separator)* call_end``: every argument in markup, a
  value written as raw text (a string as is, anything else as JSON), typed
  from the tool schema the way Qwen3-Coder's values are. ``value_end`` may
  hold ``{key}``, the argument's own key, where the key is the tag
  (``<KEY>VALUE</KEY>``, as MiniMax-M3 writes arguments).

Markers are stored exactly as the template writes them (whitespace included),
so the writer and the grammar reproduce the template byte for byte; when
parsing, whitespace inside a marker matches any whitespace and whitespace
around markers is layout. ``name_suffix`` may hold the placeholders ``{index}``
(the call's index, written as digits: Kimi's ``functions.NAME:0``) and ``{id}``
(the call id, Mistral's ``[CALL_ID]``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

#: The whole call is one JSON object: ``{"name": ..., "arguments": {...}}``.
JSON = "json"
#: The name in markup, the arguments a JSON object: ``<function=NAME>{...}</function>``.
TAG_JSON = "tag_json"
#: The name and every argument in markup: ``<function=NAME><parameter=KEY>VALUE</parameter>``.
TAG_TAGGED = "tag_tagged"
FAMILIES = (JSON, TAG_JSON, TAG_TAGGED)
FAMILY_TITLES = {
    JSON: "JSON-native (the whole call is a JSON object)",
    TAG_JSON: "tag + JSON arguments",
    TAG_TAGGED: "tag + tagged arguments",
}

#: Placeholders a pattern may hold.
INDEX = "{index}"
ID = "{id}"
SKIP = "{skip}"
#: In ``value_end`` only: the argument's own key (MiniMax-M3's ``<city>Paris</city>``: the closer is ``</{key}>``).
KEY = "{key}"


@dataclass(frozen=True, slots=True)
class FormatDescription:
    """The wire syntax of one chat template's tool calls (see the module docstring)."""

    #: :data:`JSON`, :data:`TAG_JSON` or :data:`TAG_TAGGED`.
    family: str
    #: Where it was learnt (the template's name), shown with the derived format.
    source: str = ""

    # ---------------------------------------------------------------- framing
    #: Markers around reasoning ("<think>", "</think>"); empty when the template has none.
    reasoning_start: str = ""
    reasoning_end: str = ""
    #: The generation prompt leaves the model inside reasoning (it ends with ``reasoning_start``).
    opens_reasoning: bool = False
    #: What ends the assistant's turn ("<|im_end|>"): a stop token, never part of a generation.
    end_of_turn: str = ""
    #: The end of the generation prompt that a model may write again at its start (Command R+'s
    #: ``<|CHATBOT_TOKEN|>``): dropped there, never content.
    prompt_holds: str = ""

    # ---------------------------------------------------------------- calls
    section_start: str = ""
    section_end: str = ""
    call_start: str = ""
    call_end: str = ""
    call_separator: str = ""
    #: The template renders several calls in one turn.
    parallel: bool = True

    # ---------------------------------------------------------------- json family
    array: bool = False
    #: The member holding the name; "" when the name is the object's key (``{"NAME": {...}}``).
    name_key: str = "name"
    arguments_key: str = "arguments"
    #: The member holding the call id when the template writes one ("" if not).
    id_key: str = ""
    #: The member the call object sits in, when calls are written the OpenAI way:
    #: ``{"type": "function", "function": {"name": ..., "arguments": ...}}`` ("" : not wrapped).
    wrapper_key: str = ""

    # ---------------------------------------------------------------- tag families
    #: Between the name and the arguments (a pattern: ``{index}``, ``{id}``).
    name_suffix: str = ""
    #: Before each argument's key.
    key_prefix: str = ""
    #: Between a key and its value, as written for a string value / for any other value ("" : the same).
    #: Where the two differ (DeepSeek V3.2's ``string="true"``) the parser skips the part that varies.
    key_suffix: str = ""
    key_suffix_json: str = ""
    #: After each value ("</parameter>"); whitespace at its start is layout, not value.
    value_end: str = ""
    #: Between one argument and the next, besides whitespace.
    argument_separator: str = ""
    #: Whitespace the template writes right after ``key_suffix`` / right before ``value_end``.
    value_lead: str = ""
    value_trail: str = ""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown family {self.family!r}; known: {', '.join(FAMILIES)}")

    @property
    def title(self) -> str:
        return FAMILY_TITLES[self.family]

    def opener(self) -> str:
        """The marker that starts the tool calls in content ("" for a bare JSON call at the start)."""
        for marker in (self.section_start, self.call_start):
            if marker.strip():
                return marker.strip()
        return ""

    def markers(self) -> tuple[str, ...]:
        """Every non-empty marker, stripped, each once (placeholders cut out)."""
        found: list[str] = []
        for value in (
            self.reasoning_start,
            self.reasoning_end,
            self.section_start,
            self.section_end,
            self.call_start,
            self.call_end,
            self.name_suffix,
            self.key_prefix,
            self.key_suffix,
            self.key_suffix_json,
            self.value_end,
        ):
            for piece in _literal_pieces(value):
                if piece not in found:
                    found.append(piece)
        return tuple(found)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> FormatDescription:
        """The inverse of :meth:`to_json`; unknown members are refused (a typo would silently change nothing)."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(doc) - known)
        if unknown:
            raise ValueError(f"unknown format description fields: {', '.join(unknown)}")
        return cls(**doc)


def _literal_pieces(pattern: str) -> list[str]:
    text = pattern
    for placeholder in (INDEX, ID, SKIP, KEY):
        text = text.replace(placeholder, "\0")
    return [piece.strip() for piece in text.split("\0") if piece.strip()]


__all__ = ["FAMILIES", "ID", "INDEX", "JSON", "KEY", "SKIP", "TAG_JSON", "TAG_TAGGED", "FormatDescription"]
