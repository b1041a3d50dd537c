"""The partial-JSON readers client libraries use on tool-call arguments, one per library family.

Written from reading each library's parser (none is imported or copied):

- :func:`langchain_python`: langchain-core's ``parse_partial_json``: ``json.loads(strict=False)``; failing
  that, escape raw newlines inside strings, close the open string and brackets, and retry with ever
  shorter prefixes; a closing bracket that matches nothing gives None.
- :func:`langchain_js`: @langchain/core's ``parsePartialJson``: ``JSON.parse``; failing that, a recursive
  descent that accepts a value cut anywhere and rejects anything after a complete value; None on error.
- :func:`completed`: for the anthropic SDKs (jiter's partial mode in Python, a vendored partial-json
  parser in TypeScript): a complete document as ``json.loads`` reads it; a document cut short is closed
  (an unfinished key or trailing comma dropped); anything else raises ``ValueError`` as they do.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_right
from itertools import accumulate
from typing import Any


def _no_constants(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


def js_parse(text: str) -> Any:
    """``JSON.parse``: strict JSON (no NaN/Infinity, no raw control characters in strings)."""
    return json.loads(text, parse_constant=_no_constants)


# ---------------------------------------------------------------- langchain-core (Python)


def langchain_python(text: str) -> Any:
    try:
        return json.loads(text, strict=False)
    except json.JSONDecodeError:
        pass
    pieces: list[str] = []
    closers: list[str] = []
    in_string = escaped = False
    for char in text:
        piece = char
        if in_string:
            if char == '"' and not escaped:
                in_string = False
            elif char == "\n" and not escaped:
                piece = "\\n"
            elif char == "\\":
                escaped = not escaped
            else:
                escaped = False
        elif char == '"':
            in_string, escaped = True, False
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
        elif char in "}]":
            if not closers or closers[-1] != char:
                return None
            closers.pop()
        pieces.append(piece)
    if in_string:
        if escaped:
            pieces.pop()
        pieces.append('"')
    tail = "".join(reversed(closers))
    ends = list(accumulate(map(len, pieces)))
    while pieces:
        try:
            return json.loads("".join(pieces) + tail, strict=False)
        except json.JSONDecodeError as exc:
            # every longer prefix keeps the piece the decoder stopped at, so it fails too: cut there at once
            cut = bisect_right(ends, exc.pos)
            if cut < len(pieces):
                del pieces[cut:]
                del ends[cut:]
            else:
                pieces.pop()
                ends.pop()
    return json.loads(text, strict=False)


# ---------------------------------------------------------------- @langchain/core (JavaScript)


class _Cut(ValueError):
    pass


class _Descent:
    """A value that may be cut anywhere; anything malformed raises."""

    __slots__ = ("text", "pos")

    _ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "b": "\b", "f": "\f", "/": "/"}

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text) and text[self.pos].isspace():
            self.pos += 1

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def value(self) -> Any:
        self.skip()
        if self.at_end():
            raise _Cut("unexpected end")
        text, pos = self.text, self.pos
        char = text[pos]
        if char == "{":
            return self.obj()
        if char == "[":
            return self.array()
        if char == '"':
            return self.string()
        for word, meaning in (("null", None), ("true", True), ("false", False)):
            if word.startswith(text[pos:pos + len(word)]):
                self.pos += min(len(word), len(text) - pos)
                return meaning
        if char == "-" or char.isdigit():
            return self.number()
        raise _Cut(f"unexpected {char!r}")

    def string(self) -> str:
        text = self.text
        self.pos += 1
        out: list[str] = []
        escaped = False
        while self.pos < len(text):
            char = text[self.pos]
            if escaped:
                if char == "u":
                    digits = text[self.pos + 1:self.pos + 5]
                    if not all(c in "0123456789abcdefABCDEF" for c in digits):
                        raise _Cut("bad unicode escape")
                    out.append(chr(int(digits, 16)) if len(digits) == 4 else "u" + digits)
                    self.pos += len(digits)
                elif char in self._ESCAPES:
                    out.append(self._ESCAPES[char])
                else:
                    raise _Cut("bad escape")
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                self.pos += 1
                return "".join(out)
            else:
                out.append(char)
            self.pos += 1
        if escaped:
            out.append("\\")
        return "".join(out)

    def number(self) -> float | int:
        text, start = self.text, self.pos
        end = start + (1 if text[start] == "-" else 0)
        if end < len(text) and text[end] == "0":
            end += 1
            if end < len(text) and text[end].isdigit():
                raise _Cut("leading zero")
        while end < len(text) and text[end].isdigit():
            end += 1
        if end < len(text) and text[end] == ".":
            end += 1
            while end < len(text) and text[end].isdigit():
                end += 1
        if end < len(text) and text[end] in "eE":
            end += 1
            if end < len(text) and text[end] in "+-":
                end += 1
            while end < len(text) and text[end].isdigit():
                end += 1
        self.pos = end
        digits = text[start:end]
        if digits == "-":
            return -0.0
        number = _js_float(digits)
        if number is None:
            self.pos = start
            raise _Cut("bad number")
        return int(number) if number.is_integer() and "." not in digits and "e" not in digits.lower() else number

    def array(self) -> list[Any]:
        self.pos += 1
        found: list[Any] = []
        self.skip()
        if self.at_end():
            return found
        if self.text[self.pos] == "]":
            self.pos += 1
            return found
        while not self.at_end():
            self.skip()
            if self.at_end():
                return found
            found.append(self.value())
            self.skip()
            if self.at_end():
                return found
            char = self.text[self.pos]
            self.pos += 1
            if char == "]":
                return found
            if char != ",":
                raise _Cut("expected , or ]")
        return found

    def obj(self) -> dict[str, Any]:
        self.pos += 1
        found: dict[str, Any] = {}
        self.skip()
        if self.at_end():
            return found
        if self.text[self.pos] == "}":
            self.pos += 1
            return found
        while not self.at_end():
            self.skip()
            if self.at_end():
                return found
            if self.text[self.pos] != '"':
                raise _Cut("expected a key")
            key = self.string()
            self.skip()
            if self.at_end():
                return found
            if self.text[self.pos] != ":":
                raise _Cut("expected :")
            self.pos += 1
            self.skip()
            if self.at_end():
                return found
            found[key] = self.value()
            self.skip()
            if self.at_end():
                return found
            char = self.text[self.pos]
            self.pos += 1
            if char == "}":
                return found
            if char != ",":
                raise _Cut("expected , or }")
        return found


def _js_float(digits: str) -> float | None:
    """``Number.parseFloat`` of a number-shaped prefix (None for NaN)."""
    for end in range(len(digits), 0, -1):
        try:
            value = float(digits[:end])
        except ValueError:
            continue
        return None if math.isnan(value) else value
    return None


def langchain_js(text: str) -> Any:
    """``parsePartialJson``: the value, or None when it cannot be read."""
    try:
        return js_parse(text)
    except (ValueError, RecursionError):
        pass
    buffer = text.strip()
    if not buffer:
        return None
    reader = _Descent(buffer)
    try:
        value = reader.value()
        reader.skip()
    except (_Cut, RecursionError):
        return None
    return None if not reader.at_end() else value


# ---------------------------------------------------------------- the anthropic SDKs


def completed(text: str) -> Any:
    """A complete document as it is; one cut short closed; anything else raises ValueError."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        error = exc
    closers: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            closers.append("}" if char == "{" else "]")
        elif char in "}]":
            if not closers or closers[-1] != char:
                raise ValueError(str(error))
            closers.pop()
    if not closers and not in_string:
        raise ValueError(str(error))
    body = text[:-1] if escaped else text
    body += '"' if in_string else ""
    for candidate in _trimmed(body):
        try:
            return json.loads(candidate + "".join(reversed(closers)))
        except json.JSONDecodeError:
            continue
    raise ValueError(str(error))


def _trimmed(body: str) -> list[str]:
    """The cut document, then without a dangling ``,``/``:``, then without an unfinished key or value."""
    stripped = body.rstrip()
    found = [stripped, stripped.rstrip(",:").rstrip()]
    for mark in (",", "{", "["):
        cut = stripped.rfind(mark)
        if cut >= 0:
            found.append(stripped[: cut + (1 if mark in "{[" else 0)])
    return found
