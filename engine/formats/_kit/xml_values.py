"""Parameters written one by one as raw text, streamed as JSON arguments built append-only.

Several formats do not write JSON arguments: they write each parameter in its
own tags, the value as raw text (Qwen3-Coder's ``<parameter=KEY>VALUE</parameter>``,
GLM's ``<arg_key>`` / ``<arg_value>``, MiniMax's ``<parameter name="KEY">``,
DeepSeek V3.2's DSML). This module holds what they share:

* :class:`TypedArguments` builds one call's JSON arguments the way llama.cpp's
  PEG mapper builds them, but strictly append-only: ``{`` when the call opens,
  ``"KEY":`` (``,"KEY":`` from the second parameter on) once the key is
  complete, the value as it arrives, ``}`` when the call closes. How a value is
  written depends on its type (:func:`value_mode`): a ``string`` is ``"`` then
  the text JSON-escaped as it arrives and the closing ``"`` once the value
  closed; any other declared type is its raw text, unquoted, as it arrives
  (``{"n":1`` then ``{"n":12``), except that a Python literal (``True``,
  ``False``, ``None``, which models write for booleans and null) is held while it
  could still be one and written as ``true``/``false``/``null``. A declared
  ``object`` or ``array`` is read as a Python literal, of which JSON is all but a
  subset (:class:`LiteralValue`): ``{'a': None, 'b': (1, True)}`` streams as
  ``{"a": null, "b": [1, true]}``, a JSON value as itself in ``json.dumps``'s
  spelling (vLLM falls back to ``ast.literal_eval`` for such values). A value
  whose type is unknown is held until complete, then written once: a Python
  literal as JSON, raw if it is a JSON number/true/false/null/object/array, a
  Python container literal as its JSON, else as a JSON string. Never guessed and
  revised.
* :class:`ValueEnd` decides whether a value's closing tag really closes it: the
  closer counts only when what follows it (after whitespace) continues the call
  (the next parameter's opening tag or the call's closer). The schema helps tell
  the next parameter from value text that quotes one (:meth:`TypedArguments.accepts`):
  a parameter already written in this call is never the next one (a JSON object
  has no repeated keys), and when the schema closes the parameter set
  (``additionalProperties: false``) only one of its parameters is. So a value may
  quote the closer (code that writes XML, a file holding a tool call) and still
  stream correctly, while a model that adds a parameter the schema does not
  declare is still read.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any

from callscope.engine.core.json_text import is_json
from callscope.engine.formats._kit.marker_search import held_back_from
from callscope.engine.formats._kit.parser import declared_type
from callscope.engine.formats._kit.python_args import PythonArgsScan

if TYPE_CHECKING:
    from callscope.engine.formats._kit.parser import FormatParser

#: How a value is written (see the module docstring).
STRING = "string"
RAW = "raw"
HELD = "held"
LITERAL = "literal"
#: Longest held value read as a Python container literal (bounds ``ast.literal_eval``).
LITERAL_LIMIT = 64 * 1024

#: Longest parameter name accepted after a closer (bounds the hold-back).
NAME_LIMIT = 256
#: Most whitespace between a closer and what follows it that still lets the closer count.
LAYOUT_LIMIT = 256

_PYTHON_LITERALS = {"True": "true", "False": "false", "None": "null"}


def escape(text: str) -> str:
    """JSON string escaping of ``text`` without the quotes; escaping is per character, so pieces concatenate.

    ``encode_basestring`` is what ``json.dumps(..., ensure_ascii=False)`` calls, without its
    encoder set-up (a tenth of the cost, paid on every piece of a long string value).
    """
    return encode_basestring(text)[1:-1]


def json_literal(text: str) -> str | None:
    """``text`` stripped if it is a JSON number/true/false/null/object/array, else None.

    Checked with the grammar, not by building the value, so a deeply nested
    array stays an array (``json.loads`` would give up and make it a string).
    """
    stripped = text.strip()
    if not stripped or stripped[0] == '"' or not is_json(stripped, constants=False):
        return None
    return stripped


def python_literal(text: str) -> str | None:
    """The JSON of ``True``/``False``/``None`` (surrounding whitespace allowed), else None."""
    return _PYTHON_LITERALS.get(text.strip())


def _may_become_python_literal(text: str) -> bool:
    head = text.lstrip()
    return any(literal.startswith(head) for literal in _PYTHON_LITERALS)


def value_mode(kind: str | None) -> str:
    """How a value of declared JSON type ``kind`` (None: unknown) is written."""
    if kind is None:
        return HELD
    if kind in ("object", "array"):
        return LITERAL
    return STRING if kind == "string" else RAW


def python_container(text: str) -> str | None:
    """The JSON of ``text`` when it is a Python dict/list/tuple literal (``{'a': None}``), else None."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[(" or len(stripped) > LITERAL_LIMIT:
        return None
    try:
        value = ast.literal_eval(stripped)
        return json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list, tuple)) else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


