"""The timeline: lanes of tokens, parse events, emitted chunks, the atomic baseline and violations.

x is milliseconds (or the step number when the source is untimed). One
cursor line that every pane follows: clicking or dragging anywhere in the plot
moves it (scrubbing); Shift+drag or the middle button pans, the wheel zooms,
never past the data; a zoomed view follows the cursor (playback, stepping).
Hovering shows a dashed line and a preview of that position without moving the
cursor. Right-click (or View) fits the whole stream or zooms around the cursor.
Bookmarks are flags on the plot. Dense kinds (tokens, argument fragments,
content) are drawn as tick lines, a settled item and a growing tail per kind
(:mod:`callscope.panes.tick_marks`), so 20,000 tokens cost two items and a live
frame repaints only where the stream grew.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPoint, QPointF, Qt, Signal
from PySide6.QtGui import QAction, QFontMetrics
from PySide6.QtWidgets import QGraphicsItem, QLabel, QMenu, QVBoxLayout, QWidget

from callscope.engine.inspector.lanes import ATOMIC, PARSE, TOKENS, VIOLATIONS, WIRE
from callscope.models.session import InspectorSession
from callscope.panes.tick_marks import GrowingBar, TickMarks, ViewSpan, cache_item
from callscope.panes.timeline_grid import GridLines
from callscope.ui import theme

#: The lane-label axis is at least this wide (px), and wider when a lane's title needs it.
LANE_AXIS_MIN_WIDTH = 118
LANE_Y = {TOKENS: 4.0, PARSE: 3.0, WIRE: 2.0, ATOMIC: 1.0, VIOLATIONS: 0.0}
#: The plot's least height (px): five lanes whose titles never overlap, and the time axis. A dock or a small
#: window takes its room from the panes below, never squeezes the lanes into each other.
PLOT_MIN_HEIGHT = 130
#: How far above its lane (in lane heights) a finish star is drawn.
FINISH_LIFT = 0.32
#: Padding either side of the stream when fitted, and how far panning may go past it (fraction of the span).
FIT_PAD = 0.02
#: "Zoom to cursor" shows this fraction of the stream around the cursor.
ZOOM_FRACTION = 0.1
#: A followed cursor is kept this far inside the view's edges (fraction of the view).
FOLLOW_MARGIN = 0.08
#: A live view reaches this far past the stream (times its span): the range doubles when the stream fills it, so a
#: 20,000-token run changes it a dozen times, not every frame (each change repaints the whole plot).
LIVE_HEADROOM = 2.0
#: x span shown for a timed stream before its first step (prompt evaluation): one second, not ±0.5 ms.
EMPTY_SPAN_MS = 1000.0
#: kind -> (symbol or None for a tick line, size, colour) per lane
TICK_KINDS = {"token", "content", "reasoning", "arguments"}
SYMBOLS = {
    "role": ("o", 7),
    "header": ("s", 11),
    "finish": ("star", 14),
    "call opened": ("t1", 11),
    "name complete": ("d", 11),
    "revised": ("h", 11),  # its own glyph: a star on the wire lanes means "finish"
    "failed": ("x", 12),
    "violation": ("x", 14),
}


def _color(lane: str, kind: str) -> str:
    if lane == TOKENS:
        return theme.TOKEN_COLOR
    if lane == PARSE:
        return theme.PARSE_COLORS.get(kind, theme.TEXT)
    if lane == ATOMIC:
        return theme.ATOMIC_COLOR if kind != "finish" else theme.CHUNK_COLORS["finish"]
    if lane == VIOLATIONS:
        return theme.VIOLATION_COLOR
    return theme.CHUNK_COLORS.get(kind, theme.TEXT)


def _legend_html() -> str:
    def swatch(color: str, label: str, glyph: str = "■") -> str:
        return f'<span style="color:{color}">{glyph}</span>&nbsp;{label}'

    items = [
        swatch(theme.CHUNK_COLORS["header"], "header", "■"),
        swatch(theme.CHUNK_COLORS["arguments"], "arguments", "┃"),
        swatch(theme.CHUNK_COLORS["content"], "content", "┃"),
        swatch(theme.CHUNK_COLORS["reasoning"], "reasoning", "┃"),
        swatch(theme.CHUNK_COLORS["finish"], "finish", "★"),
        swatch(theme.PARSE_COLORS["call opened"], "call opened", "▲"),
        swatch(theme.PARSE_COLORS["name complete"], "name complete", "◆"),
        swatch(theme.PARSE_COLORS["revised"], "revision", "⬢"),
        swatch(theme.ATOMIC_COLOR, "atomic emission", "■"),
        swatch(theme.VIOLATION_COLOR, "violation", "✕"),
    ]
    return f'<span style="color:{theme.AXIS_TEXT}">' + "&nbsp;&nbsp;&nbsp;".join(items) + "</span>"


class TimelineViewBox(pg.ViewBox):
    """Left-drag scrubs the cursor (what the hint promises); Shift+drag or the middle button pans; the
    right button opens the timeline's own menu instead of pyqtgraph's."""

    scrubbed = Signal(float)
    menuRequested = Signal(QPoint)

    def mouseDragEvent(self, ev, axis=None) -> None:
        panning = ev.button() == Qt.MouseButton.MiddleButton or (
            ev.button() == Qt.MouseButton.LeftButton and ev.modifiers() & Qt.KeyboardModifier.ShiftModifier)
        if panning:
            super().mouseDragEvent(ev, axis)  # pyqtgraph pans on left and middle drags
            return
        ev.accept()
        if ev.button() == Qt.MouseButton.LeftButton:
            self.scrubbed.emit(self.mapSceneToView(ev.scenePos()).x())

    def raiseContextMenu(self, ev) -> None:
        self.menuRequested.emit(ev.screenPos().toPoint())


class TimelinePlot(pg.PlotWidget):
    """The plot itself; :class:`TimelineView` adds the legend row."""

    hoveredX = Signal(float)
    left = Signal()

    def __init__(self, **kwargs) -> None:
        super().__init__(viewBox=TimelineViewBox(), **kwargs)
        self.setObjectName("Timeline")

    def leaveEvent(self, event) -> None:
        self.left.emit()
        super().leaveEvent(event)


class TimelineView(QWidget):
    def __init__(self, session: InspectorSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        self.legend = QLabel(_legend_html())
        self.legend.setObjectName("Caption")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.legend)
        self.plot = TimelinePlot()
        self.plot.setMinimumHeight(PLOT_MIN_HEIGHT)
        layout.addWidget(self.plot, 1)
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False, enableViewBoxMenu=True)  # right-click: our menu (TimelineViewBox)
        item.hideButtons()
        self.grid = GridLines(item, -0.8, 4.8)  # not the axis's own grid: see timeline_grid
        item.setMouseEnabled(x=True, y=False)
        item.getViewBox().setLimits(yMin=-0.8, yMax=4.8)
        item.setYRange(-0.6, 4.6, padding=0)
        item.getAxis("left").setWidth(LANE_AXIS_MIN_WIDTH)
        item.getAxis("left").setStyle(tickLength=0)
        item.getAxis("bottom").enableAutoSIPrefix(False)  # "time (ms)", never "time (ms) (x0.001)"
        # Major and minor ticks only: a third level is unreadable at this width and cost ~1 ms per range change.
        item.getAxis("bottom").setStyle(maxTickLevel=1)
        _cache_axes(item)
        self._items: list[pg.GraphicsObject] = []  # annotations, redrawn whole (a finished stream's few labels)
        self._call_items: dict[int, tuple[GrowingBar, pg.TextItem | None]] = {}  # per call: its bar, its label
        self._arrays: dict[tuple[str, str], np.ndarray] = {}  # each series' xs as an array, grown in place
        self._drawn_counts: dict[tuple[str, str], int] = {}  # marks each series' item holds
        self._user_range = False  # the user zoomed or panned: live growth no longer refits the view
        self._series: dict[tuple[str, str], pg.ScatterPlotItem] = {}  # one item per (lane, kind) of glyphs
        self._series_pool: dict[tuple[str, str], pg.ScatterPlotItem] = {}  # emptied ones, kept for the next stream
        self._ticks: dict[tuple[str, str], TickMarks] = {}  # one per (lane, kind) of dense ticks
        self._tick_pool: dict[tuple[str, str], TickMarks] = {}  # emptied ones, kept for the next stream
        self.cursor_line = pg.InfiniteLine(angle=90, movable=True)
        self.cursor_line.setZValue(50)
        self.hover_line = pg.InfiniteLine(angle=90, movable=False)
        self.hover_line.setZValue(40)
        self.hover_label = pg.TextItem("", anchor=(0, 0))
        self.hover_label.setZValue(60)
        for extra in (self.cursor_line, self.hover_line, self.hover_label):
            item.addItem(extra, ignoreBounds=True)
        self.hover_line.hide()
        self.hover_label.hide()
        self._placing = False
        self.cursor_line.sigPositionChanged.connect(self._cursor_dragged)
        self.plot.scene().sigMouseMoved.connect(self._mouse_moved)
        self.plot.scene().sigMouseClicked.connect(self._mouse_clicked)
        self.plot.left.connect(self._mouse_left)
        vb = self.plot.getPlotItem().getViewBox()
        vb.sigXRangeChanged.connect(lambda *_: self._refresh_ticks())
        vb.sigResized.connect(lambda *_: self._refresh_ticks())  # as many ticks and grid lines as pixels allow
        vb.scrubbed.connect(self._scrubbed)
        vb.sigRangeChangedManually.connect(self._manual_range)  # the wheel, a Shift-drag
        vb.menuRequested.connect(self._show_menu)
        self._bookmark_lines: list[pg.InfiniteLine] = []
        #: Window actions the right-click menu offers too (bookmark, next violation...), set by the window.
        self.extra_actions: list[QAction] = []
        self.fit_action = QAction("Fit the whole stream", self)
        self.fit_action.triggered.connect(self.fit)
        self.zoom_action = QAction("Zoom to the cursor", self)
        self.zoom_action.triggered.connect(self.zoom_to_cursor)
        session.bookmarksChanged.connect(self._draw_bookmarks)
        session.analysisChanged.connect(self.rebuild)
        session.cursorChanged.connect(self.show_cursor)
        session.hoverChanged.connect(self.show_hover)
        session.grew.connect(self._grew)
        self._widen_next = session.later(self._widen)  # a full live view doubles a turn after the growth that filled it
        self.empty_label = pg.TextItem("No source: open a recording, run a model, or capture a server",
                                       color=theme.DIM, anchor=(0.5, 0.5))
        item.addItem(self.empty_label, ignoreBounds=True)
        self._style()
        self._show_empty(True)

    def _style(self) -> None:
        """Colours taken once from the theme (again after a theme switch)."""
        item = self.plot.getPlotItem()
        self.plot.setBackground(theme.PANEL)
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setPen(pg.mkPen(theme.BORDER))
            axis.setTextPen(pg.mkPen(theme.AXIS_TEXT))
        self.grid.set_color(theme.AXIS_TEXT)
        self.cursor_line.setPen(pg.mkPen(theme.CURSOR, width=2))
        self.cursor_line.setHoverPen(pg.mkPen(theme.CURSOR_HOVER, width=3))
        self.hover_line.setPen(pg.mkPen(theme.HOVER, width=1, style=Qt.PenStyle.DashLine))
        self.hover_label.setColor(theme.TEXT)
        self.hover_label.fill = pg.mkBrush(theme.qcolor(theme.HOVER_FILL, 235))
        self.empty_label.setColor(theme.DIM)
        self.legend.setText(_legend_html())

    def restyle(self) -> None:
        """The theme changed: recolour and redraw."""
        self._style()
        self._clear()
        for marks in self._tick_pool.values():  # made in the old theme's colours
            marks.remove()
        self._tick_pool.clear()
        for graphic in self._series_pool.values():
            self.plot.getPlotItem().removeItem(graphic)
        self._series_pool.clear()
        self.rebuild()
        if self.session.state is not None:
            self.show_cursor(self.session.state.cursor)

    def _show_empty(self, empty: bool) -> None:
        """Without a source the lane axes (0-4, lane numbers) mean nothing: show a line of text instead."""
        item = self.plot.getPlotItem()
        for name in ("left", "bottom"):
            item.showAxis(name, not empty)
        self.empty_label.setVisible(empty)
        self.grid.set_visible(not empty)
        if empty:
            self.empty_label.setPos(0.5, 2.0)
            item.setXRange(0, 1, padding=0)
        self.cursor_line.setVisible(not empty)

    # ------------------------------------------------------------ building

    def rebuild(self) -> None:
        self._clear()
        state = self.session.state
        self._show_empty(state is None)
        if state is None:
            return
        item = self.plot.getPlotItem()
        lanes = state.lanes
        ticks = [(LANE_Y[key], lanes[key].title) for key in LANE_Y]
        item.getAxis("left").setTicks([ticks])
        self._fit_lane_labels([title for _, title in ticks])
        item.setLabel("bottom", "time (ms)" if state.timebase.timed else f"step ({state.analysis.unit})", color=theme.AXIS_TEXT)
        self._fit_x()
        self._draw_lanes()
        self._draw_bookmarks()

    def _small_font(self):
        font = self.plot.font()
        font.setPointSizeF(max(7.0, font.pointSizeF() - 1.5))
        return font

    def _fit_lane_labels(self, titles: list[str]) -> None:
        """Widen the lane-label axis to its longest title: pyqtgraph silently drops a label that does not fit."""
        axis = self.plot.getPlotItem().getAxis("left")
        metrics = QFontMetrics(axis.style.get("tickFont") or self.plot.font())
        widest = max((metrics.horizontalAdvance(title) for title in titles), default=0)
        axis.setWidth(max(LANE_AXIS_MIN_WIDTH, widest + axis.style["tickTextOffset"][0] + 10))

    def _clear(self) -> None:
        item = self.plot.getPlotItem()
        labels = [label for _bar, label in self._call_items.values() if label is not None]
        for old in self._items + labels:
            item.removeItem(old)
        for key, graphic in self._series.items():  # emptied and kept: making them was a live frame's cost
            graphic.setData([], [])
            self._series_pool[key] = graphic
        for bar, _label in self._call_items.values():
            bar.remove()
        for key, marks in self._ticks.items():
            marks.reset()
            self._tick_pool[key] = marks
        self._call_items.clear()
        self._arrays.clear()
        self._drawn_counts.clear()
        self._items.clear()
        self._series.clear()
        self._ticks.clear()

    def _draw_lanes(self) -> None:
        """Create or update the items of each (lane, kind); call bars and labels are few and moved in place."""
        item = self.plot.getPlotItem()
        state = self.session.state
        assert state is not None
        for old in self._items:
            item.removeItem(old)
        self._items.clear()
        lanes = state.lanes
        view = self._view_span()
        labelled = len(lanes.calls) <= 24
        for span in lanes.calls.values():
            start = span.args_first_x if span.args_first_x is not None else span.opened_x
            end = span.args_last_x if span.args_last_x is not None else start
            bar, label = self._call_items.get(span.index, (None, None))
            if bar is None:  # made once per call, then moved: a live frame re-creates nothing
                color = theme.call_color(span.index)
                bar = GrowingBar(item, LANE_Y[PARSE] - 0.36, theme.qcolor(color, 170))
                if labelled:
                    label = pg.TextItem("", color=color, anchor=(0, 0.5))
                    label.setFont(self._small_font())
                    item.addItem(label)
                self._call_items[span.index] = (bar, label)
            bar.update(start, end)
            if label is not None:
                text = f"call {span.index} · {span.name or '…'}"
                if label.toPlainText() != text:
                    label.setText(text)
                label.setPos(span.opened_x, LANE_Y[PARSE] + 0.5)  # centred in the gap above the parse lane
        self._annotate_atomic()
        for key, lane in lanes.lanes.items():
            y = LANE_Y[key]
            for kind, series in lane.series.items():
                if not len(series) or self._drawn_counts.get((key, kind)) == len(series):
                    continue  # nothing new in this series since the last frame: its items stay as drawn
                xs = self._array((key, kind), series.xs)
                self._drawn_counts[(key, kind)] = len(series)
                if kind in TICK_KINDS:
                    marks = self._ticks.get((key, kind))
                    if marks is None:
                        marks = self._tick_pool.pop((key, kind), None)
                        if marks is None:  # (not `or`: an emptied TickMarks has len 0)
                            marks = TickMarks(item, y, 0.25 if key == TOKENS else 0.18, theme.qcolor(_color(key, kind), 210))
                        self._ticks[(key, kind)] = marks
                        marks.set_cached(not state.live)
                    marks.update(xs, view)
                    continue
                # the finish star sits above its lane: on the atomic lane it shares x with the emission square
                ys = np.full(len(xs), y + (FINISH_LIFT if kind == "finish" else 0.0))
                existing = self._series.get((key, kind))
                if existing is None and (key, kind) in self._series_pool:
                    existing = self._series[(key, kind)] = self._series_pool.pop((key, kind))
                if existing is not None:
                    existing.setData(xs, ys)
                    continue
                symbol, size = SYMBOLS.get(kind, ("o", 8))
                graphic = pg.ScatterPlotItem(
                    xs, ys, symbol=symbol, size=size, pen=pg.mkPen(theme.MARK_EDGE, width=1),
                    brush=pg.mkBrush(_color(key, kind)), hoverable=False,
                )
                cache_item(graphic)
                self._series[(key, kind)] = graphic
                item.addItem(graphic)

    def _array(self, key: tuple[str, str], xs: list[float]) -> np.ndarray:
        """``xs`` as an array, converting only what a live stream added since the last frame (not all of it)."""
        done = self._arrays.get(key)
        if done is None or len(done) > len(xs):
            done = np.asarray(xs, dtype=float)
        elif len(done) < len(xs):
            done = np.concatenate((done, np.asarray(xs[len(done):], dtype=float)))
        self._arrays[key] = done
        return done

    def drawn(self) -> dict[tuple[str, str], int]:
        """(lane, kind) -> how many marks the lane holds (tests, and a sanity check for live growth)."""
        counts = {key: len(graphic.getData()[0]) for key, graphic in self._series.items()}
        counts.update({key: len(marks) for key, marks in self._ticks.items()})
        return counts

    def tick_marks(self) -> dict[tuple[str, str], TickMarks]:
        """(lane, kind) -> its dense ticks (tests check what is drawn against the current view)."""
        return dict(self._ticks)

    def _view_span(self) -> ViewSpan:
        """The x range shown and the plot's width: which ticks are drawn depends on both."""
        vb = self.plot.getPlotItem().getViewBox()
        (x0, x1), _ = vb.viewRange()
        return ViewSpan(x0, x1, vb.width())

    def _refresh_ticks(self) -> None:
        """The view was zoomed, panned or widened: every lane draws its ticks for it, settled (see tick_marks)."""
        view = self._view_span()
        self.grid.update(*view)
        for marks in self._ticks.values():
            marks.refit(view)
        for bar, _label in self._call_items.values():
            bar.settle()

    def _annotate_atomic(self) -> None:
        """Say in words what the atomic lane's lone marker means."""
        state = self.session.state
        assert state is not None
        a = state.analysis
        if a.source.policy == "atomic" or a.ttfd_atomic.step is None:
            return
        x = state.timebase.x_of_step(a.ttfd_atomic.step)
        size = sum(len(c.text) for c in a.baseline_chunks if c.is_tool_call)
        when = f"{a.ttfd_atomic.ms / 1000:.1f} s" if a.ttfd_atomic.ms is not None else f"{a.unit} {a.ttfd_atomic.step}"
        label = pg.TextItem(f"all {size:,} chars at once · {when}", color=theme.ATOMIC_COLOR, anchor=(1.04, 0.5))
        label.setPos(x, LANE_Y[ATOMIC])
        self._add(label)

    def _add(self, graphics: pg.GraphicsObject) -> None:
        self.plot.getPlotItem().addItem(graphics)
        self._items.append(graphics)

    def _grew(self, _text: str) -> None:
        """A live run grew: update each lane's items; a full view is widened on the next turn (unless zoomed in).

        The range doubles when the stream fills it, not every frame: a new range repaints the axis and
        every lane. Between two changes only the lanes' tails and the cursor are repainted (see tick_marks).
        The widening waits a turn (:meth:`_widen`): with this growth's updates and the other panes' it made
        the slowest live turns; the marks past the edge are drawn once it is done, a few ms later.
        """
        if self.session.state is None:
            return
        if self._zoomed():
            self._set_limits()
        elif self._full():
            self._widen_next.request()
        self._draw_lanes()

    def _full(self) -> bool:
        """The live view has no room left for the stream (or is more than twice as wide as it)."""
        lo, hi = self._data_span()
        (_x0, x1), _ = self.plot.getPlotItem().getViewBox().viewRange()
        return hi > x1 - (hi - lo) * FIT_PAD or x1 > lo + (hi - lo) * 2

    def _widen(self) -> None:
        """Give a full live view room: it reaches :data:`LIVE_HEADROOM` times the stream's span."""
        if self.session.state is None or self._zoomed() or not self._full():
            return
        lo, hi = self._data_span()
        vb = self.plot.getPlotItem().getViewBox()
        ahead = lo + (hi - lo) * LIVE_HEADROOM
        vb.setLimits(xMin=lo - (hi - lo) * FIT_PAD, xMax=ahead)
        vb.setXRange(lo - (hi - lo) * FIT_PAD, ahead, padding=0)  # every lane settles for it (_refresh_ticks)

    def _data_span(self) -> tuple[float, float]:
        """The x range of the stream; a timed stream with no step yet spans its first second."""
        state = self.session.state
        assert state is not None
        lo, hi = state.timebase.span
        if hi <= lo:
            hi = lo + (EMPTY_SPAN_MS if state.timebase.timed else 1.0)
        return lo, hi

    def _set_limits(self) -> tuple[float, float]:
        """Panning and zooming out stop just past the data; returns the padded range."""
        lo, hi = self._data_span()
        pad = (hi - lo) * FIT_PAD
        vb = self.plot.getPlotItem().getViewBox()
        vb.setLimits(xMin=lo - pad, xMax=hi + pad)
        return lo - pad, hi + pad

    def _fit_x(self) -> None:
        """Show the whole stream (limits first, so the range is never clamped to the old ones)."""
        x0, x1 = self._set_limits()
        self.plot.getPlotItem().getViewBox().setXRange(x0, x1, padding=0)
        self._user_range = False

    def _zoomed(self) -> bool:
        """The user zoomed or panned to less than the whole stream (a live view growing ahead is not zoomed)."""
        if not self._user_range:
            return False
        (x0, x1), _ = self.plot.getPlotItem().getViewBox().viewRange()
        lo, hi = self._data_span()
        return x1 - x0 < (hi - lo) * 0.95

    def _manual_range(self, *_args) -> None:
        self._user_range = True

    def fit(self) -> None:
        """Fit the whole stream (View > Fit timeline, the context menu)."""
        if self.session.state is not None:
            self._fit_x()

    def zoom_to_cursor(self) -> None:
        """Show a tenth of the stream, centred on the cursor."""
        state = self.session.state
        if state is None:
            return
        lo, hi = self._data_span()
        half = (hi - lo) * ZOOM_FRACTION / 2
        x = state.timebase.x(state.cursor)
        self.plot.getPlotItem().getViewBox().setXRange(x - half, x + half, padding=0)
        self._user_range = True

    def zoom(self, factor: float) -> None:
        """Zoom in (factor < 1) or out around the cursor."""
        state = self.session.state
        if state is None:
            return
        vb = self.plot.getPlotItem().getViewBox()
        (x0, x1), _ = vb.viewRange()
        x = state.timebase.x(state.cursor)
        vb.setXRange(x - (x - x0) * factor, x + (x1 - x) * factor, padding=0)
        self._user_range = True

    def _follow(self, x: float) -> None:
        """Keep the cursor in a zoomed view: scroll by as much as it left the view, never more."""
        vb = self.plot.getPlotItem().getViewBox()
        (x0, x1), _ = vb.viewRange()
        margin = (x1 - x0) * FOLLOW_MARGIN
        if x0 + margin <= x <= x1 - margin or not self._zoomed():
            return
        width = x1 - x0
        start = x - margin if x < x0 + margin else x - width + margin
        vb.setXRange(start, start + width, padding=0)

    def context_menu(self) -> QMenu:
        """The right-click menu: fit, zoom to the cursor, bookmark."""
        menu = QMenu(self)
        menu.addAction(self.fit_action)
        menu.addAction(self.zoom_action)
        for action in self.extra_actions:
            menu.addAction(action)
        return menu

    def _show_menu(self, where: QPoint) -> None:
        self._menu = self.context_menu()
        self._menu.popup(where)

    def _scrubbed(self, x: float) -> None:
        if self.session.state is not None:
            self.session.state.set_cursor_x(x)

    def _draw_bookmarks(self) -> None:
        item = self.plot.getPlotItem()
        for line in self._bookmark_lines:
            item.removeItem(line)
        self._bookmark_lines.clear()
        state = self.session.state
        if state is None:
            return
        for number, step in enumerate(state.bookmarks, 1):
            line = pg.InfiniteLine(state.timebase.x_of_step(step), angle=90, movable=False,
                                   pen=pg.mkPen(theme.BOOKMARK_COLOR, width=1.5, style=Qt.PenStyle.DashDotLine),
                                   label=f"⚑{number}", labelOpts={"position": 0.97, "color": theme.BOOKMARK_COLOR})
            line.setZValue(45)
            item.addItem(line, ignoreBounds=True)
            self._bookmark_lines.append(line)

    def bookmark_xs(self) -> list[float]:
        return [line.value() for line in self._bookmark_lines]

    # ------------------------------------------------------------ cursor and hover

    def show_cursor(self, index: int) -> None:
        state = self.session.state
        if state is None:
            return
        self._placing = True
        x = state.timebase.x(index)
        try:
            self.cursor_line.setPos(x)
        finally:
            self._placing = False
        self._follow(x)

    def _cursor_dragged(self) -> None:
        if self._placing or self.session.state is None:
            return
        self.session.state.set_cursor_x(self.cursor_line.value())

    def _view_x(self, scene_pos: QPointF) -> float | None:
        vb = self.plot.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        return vb.mapSceneToView(scene_pos).x()

    def _mouse_moved(self, scene_pos: QPointF) -> None:
        state = self.session.state
        if state is None:
            return
        x = self._view_x(scene_pos)
        state.set_hover(None if x is None else state.timebase.nearest_index(x))

    def _mouse_left(self) -> None:
        if self.session.state is not None:
            self.session.state.set_hover(None)

    def _mouse_clicked(self, event) -> None:
        state = self.session.state
        if state is None or event.button() != Qt.MouseButton.LeftButton:
            return
        x = self._view_x(event.scenePos())
        if x is not None:
            state.set_cursor_x(x)

    def show_hover(self, index: int) -> None:
        state = self.session.state
        if state is None or index < 0:
            self.hover_line.hide()
            self.hover_label.hide()
            return
        x = state.timebase.x(index)
        self.hover_line.setPos(x)
        self.hover_line.show()
        text = state.preview(index)
        self.hover_label.setText(text if len(text) <= 110 else text[:109] + "…")
        (x0, x1), _ = self.plot.getPlotItem().getViewBox().viewRange()
        right_half = x > (x0 + x1) / 2
        self.hover_label.setAnchor((1, 0) if right_half else (0, 0))
        self.hover_label.setPos(x, 4.62)
        self.hover_label.show()

    def hover_text(self) -> str:
        return self.hover_label.toPlainText() if self.hover_label.isVisible() else ""


def _cache_axes(plot_item: pg.PlotItem) -> None:
    """Keep each axis (its labels and the grid it draws) as a pixmap, re-rendered only when its range changes.

    pyqtgraph replays an axis's QPicture on every repaint: ~1.6 ms per axis, most of a live frame's
    timeline repaint (6.5 -> 1.2 ms for the whole plot with the cache, ``bench gui``).
    """
    for name in ("left", "bottom"):
        plot_item.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
