"""Cutting markers out of rendered text: common affixes trimmed to marker boundaries.

Diffing two renders gives the text they share before or after what differs;
that text is a marker only up to a boundary (``>\\n<parameter=`` shares a ``>``
with ``</parameter>\\n<parameter=``, but the marker is ``<parameter=``). A
marker starts at ``<``, ``[``, ``{`` or a special-token glyph and ends after
``>``, ``]``, ``}`` or such a glyph; whitespace around it is layout. That is the
only assumption the analysis makes about what a marker looks like (llama.cpp's
autoparser makes the same: ``extract_structural_prefix/suffix``).
"""

from __future__ import annotations

import os

_OPENERS = "<[{"
_CLOSERS = ">]}"


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
    "is_glyph",
    "last_marker",
    "marker_prefix",
    "marker_suffix",
]
