"""Cutting markers out of rendered text: common affixes trimmed to marker boundaries.

Diffing two renders gives the text they share before or after what differs;
that text is a marker only up to a boundary (``>\\n<parameter=`` shares a ``>``
with ``</parameter>\\n<parameter=``, but the marker is ``<parameter=``). A
marker starts at ``<``, ``[``, ``{`` or a special-token glyph and ends after
``>``, ``]``, ``}`` or such a glyph; whitespace around it is layout. That is the
only assumption the analysis makes about what a marker looks like (llama.cpp's
autoparser makes the same: ``extract_structural_prefix/suffix``).

One refinement: a special token, a word and another special token with nothing
between them are one marker (Kimi-K3 writes every element that way:
``<|open|>think<|sep|>`` ... ``<|close|>think<|sep|>``), so ``<|close|>`` alone is
never taken for the end of reasoning or of a turn.
"""

from __future__ import annotations

import os
import re

_OPENERS = "<[{"
_CLOSERS = ">]}"
#: A compound marker: a special token, a word (and attributes, no newline or markup), a special token.
_COMPOUND = r"<\|[^|<>\s]{1,24}\|>[A-Za-z_][^<>\n]{0,80}?<\|[^|<>\s]{1,24}\|>"
_COMPOUND_FIRST = re.compile(_COMPOUND)
_COMPOUND_LAST = re.compile(f"(?:{_COMPOUND})$")


def is_glyph(char: str) -> bool:
    """A character of special-token markup (DeepSeek's ``｜``, ``▁``; fullwidth forms)."""
    return ord(char) >= 0x2000 and not char.isalnum()


def common_prefix(a: str, b: str) -> str:
    return os.path.commonprefix([a, b])


def common_suffix(a: str, b: str) -> str:
    return os.path.commonprefix([a[::-1], b[::-1]])[::-1]


def marker_suffix(a: str, b: str) -> str:
    """The text ``a`` and ``b`` end with, from the first marker start in it (whitespace before it dropped).

    ``>\\n<parameter=`` and ``</parameter>\\n<parameter=`` give ``<parameter=``.
    Returns "" when what they share holds no marker start.
    """
    shared = common_suffix(a, b)
    for i, char in enumerate(shared):
        if char in _OPENERS:
            return shared[i:]
    return ""


def marker_prefix(a: str, b: str) -> str:
    """The text ``a`` and ``b`` start with, up to the last marker end in it (whitespace before it kept).

    ``\\n</parameter>\\n<parameter=`` and ``\\n</parameter>\\n</function>`` give ``\\n</parameter>``.
    Returns "" when what they share holds no marker end.
    """
    shared = common_prefix(a, b)
    for i in range(len(shared) - 1, -1, -1):
        char = shared[i]
        if char in _CLOSERS:
            return shared[: i + 1]
    return ""


def inside_compound(text: str, at: int) -> int:
    """``at`` moved past a compound marker it would cut (``<|close|>call|<|sep|>``); else ``at``."""
    for found in _COMPOUND_FIRST.finditer(text, max(0, at - 130), min(len(text), at + 130)):
        if found.start() < at < found.end():
            return found.end()
    return at


def boundary_before(text: str, pos: int) -> int:
    """The last position ``<= pos`` that does not cut a marker or a word in ``text``.

    Used where two renders part ways: the common prefix of ``...assistant\\n<think>``
    and ``...assistant\\n<tool_call>`` ends inside ``<t``; the turn starts before ``<``.
    """
    while 0 < pos <= len(text):
        before, at = text[pos - 1], text[pos] if pos < len(text) else ""
        if before.isspace() or before in _CLOSERS or at in _OPENERS:
            return pos
        pos -= 1
    return 0


def first_marker(text: str) -> str:
    """The first marker of ``text`` (after whitespace): ``<...>``, ``[...]``, or a glyph-framed token; else ""."""
    rest = text.lstrip()
    if not rest:
        return ""
    compound = _COMPOUND_FIRST.match(rest)
    if compound:
        return compound.group(0)
    if rest[0] == "<":
        end = rest.find(">")
        return rest[: end + 1] if end > 0 else ""
    if rest[0] == "[":
        end = rest.find("]")
        return rest[: end + 1] if end > 0 else ""
    return ""


def last_marker(text: str) -> str:
    """The last marker of ``text`` (before trailing whitespace): ``<...>`` or ``[...]``; else ""."""
    rest = text.rstrip()
    if not rest:
        return ""
    compound = _COMPOUND_LAST.search(rest[-160:])
    if compound:
        return compound.group(0)
    if rest[-1] == ">":
        start = rest.rfind("<")
        return rest[start:] if start >= 0 else ""
    if rest[-1] == "]":
        start = rest.rfind("[")
        return rest[start:] if start >= 0 else ""
    return ""


def closing_of(opener: str) -> str:
    """The closing tag of a reasoning opener the way templates spell them: ``<think>`` gives ``</think>``.

    ``<|START_THINKING|>`` gives ``<|END_THINKING|>``, ``[THINK]`` gives ``[/THINK]``. Only for tags
    that name reasoning (think, reason, thought) and are openers; "" otherwise.
    """
    lowered = opener.lower()
    compound = _COMPOUND_FIRST.fullmatch(opener)
    if compound and any(word in lowered for word in ("think", "reason", "thought")):
        head = opener[: opener.find("|>") + 2]
        for start, end in (("open", "close"), ("start", "end"), ("begin", "end")):
            if start in head.lower():
                at = head.lower().find(start)
                return head[:at] + end + head[at + len(start) :] + opener[len(head) :]
        return ""
    if not any(word in lowered for word in ("think", "reason", "thought")) or "/" in opener or "end" in lowered:
        return ""
    if opener.startswith("<|") and opener.endswith("|>") and "START" in opener:
        return opener.replace("START", "END", 1)
    if opener.startswith("<") and opener.endswith(">"):
        body = opener[1:-1]
        if body.startswith("|") and body.endswith("|"):
            return f"<|/{body[1:-1]}|>"
        return f"</{body}>"
    if opener.startswith("[") and opener.endswith("]"):
        return f"[/{opener[1:-1]}]"
    return ""


__all__ = [
    "boundary_before",
    "closing_of",
    "common_prefix",
    "common_suffix",
    "first_marker",
    "inside_compound",
    "is_glyph",
    "last_marker",
    "marker_prefix",
    "marker_suffix",
]
