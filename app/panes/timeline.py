"""The timeline: lanes of tokens, parse events, emitted chunks, the atomic baseline and violations.

x is milliseconds (or the step number when the source is untimed). One
draggable cursor line that every pane follows; hovering shows a dashed line
and a preview of that position without moving the cursor; clicking moves the
cursor. Dense kinds (tokens, argument fragments, content) are drawn as one
tick-line item per kind so 20,000 tokens cost one item.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, Qt, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QGraphicsItem, QLabel, QVBoxLayout, QWidget

from callscope.engine.inspector.lanes import ATOMIC, PARSE, TOKENS, VIOLATIONS, WIRE
from callscope.models.session import InspectorSession
from callscope.ui import theme

#: The lane-label axis is at least this wide (px), and wider when a lane's title needs it.
LANE_AXIS_MIN_WIDTH = 118
LANE_Y = {TOKENS: 4.0, PARSE: 3.0, WIRE: 2.0, ATOMIC: 1.0, VIOLATIONS: 0.0}
#: How far above its lane (in lane heights) a finish star is drawn.
FINISH_LIFT = 0.32
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
    return '<span style="color:#9aa4b2">' + "&nbsp;&nbsp;&nbsp;".join(items) + "</span>"


class TimelinePlot(pg.PlotWidget):
    """The plot itself; :class:`TimelineView` adds the legend row."""

    hoveredX = Signal(float)
    left = Signal()

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
        self.plot = TimelinePlot(background=theme.PANEL)
        layout.addWidget(self.plot, 1)
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.showGrid(x=True, y=False, alpha=0.15)
        item.setMouseEnabled(x=True, y=False)
        item.getViewBox().setLimits(yMin=-0.8, yMax=4.8)
        item.setYRange(-0.6, 4.6, padding=0)
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setPen(pg.mkPen(theme.BORDER))
            axis.setTextPen(pg.mkPen("#9aa4b2"))
        item.getAxis("left").setWidth(LANE_AXIS_MIN_WIDTH)
        item.getAxis("left").setStyle(tickLength=0)
        self._items: list[pg.GraphicsObject] = []  # call bars and labels, redrawn whole
        self._series: dict[tuple[str, str], pg.GraphicsObject] = {}  # one item per (lane, kind)
        self._ticks_data: dict[tuple[str, str], tuple[np.ndarray, float, float]] = {}  # all ticks of a tick series
        self.cursor_line = pg.InfiniteLine(
            angle=90, movable=True, pen=pg.mkPen(theme.CURSOR, width=2), hoverPen=pg.mkPen("#ffe39a", width=3)
        )
        self.cursor_line.setZValue(50)
        self.hover_line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(theme.HOVER, width=1, style=Qt.PenStyle.DashLine))
        self.hover_line.setZValue(40)
        self.hover_label = pg.TextItem("", color=theme.TEXT, fill=pg.mkBrush(theme.qcolor("#262a32", 235)), anchor=(0, 0))
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
        self.plot.getPlotItem().getViewBox().sigXRangeChanged.connect(lambda *_: self._refresh_ticks())
        session.analysisChanged.connect(self.rebuild)
        session.cursorChanged.connect(self.show_cursor)
        session.hoverChanged.connect(self.show_hover)
        session.grew.connect(self._grew)
        self.empty_label = pg.TextItem("No source: open a recording, run a model, or capture a server",
                                       color=theme.DIM, anchor=(0.5, 0.5))
        item.addItem(self.empty_label, ignoreBounds=True)
        self._show_empty(True)

    def _show_empty(self, empty: bool) -> None:
        """Without a source the lane axes (0-4, lane numbers) mean nothing: show a line of text instead."""
        item = self.plot.getPlotItem()
        for name in ("left", "bottom"):
            item.showAxis(name, not empty)
        self.empty_label.setVisible(empty)
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
        item.setLabel("bottom", "time (ms)" if state.timebase.timed else f"step ({state.analysis.unit})", color="#9aa4b2")
        self._fit_x(0.02)
        self._draw_lanes()

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
        for old in self._items + list(self._series.values()):
            item.removeItem(old)
        self._items.clear()
        self._series.clear()
        self._ticks_data.clear()

    def _draw_lanes(self) -> None:
        """Create or update one item per (lane, kind); call bars and labels are few and redrawn whole."""
        item = self.plot.getPlotItem()
        state = self.session.state
        assert state is not None
        for old in self._items:
            item.removeItem(old)
        self._items.clear()
        lanes = state.lanes
        for span in lanes.calls.values():
            start = span.args_first_x if span.args_first_x is not None else span.opened_x
            end = span.args_last_x if span.args_last_x is not None else start
            color = theme.call_color(span.index)
            bar = pg.PlotDataItem([start, max(end, start)], [LANE_Y[PARSE] - 0.36] * 2, pen=pg.mkPen(theme.qcolor(color, 170), width=4))
            self._add(bar)
            if len(lanes.calls) <= 24:
                label = pg.TextItem(f"call {span.index} · {span.name or '…'}", color=color, anchor=(0, 0.5))
                label.setFont(self._small_font())
                label.setPos(span.opened_x, LANE_Y[PARSE] + 0.5)  # centred in the gap above the parse lane
                self._add(label)
        self._annotate_atomic()
        for key, lane in lanes.lanes.items():
            y = LANE_Y[key]
            for kind, series in lane.series.items():
                if not len(series):
                    continue
                xs = np.asarray(series.xs, dtype=float)
                existing = self._series.get((key, kind))
                if kind in TICK_KINDS:
                    height = 0.25 if key == TOKENS else 0.18
                    self._ticks_data[(key, kind)] = (xs, y, height)
                    px, py = _tick_points(self._visible_ticks(xs), y, height)
                    if existing is not None:
                        existing.setData(px, py)
                        continue
                    graphic = _ticks(px, py, _color(key, kind))
                else:
                    # the finish star sits above its lane: on the atomic lane it shares x with the emission square
                    ys = np.full(len(xs), y + (FINISH_LIFT if kind == "finish" else 0.0))
                    if existing is not None:
                        existing.setData(xs, ys)
                        continue
                    symbol, size = SYMBOLS.get(kind, ("o", 8))
                    graphic = pg.ScatterPlotItem(
                        xs, ys, symbol=symbol, size=size, pen=pg.mkPen("#101216", width=1),
                        brush=pg.mkBrush(_color(key, kind)), hoverable=False,
                    )
                    _cache(graphic)
                self._series[(key, kind)] = graphic
                item.addItem(graphic)

    def drawn(self) -> dict[tuple[str, str], int]:
        """(lane, kind) -> how many marks the lane holds (tests, and a sanity check for live growth)."""
        counts = {}
        for key, graphic in self._series.items():
            if key in self._ticks_data:
                counts[key] = len(self._ticks_data[key][0])
            else:
                counts[key] = len(graphic.getData()[0])
        return counts

    def _visible_ticks(self, xs: np.ndarray) -> np.ndarray:
        """At most one tick per pixel column of the current view (20,000 tokens draw as ~1,200 lines).

        Ticks closer than a pixel overlap on screen anyway; drawing each one made a
        live frame of a long run cost 20+ ms of painting.
        """
        vb = self.plot.getPlotItem().getViewBox()
        (x0, x1), _ = vb.viewRange()
        width = max(1.0, vb.width())
        if len(xs) <= width or x1 <= x0:
            return xs
        pixel = (x1 - x0) / width
        shown = xs[(xs >= x0 - pixel) & (xs <= x1 + pixel)]
        if len(shown) <= width:
            return shown
        _, first = np.unique(np.floor((shown - x0) / pixel), return_index=True)
        return shown[first]

    def _refresh_ticks(self) -> None:
        """The view was zoomed or panned: re-pick which ticks to draw."""
        for key, (xs, y, height) in self._ticks_data.items():
            graphic = self._series.get(key)
            if graphic is not None:
                graphic.setData(*_tick_points(self._visible_ticks(xs), y, height))

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
        """A live run grew: update each lane item's data and widen the x range."""
        if self.session.state is None:
            return
        self._fit_x(0.05)
        self._draw_lanes()

    def _fit_x(self, pad_fraction: float) -> None:
        """Show the whole stream; zooming out is limited to half its span either side (limits first)."""
        state = self.session.state
        assert state is not None
        lo, hi = state.timebase.span
        width = max(hi - lo, 1.0)
        vb = self.plot.getPlotItem().getViewBox()
        vb.setLimits(xMin=lo - width * 0.5, xMax=hi + width * 0.5)
        pad = max(0.5, width * pad_fraction)
        vb.setXRange(lo - pad, hi + pad, padding=0)

    # ------------------------------------------------------------ cursor and hover

    def show_cursor(self, index: int) -> None:
        state = self.session.state
        if state is None:
            return
        self._placing = True
        try:
            self.cursor_line.setPos(state.timebase.x(index))
        finally:
            self._placing = False

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


def _tick_points(xs: np.ndarray, y: float, height: float) -> tuple[np.ndarray, np.ndarray]:
    return np.repeat(xs, 2), np.tile(np.array([y - height, y + height]), len(xs))


def _ticks(px: np.ndarray, py: np.ndarray, color: str) -> pg.PlotDataItem:
    """Vertical tick marks: one line item drawn as point pairs (connect='pairs')."""
    return pg.PlotDataItem(px, py, connect="pairs", pen=pg.mkPen(theme.qcolor(color, 210), width=1), antialias=False)


def _cache(item: pg.GraphicsObject) -> None:
    """Render static lane items once into a pixmap: moving the cursor then repaints by blitting."""
    item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
    for child in item.childItems():
        child.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
