"""JSON from users and models, read and written without Python's recursion limit.

:func:`json.loads` and :func:`json.dumps` recurse once per nesting level, so a
*valid* document nested about a thousand levels deep raises ``RecursionError``
(a model can write ``[[[[...]]]]`` as easily as anything else), and
``json.loads`` refuses an integer literal longer than
:func:`sys.get_int_max_str_digits` with a bare ``ValueError``. Every place that
reads JSON it did not write goes through this module, so the answer is always
either the value or one :class:`json.JSONDecodeError` naming line and column.

The C ``json`` module stays the fast path: the iterative parser and encoder
here only run when it gives up, so an ordinary document costs one extra call
(plus, for a document held to :data:`DOCUMENT_DEPTH`, one walk over its value).

* :func:`loads` returns the value ``json.loads`` would (same types, same
  errors for bad JSON). Nesting deeper than :data:`MAX_DEPTH` (or the
  caller's ``max_depth``: :data:`DOCUMENT_DEPTH` for documents) and integers
  Python cannot convert are refused as a :class:`JSONLimitError` (a
  ``JSONDecodeError``) with the position:
  values are kept, handed to other code and written out again, and neither a
  100,000-level structure nor a 5,000-digit integer survives that.
* :func:`check` answers only "is this JSON?" (the grammar, nothing else): it
  builds no values, so it has no depth or digit limit. Validity verdicts on a
  model's arguments use it, so valid JSON is never reported invalid.
* :func:`dumps` is ``json.dumps`` for the options callscope uses, whatever the
  depth.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from json import JSONDecodeError
from typing import Any

#: Deepest nesting :func:`loads` builds values for. A real tool call nests a few levels, a
#: JSON schema a few dozen; 100,000 is far beyond anything but a hostile input, and keeps one
#: document's container stack small.
MAX_DEPTH = 100_000
#: Deepest nesting of a document a person writes (tools, messages, a request body). Those values
#: go on to recursive code (chat-template rendering, grammar compilation, an HTTP client's JSON
#: encoder, ``copy.deepcopy``) that shares Python's 1,000-frame stack, so they get a bound that code
#: can take with room to spare; real schemas and messages nest a few dozen levels at most.
DOCUMENT_DEPTH = 128

_WS = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"(-?(?:0|[1-9]\d*))(\.\d+)?([eE][-+]?\d+)?")
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_CONSTANTS: dict[str, float] = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}
_LITERALS: dict[str, Any] = {"null": None, "true": True, "false": False}


class JSONLimitError(JSONDecodeError):
    """Valid JSON that :func:`loads` will not hold as a value: nested deeper than
    the caller's bound, or an integer longer than Python converts. The message
    says which, and where."""


def loads(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """``text`` as a JSON value, like :func:`json.loads`, nested at most ``max_depth`` levels.

    Raises :class:`json.JSONDecodeError` (a ``ValueError``) for anything else:
    :class:`JSONLimitError` for valid JSON nested deeper than ``max_depth`` or
    holding an integer too long for Python to convert.
    """
    try:
        value = json.loads(text)
    except JSONDecodeError:
        raise
    except (RecursionError, ValueError):
        # too deep for the C scanner, or an integer past the digit limit: the iterative parser
        # either builds the value or says where the problem is
        return _Parser(text, build=True, constants=True, max_depth=max_depth).parse()
    if max_depth < MAX_DEPTH and deeper_than(value, max_depth):
        _Parser(text, build=False, constants=True, max_depth=max_depth).parse()  # raises, with the position
    return value


def deeper_than(value: Any, limit: int) -> bool:
    """Does ``value`` nest more than ``limit`` containers (lists, tuples, dicts) deep? Without recursion."""
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth >= limit:
            return True
        pending.extend((child, depth + 1) for child in children if isinstance(child, (dict, list, tuple)))
    return False


def check(text: str, constants: bool = True) -> None:
    """Raise :class:`json.JSONDecodeError` unless ``text`` is one JSON value (any depth, any integer).

    ``constants=False`` also refuses ``NaN``, ``Infinity`` and ``-Infinity``,
    which ``json.loads`` accepts but the JSON grammar does not.
    """
    try:
        json.loads(text, parse_constant=None if constants else _refuse_constant)
        return
    except JSONDecodeError:
        raise
    except (RecursionError, ValueError):
        pass  # too deep, a long integer, or a refused constant: the grammar check says which, and where
    _Parser(text, build=False, constants=constants).parse()


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def is_json(text: str, constants: bool = True) -> bool:
    """Does ``text`` hold exactly one JSON value? (See :func:`check`.)"""
    try:
        check(text, constants)
    except JSONDecodeError:
        return False
    return True


# ===================================================================== parsing

_OBJECT = "{"


class _Parser:
    """The JSON grammar with an explicit stack instead of recursion; error messages as :mod:`json`'s.

    With ``build=False`` it only checks: containers are markers and integers are
    not converted (so no digit limit). ``max_depth`` bounds the nesting (None: none).
    """

    __slots__ = ("build", "constants", "keys", "max_depth", "stack", "text")

    def __init__(self, text: str, build: bool, constants: bool, max_depth: int | None = None) -> None:
        if not isinstance(text, str):
            raise TypeError(f"the JSON object must be str, not {type(text).__name__}")
        self.text = text
        self.build = build
        self.constants = constants
        self.max_depth = max_depth  # None: no limit (checking only)
        self.stack: list[Any] = []  # open containers (values when building, markers when checking)
        self.keys: list[str] = []  # the key being read in each open object

    def parse(self) -> Any:
        text = self.text
        pos = _WS.match(text, 0).end()
        while True:
            opened, value, pos = self._value(pos)
            if opened:
                continue
            value, pos, more = self._attach(value, pos)
            if not more:
                end = _WS.match(text, pos).end()
                if end != len(text):
                    raise JSONDecodeError("Extra data", text, end)
                return value

    def _value(self, pos: int) -> tuple[bool, Any, int]:
        """Read the value at ``pos``: ``(True, None, pos)`` if it opened a non-empty container."""
        text = self.text
        c = text[pos : pos + 1]
        if c == '"':
            value, end = _scanstring(text, pos + 1, True)
            return False, value, end
        if c == "{" or c == "[":
            if self.max_depth is not None and len(self.stack) >= self.max_depth:  # empty ones count too
                raise JSONLimitError(f"nested deeper than {self.max_depth:,} levels", text, pos)
            inner = _WS.match(text, pos + 1).end()
            if text[inner : inner + 1] == ("}" if c == "{" else "]"):
                return False, ({} if c == "{" else []) if self.build else None, inner + 1
            self._open(c)
            return True, None, self._key(inner) if c == "{" else inner
        for word, literal in _LITERALS.items():
            if c == word[0] and text.startswith(word, pos):
                return False, literal, pos + len(word)
        number = _NUMBER.match(text, pos)
        if number is not None:
            return False, self._number(number), number.end()
        for word, constant in _CONSTANTS.items():
            if c == word[0] and text.startswith(word, pos):
                if not self.constants:
                    raise JSONDecodeError(f"{word} is not JSON", text, pos)
                return False, constant, pos + len(word)
        raise JSONDecodeError("Expecting value", text, pos)

    def _open(self, kind: str) -> None:
        self.stack.append(({} if kind == _OBJECT else []) if self.build else kind)
        if kind == _OBJECT:
            self.keys.append("")

    def _key(self, pos: int) -> int:
        """Read ``"key" :`` at ``pos`` for the innermost object; return where its value starts."""
        text = self.text
        if text[pos : pos + 1] != '"':
            raise JSONDecodeError("Expecting property name enclosed in double quotes", text, pos)
        key, end = _scanstring(text, pos + 1, True)
        end = _WS.match(text, end).end()
        if text[end : end + 1] != ":":
            raise JSONDecodeError("Expecting ':' delimiter", text, end)
        self.keys[-1] = key
        return _WS.match(text, end + 1).end()

    def _attach(self, value: Any, pos: int) -> tuple[Any, int, bool]:
        """Put a finished value into its container, closing every container it completes.

        Returns ``(value, pos, more)``: ``more`` is True when another value must be
        read at ``pos``; False when the top-level value (``value``) is complete.
        """
        text = self.text
        stack = self.stack
        while stack:
            top = stack[-1]
            pos = _WS.match(text, pos).end()
            c = text[pos : pos + 1]
            is_object = isinstance(top, dict) if self.build else top == _OBJECT
            if self.build:
                if is_object:
                    top[self.keys[-1]] = value
                else:
                    top.append(value)
            if c == ",":
                pos = _WS.match(text, pos + 1).end()
                return None, self._key(pos) if is_object else pos, True
            if c == ("}" if is_object else "]"):
                closed = stack.pop()
                value = closed if self.build else None
                if is_object:
                    self.keys.pop()
                pos += 1
                continue
            raise JSONDecodeError("Expecting ',' delimiter", text, pos)
        return value, pos, False

    def _number(self, match: re.Match[str]) -> Any:
        integer, frac, exp = match.groups()
        if not self.build:
            return None
        if frac or exp:
            return float(integer + (frac or "") + (exp or ""))
        limit = sys.get_int_max_str_digits()
        digits = len(integer) - integer.startswith("-")
        if limit and digits > limit:
            raise JSONLimitError(
                f"an integer of {digits:,} digits; Python reads integers of at most {limit:,}", self.text, match.start()
            )
        return int(integer)


# ===================================================================== writing


def dumps(
    value: Any,
    *,
    ensure_ascii: bool = True,
    indent: int | str | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
    allow_nan: bool = True,
) -> str:
    """:func:`json.dumps` with the same options and output, at any depth.

    ``allow_nan=False`` refuses NaN and infinities with a ``ValueError`` (what
    report output uses, so ``NaN`` never reaches a JSON reader).
    """
    try:
        return json.dumps(
            value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys, allow_nan=allow_nan
        )
    except RecursionError:
        return "".join(_encode(value, ensure_ascii, indent, separators, sort_keys, allow_nan))


def _encode(
    value: Any,
    ensure_ascii: bool,
    indent: int | str | None,
    separators: tuple[str, str] | None,
    sort_keys: bool,
    allow_nan: bool,
) -> Iterator[str]:
    """The pieces of ``json.dumps(value, ...)``, produced with an explicit stack of open containers."""
    if isinstance(indent, int):
        indent = " " * indent
    item_sep, key_sep = separators if separators is not None else ((",", ": ") if indent is not None else (", ", ": "))
    string = json.encoder.encode_basestring_ascii if ensure_ascii else json.encoder.encode_basestring  # type: ignore[attr-defined]
    frames: list[tuple[Iterator[Any], bool, int]] = []  # (items, is_object, id) per open container
    on_path: set[int] = set()

    def newline(level: int) -> str:
        return "\n" + indent * level if indent is not None else ""

    def start(item: Any) -> str | None:
        """The text of a scalar or empty container; None after opening a non-empty one."""
        scalar = _scalar(item, string, allow_nan)
        if scalar is not None:
            return scalar
        if isinstance(item, dict):
            if not item:
                return "{}"
            pairs = sorted(item.items()) if sort_keys else item.items()
            opened: tuple[Iterator[Any], bool] = (iter(pairs), True)
        elif isinstance(item, (list, tuple)):
            if not item:
                return "[]"
            opened = (iter(item), False)
        else:
            raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")
        if id(item) in on_path:
            raise ValueError("Circular reference detected")
        on_path.add(id(item))
        frames.append((opened[0], opened[1], id(item)))
        return None

    first = start(value)
    if first is not None:
        yield first
        return
    yield "{" if frames[-1][1] else "["
    fresh = True
    while frames:
        items, is_object, ident = frames[-1]
        item = next(items, _END)
        if item is _END:
            frames.pop()
            on_path.discard(ident)
            yield newline(len(frames)) + ("}" if is_object else "]")
            fresh = False
            continue
        yield ("" if fresh else item_sep) + newline(len(frames))
        if is_object:
            key, item = item
            yield string(_key(key, allow_nan)) + key_sep
        text = start(item)
        if text is None:
            yield "{" if frames[-1][1] else "["
            fresh = True
        else:
            yield text
            fresh = False


_END = object()


def _scalar(value: Any, string: Callable[[str], str], allow_nan: bool) -> str | None:
    if isinstance(value, str):
        return string(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value, allow_nan)
    return None


def _float(value: float, allow_nan: bool) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        if not allow_nan:
            raise ValueError(f"Out of range float values are not JSON compliant: {value!r}")
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    return float.__repr__(value)


def _key(key: Any, allow_nan: bool) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key, allow_nan)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


__all__ = ["DOCUMENT_DEPTH", "MAX_DEPTH", "JSONLimitError", "check", "deeper_than", "dumps", "is_json", "loads"]
