"""Finding wire markers in a stream without leaking half-typed ones.

A marker such as ``<tool_call>`` can arrive split over several tokens. Text is
released to content only once it is known not to start a marker: a trailing
``<tool_c`` is held back until the next piece decides it.
"""

from __future__ import annotations


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

    Everything before the returned index is safe to release; ``len(buffer)``
    means nothing needs holding. Only the last ``max(len(marker)) - 1``
    characters are examined, so the cost does not grow with the buffer.
    """
    end = len(buffer)
    longest = max((len(m) for m in markers), default=0)
    first = max(start, end - longest + 1)
    for pos in range(first, end):
        tail = buffer[pos:]
        for marker in markers:
            if marker.startswith(tail):
                return pos
    return end


def strip_partial_suffix(buffer: str, marker: str) -> str:
    """``buffer`` minus a trailing proper prefix of ``marker`` (the half-typed closer)."""
    cut = held_back_from(buffer, (marker,))
    return buffer[:cut]
