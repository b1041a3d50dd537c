"""Bulk loading and live growth without the cyclic garbage collector rescanning what was just built.

Loading and analysing a 100,000-step trace allocates a few hundred thousand
small, acyclic objects (steps, parse events, chunks) that all stay alive. With
the cyclic collector running, every full collection rescans all of them, which
made load + analysis grow faster than the step count (about 25% of the time at
100k steps in ``callscope bench replay``). Reference counting still frees
everything as usual while the collector is paused; cycles, if any, are
collected once it resumes.

A live stream is the same at a slower pace, across many event-loop turns: its
analysis keeps every step, so each full collection during it rescans a larger
heap, a 35-70 ms pause in the middle of a 20,000-token run (``bench gui``).
:class:`FullCollectionHold` keeps the young generations collecting as usual
and defers only the full one until the stream ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC for the block (re-entrant; restores the previous state)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class FullCollectionHold:
    """Defers full (oldest-generation) collections while held; the young generations run as usual.

    Holds nest (a capture and a proxy turn may grow at once): the threshold is restored when the last is
    released. Python runs a full collection only when the oldest generation's count passes its threshold,
    so a threshold no count reaches defers it; cycles that reached the oldest generation meanwhile are
    collected by the first full collection after the release.
    """

    _holders = 0
    _saved: int | None = None

    def __init__(self) -> None:
        self.held = False

    def hold(self) -> None:
        if self.held:
            return
        self.held = True
        cls = type(self)
        if cls._holders == 0:
            first, second, third = gc.get_threshold()
            cls._saved = third
            gc.set_threshold(first, second, 2**31 - 1)
        cls._holders += 1

    def release(self) -> None:
        if not self.held:
            return
        self.held = False
        cls = type(self)
        cls._holders -= 1
        if cls._holders == 0 and cls._saved is not None:
            first, second, _ = gc.get_threshold()
            gc.set_threshold(first, second, cls._saved)
            cls._saved = None
