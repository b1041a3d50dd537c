"""The one lifecycle of a live source in the window: show at once, grow per frame, end or fail.

A live model run and a server capture differ only in where their items come
from (a decode thread, an async HTTP client) and in what analyses them; once
an item is here, the rest is the same, so it lives here once:

1. :meth:`LiveController._begin`: remember the view to put back, reset, ``started``;
2. :meth:`LiveController._show_live`: the panes switch to the analyzer's
   :meth:`~callscope.engine.analysis.live.LiveAnalysis.provisional` analysis, empty and growing;
3. :meth:`LiveController._received`: items are only queued (the source may be
   between two reads, or on another thread's signal); at most once per frame
   :meth:`LiveController._flush` feeds them for at most :data:`FEED_BUDGET_S`,
   refreshes the analysis and grows the session, so a burst never freezes the window;
4. :meth:`LiveController._conclude`: the source's final analysis replaces the
   growing one, as a source of its own (Save, policy switch), then ``ended``;
5. :meth:`LiveController._fail`: what arrived stays on screen, finished as an
   ``error`` stream; if nothing arrived the previous view comes back; then ``failed``.

Subclasses start and stop their source and say how far along it is
(:meth:`LiveController._progress_text`). Every signal here is emitted on the
GUI thread, by a GUI-thread object: a worker's signals must be connected to a
subclass's methods, never to a lambda (that would run on the worker thread).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QEventLoop, QObject, QTimer, Signal

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.analysis.live import LiveAnalysis
from callscope.engine.core.bulk import FullCollectionHold
from callscope.engine.inspector.sources import AnalysisSource
from callscope.models.session import InspectorSession
from callscope.ui.frame_throttle import FrameThrottle

#: Seconds of analysis per frame; a burst faster than that is spread over several frames. Indexing what was
#: fed and redrawing the panes cost about as much again, so this is a quarter of a 60 Hz frame.
FEED_BUDGET_S = 0.0025
#: Items fed between two looks at the clock (reading it per item would cost more than most items).
_CLOCK_EVERY = 64

Item = TypeVar("Item")


def wait_for_task(task: Any, timeout_ms: int) -> None:
    """Let an asyncio task on the qasync loop finish, for at most ``timeout_ms``: a local event loop runs
    meanwhile (it also drives the qasync loop), so a source closing at window close can unwind."""
    if task is None or task.done() or timeout_ms <= 0:
        return
    waiter = QEventLoop()
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.timeout.connect(waiter.quit)
    task.add_done_callback(lambda _t: waiter.quit())
    deadline.start(timeout_ms)
    if not task.done():
        waiter.exec()
    deadline.stop()


class LiveController(QObject, Generic[Item]):
    """One live source at a time, filling the session's panes as it arrives (see the module doc)."""

    started = Signal()
    phaseChanged = Signal(str)  # what the source is doing ("loading model…", "capturing URL…")
    progress = Signal(str)  # how far along it is, one status-bar line
    ended = Signal(object)  # the final Analysis
    failed = Signal(str)  # why it ended early; what arrived stays shown

    #: What the window calls this source: "run failed", "A run is in progress".
    kind = "live source"
    #: How the refusal to open another source names it: "Stop the live run before ...".
    noun = "live source"

    def __init__(self, session: InspectorSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.analyzer: LiveAnalysis[Item] | None = None
        #: The growing analysis while live, then the final one (Save finds its recording by it).
        self.analysis: Analysis | None = None
        self.tools: list[dict[str, Any]] | None = None
        self.record_dir = Path(tempfile.mkdtemp(prefix=f"callscope-{self.kind}s-"))
        self.record_path: str | None = None
        self.received = 0  # items queued since the start
        self._count = 0
        self._running = False
        self._pending: list[Item] = []
        self._before: tuple | None = None
        self._feed = FrameThrottle(self._flush, parent=self)
        self._gc_hold = FullCollectionHold()  # no full GC pause while the stream grows (see callscope.engine.core.bulk)
        # The next feed waits for the panes to have drawn this one: analysis and redraw never share a turn.
        session.growthShown.connect(self._after_growth)
        # The status line's count changes in the turn the transport and the cursor's panes change in.
        session.cursorChanged.connect(self._cursor_shown)

    @property
    def running(self) -> bool:
        return self._running

    def stop(self) -> None:
        """Ask the source to end; it ends through :meth:`_conclude` (cancelled) soon after."""
        raise NotImplementedError

    def shutdown(self) -> bool:
        """Window closing: stop and wait (bounded) for the source to let go; True if it did."""
        raise NotImplementedError

    def _progress_text(self) -> str:
        """One line for the status bar: how much arrived, how fast."""
        raise NotImplementedError

    # ------------------------------------------------------------ lifecycle (for subclasses)

    def _begin(self, tools: list[dict[str, Any]] | None = None) -> None:
        """A new stream starts: keep the view to put back if nothing arrives, forget the last one."""
        self._before = self.session.snapshot()
        self.analyzer = None
        self.analysis = None
        self.tools = tools
        self.received = 0
        self._pending.clear()
        self._running = True
        self._gc_hold.hold()
        self.started.emit()

    def _next_recording(self) -> str:
        """Where this stream is recorded (every live stream is: Save and replay need the bytes)."""
        self._count += 1
        self.record_path = str(self.record_dir / f"{self.kind}-{self._count}.jsonl")
        return self.record_path

    def _show_live(self, analyzer: LiveAnalysis[Item]) -> None:
        """The panes switch to the new stream at once, empty and growing."""
        self.analyzer = analyzer
        self.analysis = analyzer.provisional()
        self.session.show_analysis(self.analysis, source=None)

    def _received(self, items: list[Item]) -> None:
        """Queue what arrived; it is analysed on the next frame, never while the source waits."""
        self._pending.extend(items)
        self.received += len(items)
        self._feed.request()

    def _flush(self) -> None:
        """Feed queued items for at most :data:`FEED_BUDGET_S`; the rest waits a frame."""
        analyzer, analysis = self.analyzer, self.analysis
        if analyzer is None or analysis is None or not self._pending:
            return
        feed = analyzer.feed
        deadline = time.perf_counter() + FEED_BUDGET_S
        done = 0
        for item in self._pending:
            feed(item)
            done += 1
            if done % _CLOCK_EVERY == 0 and time.perf_counter() > deadline:
                break
        del self._pending[:done]
        analyzer.refresh(analysis)
        self.session.grow()
        if self._pending and not self.session.growth_pending:
            self._feed.request()  # nothing to draw (no stream shown): feed on
        if not self.session.growth_pending:
            self.progress.emit(self._progress_text())  # else with the cursor's panes (_cursor_shown)

    def _cursor_shown(self, _index: int) -> None:
        if self.received and self.analysis is not None and self.analysis.running and self.session.state is not None \
                and self.session.state.analysis is self.analysis:
            self.progress.emit(self._progress_text())

    def _after_growth(self) -> None:
        """The panes were told about the last feed: the rest of a burst is fed on a later turn.

        Feeding and redrawing in the same event-loop turn would add their costs into one stall;
        alternating them keeps each turn to one of the two.
        """
        if self._pending and self.analyzer is not None:
            self._feed.request(at_least_ms=1)  # a millisecond's gap: input queued meanwhile goes first

    def drain(self) -> None:
        """Analyse every queued item now (the stream failed, or a test wants the final state)."""
        while self._pending and self.analyzer is not None:
            self._flush()
        self._feed.flush()
        if self.analyzer is not None:
            self.progress.emit(self._progress_text())

    def _conclude(self, final: Analysis, label: str) -> None:
        """The stream ended: its final analysis replaces the growing one, as a source of its own."""
        parked = self._parked_step()
        self._settle()
        self.analysis = final
        self.session.open(AnalysisSource([final], self.tools, label=label), final.source.policy, keep_step=parked)
        self.progress.emit(self._progress_text())
        self.ended.emit(final)

    def _fail(self, message: str) -> None:
        """The stream broke off: keep what arrived (finished as ``error``), or put the old view back."""
        if self.analysis is not None and self.analysis.running:
            self.drain()
            if self.analyzer is not None and self.analyzer.steps:
                final = self.analyzer.finish("error")
                self._conclude(final, f"failed {self.kind} · {final.name}")
        self._settle()
        if self._shows_nothing():
            self.session.restore(self._before)
        self._before = None
        self.failed.emit(message)

    def _parked_step(self) -> int | None:
        """The step the user parked the cursor at while this stream grew (None: it was following the end)."""
        state = self.session.state
        if state is None or self.analysis is None or state.analysis is not self.analysis or state.cursor >= state.last:
            return None
        return state.cursor_step

    def _settle(self) -> None:
        self._feed.cancel()
        self._pending.clear()
        self._running = False
        self._gc_hold.release()

    def _shows_nothing(self) -> bool:
        """The panes show this stream and it has no step: nothing worth keeping on screen."""
        state = self.session.state
        return (
            self.analysis is not None
            and state is not None
            and state.analysis is self.analysis
            and not self.analysis.steps
        )
