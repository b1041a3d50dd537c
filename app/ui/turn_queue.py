"""Work that runs one piece per event-loop turn, in the order it was asked for.

Qt repaints what a turn changed right after the turn, so a turn costs its
updates plus their repaint, and nothing else (a click, a key) is handled until
both are done. A live frame touches every pane; done in one turn it was one
20-30 ms stall at full speed. Split into stages queued here (the cursor's
panes, the deltas table's new rows, the timeline widening its range) each turn
is one stage and its repaint, and input is handled between them. ``flush()``
runs whatever is queued at once (tests, screenshots, benchmarks).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


class Stage:
    """One queued piece of work; :meth:`request` queues it once (asking again before it ran changes nothing)."""

    def __init__(self, queue: TurnQueue, callback: Callable[[], None]) -> None:
        self._queue = queue
        self._callback = callback
        self.ran = 0  # times it ran (tests)

    @property
    def pending(self) -> bool:
        return self in self._queue._queue

    def request(self) -> None:
        self._queue._enqueue(self)

    def cancel(self) -> None:
        self._queue._remove(self)

    def flush(self) -> None:
        """Run now if queued."""
        if self.pending:
            self._queue._remove(self)
            self._run()

    def _run(self) -> None:
        self.ran += 1
        self._callback()


class TurnQueue(QObject):
    """Stages run one per event-loop turn; ``on_empty`` is called when the last queued one has run."""

    def __init__(self, on_empty: Callable[[], None] | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._queue: list[Stage] = []
        self._on_empty = on_empty
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._run_one)

    def stage(self, callback: Callable[[], None]) -> Stage:
        return Stage(self, callback)

    @property
    def pending(self) -> bool:
        return bool(self._queue)

    def _enqueue(self, stage: Stage) -> None:
        if stage not in self._queue:
            self._queue.append(stage)
        if not self._timer.isActive():
            self._timer.start()

    def _remove(self, stage: Stage) -> None:
        if stage in self._queue:
            self._queue.remove(stage)

    def _run_one(self) -> None:
        if self._queue:
            self._queue.pop(0)._run()
        if self._queue:
            self._timer.start()  # the next stage on the next turn, after this one's repaint
        elif self._on_empty is not None:
            self._on_empty()

    def flush(self) -> None:
        """Run every queued stage now, in order (including any they queue)."""
        ran = False
        while self._queue:
            self._queue.pop(0)._run()
            ran = True
        self._timer.stop()
        if ran and self._on_empty is not None:
            self._on_empty()

    def clear(self) -> None:
        self._queue.clear()
        self._timer.stop()
