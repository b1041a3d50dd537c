"""The one object every pane listens to: which analysis is shown, where the cursor is.

It adapts :class:`callscope.engine.inspector.state.InspectorState` to Qt signals. State
changes (cursor, hover, a live run growing) are cheap and frequent; the
signals that make panes redraw go out at most once per frame through
:class:`FrameThrottle`. Loading never replaces the current view until the new
analyses exist, so a failed load keeps what was on screen.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.inspector.sources import Source, SourceError
from callscope.engine.inspector.state import CursorView, InspectorState
from callscope.engine.policies import POLICY_IDS
from callscope.ui.frame_throttle import FrameThrottle
from callscope.ui.turn_queue import Stage, TurnQueue


class InspectorSession(QObject):
    #: A different analysis is shown (new source, other run, other policy): panes rebuild.
    analysisChanged = Signal()
    #: The cursor moved (throttled to one per frame): panes redraw at :meth:`view`.
    cursorChanged = Signal(int)
    #: The hover preview moved (throttled): the timeline shows it, nothing else moves.
    hoverChanged = Signal(int)
    #: A live run grew (throttled): panes append what is new.
    grew = Signal(str)
    #: A growth has reached every pane (``grew``, then ``cursorChanged`` and the panes' own stages, each on a
    #: later turn): a live feed may go on.
    growthShown = Signal()
    #: A chunk was picked in the deltas table: the text pane highlights what produced it.
    chunkPicked = Signal(int)
    #: The shown stream's bookmarks changed (the timeline draws them).
    bookmarksChanged = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state: InspectorState | None = None
        self.source: Source | None = None
        self.analyses: list[Analysis] = []
        self.run_index = 0
        #: The policy the next source is analysed under: the user's choice. A capture's "server" (what a
        #: live server did is no policy of ours) is shown by its analysis but never becomes this.
        self.policy = "incremental"
        self._redraw = FrameThrottle(self._emit_cursor, parent=self)
        self._hover = FrameThrottle(self._emit_hover, parent=self)
        self._growth = FrameThrottle(self._emit_growth, parent=self)
        # A growth's later parts, one per event-loop turn: the cursor's panes, then panes' own stages (later()).
        self._turns = TurnQueue(self._stage_done, parent=self)
        self._growth_cursor = self._turns.stage(self._emit_growth_cursor)
        self._grown_text: list[str] = []
        self._shown_due = False  # a growth went out: growthShown follows once its last turn is done

    # ------------------------------------------------------------ loading

    def open(self, source: Source, policy: str | None = None, run: str | None = None,
             keep_step: int | None = None) -> None:
        """Analyse ``source`` and show it; raises :class:`SourceError` leaving the current view as it was.

        ``keep_step``: put the cursor there (a finished live run the user had parked the cursor in).
        """
        policy = policy or self.policy
        analyses = source.analyses(policy)
        if not analyses:
            raise SourceError(f"{source.label}: nothing to show")
        index = 0
        if run is not None:
            names = [a.name for a in analyses]
            index = names.index(run) if run in names else 0
        self.source, self.analyses = source, analyses
        self._choose(policy)
        self._show(index, keep_step=keep_step)

    def _choose(self, policy: str) -> None:
        """Remember ``policy`` for the next source, if it is one of ours (not a capture's "server")."""
        if policy in POLICY_IDS:
            self.policy = policy

    def set_policy(self, policy: str) -> None:
        """Re-analyse the current source under ``policy``, keeping the cursor's step."""
        if self.source is None or policy == self.policy:
            return
        step = self.state.cursor_step if self.state else None
        name = self.current.name if self.state else None
        analyses = self.source.analyses(policy)
        self.analyses, self.policy = analyses, policy
        names = [a.name for a in analyses]
        self._show(names.index(name) if name in names else 0, keep_step=step)

    def select_run(self, index: int) -> None:
        if 0 <= index < len(self.analyses) and (index != self.run_index or self.state is None):
            self._show(index, keep_step=None)

    def show_analysis(self, analysis: Analysis, source: Source | None = None) -> None:
        """Show an analysis built elsewhere (a live run), possibly still growing."""
        self.source = source
        self.analyses = [analysis]
        self._choose(analysis.source.policy)
        self._show(0, keep_step=None, at_end=True)

    def snapshot(self) -> tuple | None:
        """What is shown now, for :meth:`restore` (a capture that failed before receiving anything)."""
        if self.state is None:
            return None
        return (self.source, list(self.analyses), self.run_index, self.policy, self.state.cursor_step)

    def restore(self, snapshot: tuple | None) -> None:
        """Show a :meth:`snapshot` again, cursor at the same step (nothing is re-analysed)."""
        if snapshot is None:
            return
        self.source, analyses, index, policy, step = snapshot
        self.analyses = analyses
        self._choose(policy)
        self._show(index, keep_step=step)

    def _show(self, index: int, keep_step: int | None, at_end: bool = False) -> None:
        self._redraw.cancel()
        self._hover.cancel()
        self._growth.cancel()
        self._turns.clear()
        self._shown_due = False
        self._grown_text.clear()
        self.run_index = index
        self.state = InspectorState(self.analyses[index])
        self.state.subscribe(self._on_state)
        if keep_step is not None:
            self.state.cursor = self.state.timebase.index_of_step(keep_step)
        elif at_end or not self.state.live:
            self.state.cursor = self.state.last
        self.analysisChanged.emit()
        self.cursorChanged.emit(self.state.cursor)

    @property
    def current(self) -> Analysis:
        assert self.state is not None
        return self.state.analysis

    # ------------------------------------------------------------ live growth

    def grow(self, redraw_now: bool = False) -> None:
        """The shown (live) analysis gained steps: index them; panes hear about it once per frame.

        ``redraw_now``: the caller is itself throttled to a frame (a live controller's
        feed), so panes are told at once, in the same event-loop turn as the analysis.
        """
        if self.state is None:
            return
        follow = self.state.cursor >= self.state.last
        text = self.state.sync()
        if text:
            self._grown_text.append(text)
        if follow:
            self.state.cursor = self.state.last
        self._growth.request()
        if redraw_now:
            self._growth.flush()

    @property
    def growth_pending(self) -> bool:
        """Live growth is waiting for its frame (``grew``, its ``cursorChanged`` or a pane's later stage follows)."""
        return self._growth.pending or self._turns.pending

    def _emit_growth(self) -> None:
        """A growth reaches the panes over several event-loop turns: ``grew`` now, ``cursorChanged`` on a later one.

        Qt repaints what a turn changed right after it, so a turn costs its panes' updates plus their
        repaint (see :mod:`callscope.ui.turn_queue`). ``grew`` moves the lanes and appends text;
        ``cursorChanged`` re-renders the panes that show the cursor's step; panes queue their heavy parts
        as stages of their own (:meth:`later`). Sent together they made one 20-30 ms turn at full speed;
        apart, each is a few ms, and input (a click on Stop) is handled between them.
        """
        text = "".join(self._grown_text)
        self._grown_text.clear()
        self._shown_due = True
        self.grew.emit(text)
        self._growth_cursor.request()

    def _emit_growth_cursor(self) -> None:
        if self.state is not None:
            self.cursorChanged.emit(self.state.cursor)

    def _stage_done(self) -> None:
        """The last queued stage has run: if a growth went out, it has reached every pane (``growthShown``)."""
        if self._shown_due and not self.growth_pending:
            self._shown_due = False
            self.growthShown.emit()

    # ------------------------------------------------------------ cursor

    def _on_state(self, what: str) -> None:
        if what == "cursor":
            self._redraw.request()
        elif what == "bookmarks":
            self.bookmarksChanged.emit()
        else:
            self._hover.request()

    def _emit_cursor(self) -> None:
        if self.state is not None:
            self.cursorChanged.emit(self.state.cursor)

    def _emit_hover(self) -> None:
        if self.state is not None:
            self.hoverChanged.emit(-1 if self.state.hover is None else self.state.hover)

    def refresh(self) -> None:
        """Every pane draws the shown analysis again (the theme changed); nothing is re-analysed."""
        if self.state is None:
            return
        self.analysisChanged.emit()
        self.cursorChanged.emit(self.state.cursor)

    def later(self, callback: Callable[[], None]) -> Stage:
        """A pane's own stage: ``request()`` it and it runs on a turn of its own, after the stages queued before it.

        For a pane whose update and repaint would make one live turn too long: it does the cheap part now and
        the rest on its own turn (the deltas table's new rows, the timeline widening its range).
        :meth:`flush` runs it too.
        """
        return self._turns.stage(callback)

    def flush(self) -> None:
        """Deliver pending redraws now (tests, benchmarks, screenshots)."""
        self._growth.flush()
        self._turns.flush()
        self._redraw.flush()
        self._hover.flush()
        self._turns.flush()  # what the cursor redraw queued

    def view(self) -> CursorView | None:
        return self.state.view() if self.state is not None else None

    def pick_chunk(self, number: int) -> None:
        """A chunk was selected: move the cursor to its step and tell the text pane."""
        if self.state is None or not 0 <= number < len(self.current.chunks):
            return
        self.state.set_cursor_step(self.current.chunks[number].step)
        self.flush()
        self.chunkPicked.emit(number)

    @property
    def redraws(self) -> int:
        """Throttled redraw signals sent so far (cursor moves and live growth)."""
        return self._redraw.fired + self._growth.fired
