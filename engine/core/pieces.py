"""Text that grows by appends, kept as a list of pieces and joined only when read.

Streams grow a few characters at a time; joining the whole text on every append
would make a 400 KB tool call quadratic. Everything that accumulates streamed
text (parsed arguments, what a policy sent, what a capture client assembled)
appends pieces and reads through :func:`joined`, which collapses the list in
place so the next read is free and later appends start a new run.
"""

from __future__ import annotations


def joined(pieces: list[str]) -> str:
    """The text of ``pieces``; collapses them to one piece in place (amortised linear over a stream)."""
    if len(pieces) > 1:
        pieces[:] = ["".join(pieces)]
    return pieces[0] if pieces else ""
