"""Bulk loading without the cyclic garbage collector rescanning what was just built.

Loading and analysing a 100,000-step trace allocates a few hundred thousand
small, acyclic objects (steps, parse events, chunks) that all stay alive. With
the cyclic collector running, every full collection rescans all of them, which
made load + analysis grow faster than the step count (about 25% of the time at
100k steps in ``callscope bench replay``). Reference counting still frees
everything as usual while the collector is paused; cycles, if any, are
collected once it resumes.
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
