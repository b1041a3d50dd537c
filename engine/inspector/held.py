"""Text the parser has read but not let out yet, and why, in words a user can check.

At the cursor, the generated text ends with what the parser holds back: a
half-typed marker (``<tool_c`` might become ``<tool_call>``), JSON punctuation
between values, a call whose name is not complete, a Qwen3-Coder value whose
type the tools do not declare (it must be seen whole). Where it begins comes
from the parse events (:meth:`~.text_spans.TextSpans.held`); the reason is read
from the parse at the cursor and from the format's markers, which only explain
the hold, never decide it.
"""

from __future__ import annotations

from dataclasses import dataclass

from callscope.engine.core.parse_model import Parse

#: Held text longer than this is shown by its ends (a held value can be long).
SHOWN_CHARS = 80


@dataclass(frozen=True, slots=True)
class HeldText:
    """Characters ``[start, end)`` of the generated text held back at one step, and why."""

    start: int
    end: int
    text: str
    reason: str

    @property
    def shown(self) -> str:
        """The held text for a one-line display: its ends when it is long."""
        if len(self.text) <= SHOWN_CHARS:
            return self.text
        half = SHOWN_CHARS // 2
        return f"{self.text[:half]}…{self.text[-half:]}"


def _marker_prefix(text: str, markers: tuple[str, ...]) -> str | None:
    """The marker whose beginning ``text`` ends with (a half-typed marker), longest first."""
    for marker in sorted(markers, key=len, reverse=True):
        for size in range(min(len(marker) - 1, len(text)), 0, -1):
            if text.endswith(marker[:size]):
                return marker
    return None


def _pending_key(arguments: str) -> str | None:
    """``n`` when the arguments end with a key waiting for its value (``{"s":"x","n":``)."""
    body = arguments.rstrip()
    if not body.endswith(":"):
        return None
    head = body[:-1].rstrip()
    if not head.endswith('"'):
        return None
    start = head.rfind('"', 0, len(head) - 1)
    return head[start + 1 : -1] if start >= 0 else None


def explain(text: str, parse: Parse, markers: tuple[str, ...], ended: str | None = None) -> str:
    """Why ``text`` is held at a step whose parse is ``parse``; ``ended``: the stream was cut (cancelled, error)."""
    if ended is not None:
        return f"the stream was {ended} while this was held back: it never went out"
    for index, call in enumerate(parse.calls):
        if call.name is None:
            later = len(parse.calls) - index - 1
            tail = f", and holds back {later} later call{'s' if later != 1 else ''}" if later else ""
            return f"call {index}'s name is not complete: its header waits for the whole name{tail}"
    if parse.calls:
        key = _pending_key(parse.calls[-1].arguments)
        if key is not None and text.strip():
            return (f"the value of {key!r} is held until it is complete: the tools do not say its type, "
                    "so it cannot be streamed as it is written")
    marker = _marker_prefix(text, markers)
    if marker is not None and not text.endswith(marker):
        return f"may be the start of {marker}: a half-typed marker is held until the next text decides"
    for candidate in sorted(markers, key=len, reverse=True):
        if text.rstrip().endswith(candidate):
            return f"{candidate} is held until what follows it decides what it is"
    found = [(text.rfind(m), m) for m in markers if m in text]
    if found:
        at, marker = max(found, key=lambda f: (f[0], len(f[1])))
        if text[at + len(marker):].strip():
            return (f"what follows {marker} is held until the parser knows what it is: a call goes out "
                    "once its name is complete")
    if not text.strip():
        return "whitespace: layout, or part of what comes next; the next text decides"
    return "read by the parser; nothing has come of it yet (markup or JSON punctuation between values)"
