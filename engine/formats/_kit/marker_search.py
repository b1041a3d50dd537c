"""Finding wire markers in a stream without leaking half-typed ones.

A marker such as ``<tool_call>`` can arrive split over several tokens. Text is
released to content only once it is known not to start a marker: a trailing
``<tool_c`` is held back until the next piece decides it.
"""

from __future__ import annotations

import re


def find_first(buffer: str, markers: tuple[str, ...], start: int = 0) -> tuple[int, str] | None:
    """Earliest complete occurrence of any marker at or after ``start`` (longest wins on ties)."""
    best: tuple[int, str] | None = None
    for marker in markers:
        pos = buffer.find(marker, start)
        if pos < 0:
            continue
        if best is None or pos < best[0] or (pos == best[0] and len(marker) > len(best[1])):
            best = (pos, marker)
    return best


def held_back_from(buffer: str, markers: tuple[str, ...], start: int = 0) -> int:
    """Index from which ``buffer`` might be the beginning of a marker.

    That is the first index ``pos >= start``, among the last
    ``max(len(marker)) - 1`` characters, where ``buffer[pos:]`` is a prefix of
    (or equal to) a marker. Everything before it is safe to release;
    ``len(buffer)`` means nothing needs holding. It runs on every piece fed to
    a parser, so the test is one compiled regular expression per marker set
    and its cost does not grow with the buffer.
    """
    end = len(buffer)
    found = _HOLD_PATTERNS.get(markers)
    if found is None:
        found = _hold_pattern(markers)
    pattern, longest = found
    if pattern is None:
        return end
    m = pattern.search(buffer, max(start, end - longest + 1))
    return end if m is None else m.start()


#: markers -> (regex matching a non-empty prefix of one of them that runs to the end, longest marker)
_HOLD_PATTERNS: dict[tuple[str, ...], tuple[re.Pattern[str] | None, int]] = {}


def _hold_pattern(markers: tuple[str, ...]) -> tuple[re.Pattern[str] | None, int]:
    alternatives = []
    for marker in markers:
        if marker:  # "a(?:b(?:c)?)?" matches "a", "ab" and "abc"
            tail = ""
            for char in reversed(marker[1:]):
                tail = f"(?:{re.escape(char)}{tail})?"
            alternatives.append(re.escape(marker[0]) + tail)
    pattern = re.compile("(?:" + "|".join(alternatives) + r")\Z") if alternatives else None
    if len(_HOLD_PATTERNS) >= 256:  # marker sets are module constants; this only bounds misuse
        _HOLD_PATTERNS.clear()
    found = _HOLD_PATTERNS[markers] = (pattern, max((len(m) for m in markers), default=0))
    return found


def strip_partial_suffix(buffer: str, marker: str) -> str:
    """``buffer`` minus a trailing proper prefix of ``marker`` (the half-typed closer)."""
    cut = held_back_from(buffer, (marker,))
    return buffer[:cut]
