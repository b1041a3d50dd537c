"""Redraw at most once per frame however often the state changes (superqt ``qthrottled`` semantics).

The first request after a quiet period fires on the next event-loop turn
(leading edge); requests during the following ``interval_ms`` collapse into
one call at the end of it (trailing edge). A 5,000-token burst therefore costs
about one redraw per 16 ms, not 5,000.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QElapsedTimer, QObject, QTimer

FRAME_MS = 16


class FrameThrottle(QObject):
    def __init__(self, callback: Callable[[], None], interval_ms: int = FRAME_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._callback = callback
        self._interval = interval_ms
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._fire)
        self._clock = QElapsedTimer()
        self._pending = False
        self.fired = 0  # how many times the callback ran (tests, benchmarks)

    @property
    def pending(self) -> bool:
        return self._pending

    def request(self, at_least_ms: int = 0) -> None:
        """Fire on a later turn: at once if the last call was an interval ago, else when it is (and
        never sooner than ``at_least_ms``)."""
        if self._pending:
            return
        self._pending = True
        wait = at_least_ms
        if self._clock.isValid():
            wait = max(wait, self._interval - int(self._clock.elapsed()))
        self._timer.start(wait)

    def flush(self) -> None:
        """Run a pending callback now (tests, screenshots, before reading pane contents)."""
        if self._pending:
            self._timer.stop()
            self._fire()

    def cancel(self) -> None:
        self._timer.stop()
        self._pending = False

    def _fire(self) -> None:
        self._pending = False
        self._clock.restart()
        self.fired += 1
        self._callback()
