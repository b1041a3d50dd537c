"""Matching a marker pattern at the front of a stream, one piece at a time.

A pattern is a description string (``":{index}<|tool_call_argument_begin|>"``,
``'" string="{skip}">'``) compiled to tokens: literals, flexible whitespace
(wherever the template wrote whitespace), and the placeholders ``{index}``
(digits), ``{id}`` (a call id, captured) and ``{skip}`` (anything up to the next
literal). Whitespace at a pattern's ends is dropped: around markers it is
layout, which the parser's states skip.

:meth:`Pattern.match` looks at the front of the unresolved buffer and says
``DONE`` (with the length consumed and the id), ``MORE`` (it may still match:
wait for text) or ``FAIL``. It never consumes a partial token, so the caller
keeps the buffer and asks again with the next piece; what it holds is bounded
by the longest literal and :data:`CAPTURE_LIMIT`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from callscope.engine.formats.derived.description import ID, INDEX, SKIP

DONE, MORE, FAIL = "done", "more", "fail"
#: Longest ``{id}`` or ``{skip}`` text (a longer one means the pattern does not match).
CAPTURE_LIMIT = 64

_LIT, _WS, _INDEX, _ID, _SKIP = range(5)
_SPLIT = re.compile(r"(\{index\}|\{id\}|\{skip\}|\s+)")
_WHITESPACE = re.compile(r"\s*")
_DIGITS = re.compile(r"[0-9]*")


@dataclass(frozen=True, slots=True)
class Match:
    status: str
    end: int = 0
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Pattern:
    """A compiled marker pattern (see the module docstring)."""

    source: str
    tokens: tuple[tuple[int, str], ...]

    @classmethod
    def compile(cls, source: str) -> Pattern:
        tokens: list[tuple[int, str]] = []
        for part in _SPLIT.split(source.strip()):
            if not part:
                continue
            if part.isspace():
                tokens.append((_WS, ""))
            elif part == INDEX:
                tokens.append((_INDEX, ""))
            elif part == ID:
                tokens.append((_ID, ""))
            elif part == SKIP:
                tokens.append((_SKIP, ""))
            else:
                tokens.append((_LIT, part))
        return cls(source, tuple(tokens))

    @classmethod
    def join(cls, *patterns: Pattern) -> Pattern:
        """The patterns one after the other, any whitespace allowed between them."""
        tokens: list[tuple[int, str]] = []
        for pattern in patterns:
            if pattern.tokens:
                if tokens:
                    tokens.append((_WS, ""))
                tokens.extend(pattern.tokens)
        return cls(" ".join(p.source for p in patterns if p.tokens), tuple(tokens))

    def split_first(self) -> tuple[str, Pattern]:
        """``(its first literal, the rest)``; ``("", self)`` when it does not start with a literal."""
        if not self.tokens or self.tokens[0][0] != _LIT:
            return "", self
        rest = self.tokens[1:]
        while rest and rest[0][0] == _WS:  # whitespace right after the first literal: matched by match()'s lead
            rest = rest[1:]
        return self.tokens[0][1], Pattern(self.source, rest)

    @property
    def empty(self) -> bool:
        return not self.tokens

    @property
    def first_char(self) -> str:
        """The first character a match must start with ("" when it starts with a placeholder or is empty)."""
        if self.tokens and self.tokens[0][0] == _LIT:
            return self.tokens[0][1][0]
        return ""

    @property
    def longest(self) -> int:
        """The most characters a match can take (bounds what a caller holds back)."""
        return sum(len(text) for kind, text in self.tokens if kind == _LIT) + CAPTURE_LIMIT * len(self.tokens)

    def match(self, buf: str, pos: int = 0) -> Match:
        """Match at ``buf[pos:]`` (leading whitespace allowed); see the module docstring."""
        pos = _WHITESPACE.match(buf, pos).end()  # type: ignore[union-attr]
        n = len(buf)
        call_id: str | None = None
        tokens = self.tokens
        for i, (kind, text) in enumerate(tokens):
            if kind == _LIT:
                if buf.startswith(text, pos):
                    pos += len(text)
                    continue
                return Match(MORE if text.startswith(buf[pos:]) else FAIL)
            if kind == _WS:
                pos = _WHITESPACE.match(buf, pos).end()  # type: ignore[union-attr]
                if pos >= n:
                    return Match(MORE)
                continue
            if kind == _INDEX:
                pos = _DIGITS.match(buf, pos).end()  # type: ignore[union-attr]
                if pos >= n:
                    return Match(MORE)
                continue
            stop = _stop_of(tokens, i)
            end = _find_stop(buf, pos, stop)
            if end < 0:
                return Match(MORE if n - pos <= CAPTURE_LIMIT else FAIL)
            if end - pos > CAPTURE_LIMIT:
                return Match(FAIL)
            if kind == _ID:
                call_id = buf[pos:end].strip() or None
            pos = end
        return Match(DONE, pos, call_id)


def _stop_of(tokens: tuple[tuple[int, str], ...], i: int) -> str:
    """What ends a placeholder: the first character of the next literal ("" : whitespace or the end)."""
    for kind, text in tokens[i + 1 :]:
        if kind == _LIT:
            return text[0]
        if kind == _WS:
            return ""
    return ""


_SPACE = re.compile(r"\s")


def _find_stop(buf: str, pos: int, stop: str) -> int:
    if stop:
        return buf.find(stop, pos)
    m = _SPACE.search(buf, pos)
    return m.start() if m is not None else -1


__all__ = ["CAPTURE_LIMIT", "DONE", "FAIL", "MORE", "Match", "Pattern"]
