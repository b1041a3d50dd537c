"""Coalescing hand-off of tokens from a decode thread to the GUI thread.

A producer faster than the GUI would queue one signal per token, and Qt
delivers every queued signal in one pass: 10,000 tokens at once is a 250 ms
freeze. The worker instead pushes tokens here and emits a "tokens ready"
signal only when none is in flight; the GUI takes everything buffered in one
go. At most one notification is ever queued, whatever the token rate.
"""

from __future__ import annotations

import threading


class TokenBuffer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[tuple[bytes, float, int]] = []
        self._notified = False
        self.pushed = 0

    def push(self, data: bytes, ms: float, token: int) -> bool:
        """Add one token; True when the caller should notify the GUI (no notification in flight)."""
        with self._lock:
            self._items.append((data, ms, token))
            self.pushed += 1
            if self._notified:
                return False
            self._notified = True
            return True

    def take(self) -> list[tuple[bytes, float, int]]:
        """Everything buffered so far (GUI thread); the next push notifies again."""
        with self._lock:
            items, self._items = self._items, []
            self._notified = False
            return items

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._notified = False
            self.pushed = 0