class LiteralValue:
    """One object/array value written as JSON or as a Python literal, streamed as JSON, append-only.

    The value is scanned as the only keyword argument of a Python call (``v=VALUE)``), with
    the scan's own ``{"v": `` and final ``}`` cut off: every piece the scan emits is final.
    Quotes are strict (a quote of the string's kind closes it), as in JSON. A value that is
    no literal falls back: before any of it went out, it becomes a JSON string of its text;
    after, the rest goes out raw, as it was written.
    """

    __slots__ = ("_closing", "_fallback", "_said", "_say", "_scan", "_seen", "_skip")

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self._closing: list[str] | None = None
        self._skip: str | None = ""  # the scan's own head, until it is complete
        self._said = False  # some of the value went out
        self._seen: list[str] = []  # the value's text, until some of it went out
        self._fallback: str | None = None  # "string" or "raw" once the scan broke
        self._scan = PythonArgsScan(self._emit, lenient=False)
        self._scan.feed("v=")

    def _emit(self, piece: str) -> None:
        if self._closing is not None:
            self._closing.append(piece)
        elif self._skip is not None:  # the scan's "{" and '"v": ' are not the value
            self._skip += piece
            if self._skip.endswith('": '):
                self._skip = None
        elif piece:
            self._said = True
            self._seen = []
            self._say(piece)

    def text(self, piece: str) -> None:
        if self._fallback is not None:
            self._say(escape(piece) if self._fallback == STRING else piece)
            return
        if not self._said:
            self._seen.append(piece)
        stop = self._scan.feed(piece)
        if self._scan.broken:
            self._break(piece[stop:])

    def _break(self, rest: str) -> None:
        if self._said:
            self._fallback = RAW
            self._say(rest)
        else:
            self._fallback = STRING
            self._say('"' + escape("".join(self._seen)))
        self._seen = []

    def close(self) -> None:
        """The value is complete: what the scan held goes out, without the call's closing brace."""
        if self._fallback is None:
            self._closing = []
            self._scan.feed(")")
            tail = "".join(self._closing)
            if self._scan.broken:
                self._closing = None
                self._break("")
            else:
                self._say(tail[:-1] if tail.endswith("}") else tail)
        if self._fallback == STRING:
            self._say('"')

    def truncate(self) -> None:
        """The generation ended inside the value: what was written goes out, nothing is invented."""
        if self._fallback is None:
            self._closing = []
            self._scan.finish()
            self._say("".join(self._closing))


def function_parameters(tools: list[dict[str, Any]], function_name: str) -> dict[str, Any]:
    """The parameters schema of ``function_name`` in the request's tools (``{}`` when it has none)."""
    for tool in tools:
        fn = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(fn, dict) and fn.get("name") == function_name:
            params = fn.get("parameters")
            return params if isinstance(params, dict) else {}
    return {}


class TypedArguments:
    """The JSON arguments of one open call, written append-only as its parameters arrive."""

    __slots__ = ("_closed", "_head", "_held", "_index", "_keys", "_literal", "_mode", "_parser", "_props")

    def __init__(self, parser: FormatParser, index: int, function_name: str) -> None:
        self._parser = parser
        self._index = index
        params = function_parameters(parser.tools, function_name)
        props = params.get("properties")
        self._props: dict[str, Any] = props if isinstance(props, dict) else {}
        #: the schema's parameters when it admits no others, else None (any name may come)
        self._closed = frozenset(self._props) if params.get("additionalProperties") is False else None
        self._keys: set[str] = set()  # parameters written
        self._mode = STRING
        self._held: list[str] = []  # a held value's text (HELD), or a raw value's undecided head (RAW)
        self._head = False  # RAW: still holding a head that may be a Python literal
        self._literal: LiteralValue | None = None  # LITERAL: the value being scanned
        parser._arguments(index, "{")

    def accepts(self, name: str) -> bool:
        """Can a parameter named ``name`` come next (after a value's closer)?"""
        return name not in self._keys and (self._closed is None or name in self._closed)

    def may_accept(self, head: str) -> bool:
        """Can a parameter whose name begins with ``head`` (the rest not written yet) come next?"""
        return self._closed is None or any(name.startswith(head) for name in self._closed - self._keys)

    def kind(self, key: str) -> str | None:
        """The declared JSON type of parameter ``key`` (None: not declared, or not one type)."""
        return declared_type(self._props.get(key))

    def declares(self, key: str) -> bool:
        """Does the schema declare parameter ``key`` (whatever its type)?"""
        return key in self._props

    def key(self, key: str, mode: str | None = None) -> None:
        """Parameter ``key`` begins; ``mode`` overrides the one its declared type gives."""
        self._mode = value_mode(self.kind(key)) if mode is None else mode
        prefix = "," if self._keys else ""
        self._keys.add(key)
        self._say(prefix + json.dumps(key, ensure_ascii=False) + ":" + ('"' if self._mode == STRING else ""))
        self._held = []
        self._head = self._mode == RAW
        self._literal = LiteralValue(self._say) if self._mode == LITERAL else None

    def text(self, piece: str) -> None:
        """More of the current value's raw text."""
        if not piece:
            return
        mode = self._mode
        if mode == STRING:
            self._say(escape(piece))
        elif mode == HELD:
            self._held.append(piece)
        elif self._literal is not None:
            self._literal.text(piece)
        elif not self._head:
            self._say(piece)
        else:
            self._held.append(piece)
            head = "".join(self._held)
            if not _may_become_python_literal(head):
                self._held = []
                self._head = False
                self._say(head)

    def close_value(self) -> None:
        """The current value is complete."""
        mode = self._mode
        if mode == STRING:
            self._say('"')
        elif mode == HELD:
            text = "".join(self._held)
            literal = python_literal(text) or json_literal(text) or python_container(text)
            self._say(literal if literal is not None else json.dumps(text, ensure_ascii=False))
        elif self._literal is not None:
            self._literal.close()
            self._literal = None
        elif self._head:
            head = "".join(self._held)
            self._say(python_literal(head) or head)
        self._held = []
        self._head = False

    def truncate(self) -> None:
        """The generation ended inside the current value: write what is held as far as it got."""
        if self._mode == HELD:
            text = "".join(self._held)
            literal = python_literal(text) or json_literal(text)
            self._say(literal if literal is not None else '"' + escape(text))
        elif self._literal is not None:
            self._literal.truncate()
            self._literal = None
        elif self._mode == RAW and self._head:
            head = "".join(self._held)
            self._say(python_literal(head) or head)
        self._held = []
        self._head = False

    def close(self) -> None:
        """The call is complete."""
        self._say("}")

    def _say(self, text: str) -> None:
        self._parser._arguments(self._index, text)


class ValueEnd:
    """Whether a value's closing tag, followed by some text, closes the value.

    ``closer``: the value's closing tag. ``openers``: the next parameter's
    opening tag as ``(prefix, terminator)`` around its name (``("<parameter=",
    ">")``). ``enders``: what ends the call (``</function>``). ``layout``: what
    may come right before the closer and belong to it (a newline, where one
    newline before the closer is layout); :attr:`hold` is what a parser holds
    back at the end of a piece.

    ``layout`` also makes the template's whole closing line count at once:
    a closer with a layout newline before it and a newline right after it
    (``\n</parameter>\n``, the line Qwen3-Coder's grammar writes) closes the
    value when that newline arrives, as llama.cpp's mapper sends the closing
    quote then, before the next parameter is seen. A closer written any other
    way inside a value (``x</parameter> is``) is value text as soon as what
    follows it shows that the call does not go on.
    """

    __slots__ = ("closer", "enders", "hold", "layout", "openers")

    def __init__(
        self,
        closer: str,
        openers: tuple[tuple[str, str], ...],
        enders: tuple[str, ...],
        layout: tuple[str, ...] = (),
    ) -> None:
        self.closer = closer
        self.openers = openers
        self.enders = enders
        self.layout = layout
        self.hold = (*(left + closer for left in layout), closer)

    def closes(self, after: str, args: TypedArguments, before: str = "") -> bool | None:
        """Does the closer followed by ``after`` close the value? None: the next piece decides.

        ``args``: the call's arguments, which know what parameter may come next;
        ``before``: the value text before the closer (its layout newline counts).
        The answer for a text is the same however it was split.
        """
        if self.layout and after[:1] in ("\n", "\r") and before.endswith(self.layout):
            if after.startswith(("\n", "\r\n")):
                return True  # the template's own closing line: "\n</parameter>\n"
            return None  # a lone "\r": the next piece decides
        rest = after.lstrip()
        if len(after) - len(rest) > LAYOUT_LIMIT:
            return False
        if not rest:
            return None
        undecided = False
        for ender in self.enders:
            if rest.startswith(ender):
                return True
            undecided = undecided or ender.startswith(rest)
        for prefix, terminator in self.openers:
            if rest.startswith(prefix):
                verdict = _next_name(rest[len(prefix) :], terminator, args)
                if verdict is not False:
                    return verdict
            undecided = undecided or prefix.startswith(rest)
        return None if undecided else False


def _next_name(text: str, terminator: str, args: TypedArguments) -> bool | None:
    """Is ``text`` (after a parameter's opening prefix) a parameter that may come next, then ``terminator``?"""
    end = text.find(terminator)
    if end >= 0:
        name = text[:end].strip()
        return _plausible(name) and args.accepts(name)
    cut = held_back_from(text, (terminator,))
    name = text[:cut]
    if len(name) > NAME_LIMIT or "\n" in name or "<" in name:
        return False
    if cut < len(text):  # the terminator is half-typed: the name is complete
        return None if args.accepts(name.strip()) else False
    return None if args.may_accept(name.lstrip()) else False


def _plausible(name: str) -> bool:
    return bool(name) and len(name) <= NAME_LIMIT and "\n" not in name and "<" not in name


__all__ = [
    "HELD",
    "LAYOUT_LIMIT",
    "NAME_LIMIT",
    "RAW",
    "STRING",
    "TypedArguments",
    "ValueEnd",
    "escape",
    "function_parameters",
    "json_literal",
    "python_literal",
    "value_mode",
]
