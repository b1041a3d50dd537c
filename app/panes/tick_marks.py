"""Dense timeline marks (tokens, argument fragments, content) drawn so that a live frame repaints only where it grew.

A live stream adds marks at its right end on every frame. Held in one item, a
lane would change its bounding rect every frame, and Qt repaints an item's
whole old and new rect: the whole plot, 8-9 ms a frame on a 20,000-token run.
So each lane is two items: the marks drawn so far, *settled*, and a *tail* with
the marks added since, which covers only the part of the plot the stream grew
into. The tail is folded into the settled item when the view range changes
(zoom, pan, a live view widening), when everything is repainted anyway. Once the
stream is finished the settled item is kept as a pixmap
(:meth:`TickMarks.set_cached`), so a cursor move repaints by blitting. A call's bar grows the same way (:class:`GrowingBar`).

What is drawn is always what one item would draw: at most one tick per pixel
column of the view (20,000 tokens are ~1,200 lines; ticks closer than a pixel
overlap on screen anyway), the first tick of each column.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGraphicsItem


class ViewSpan(NamedTuple):
    """The x range shown and the plot's width in pixels: what decides which ticks are drawn."""

    x0: float
    x1: float
    width: float

    @property
    def pixel(self) -> float:
        return (self.x1 - self.x0) / max(1.0, self.width)


def decimates(count: int, view: ViewSpan) -> bool:
    """Whether a lane of ``count`` ticks is thinned to one per pixel column (it has more ticks than columns)."""
    return count > max(1.0, view.width) and view.x1 > view.x0


def visible_ticks(xs: np.ndarray, view: ViewSpan) -> np.ndarray:
    """The first of ``xs`` (sorted) in each pixel column of ``view``; all of them when they fit."""
    return first_per_column(xs, view) if decimates(len(xs), view) else xs


def first_per_column(xs: np.ndarray, view: ViewSpan) -> np.ndarray:
    """The first of ``xs`` (sorted) in each pixel column of ``view``, those within a pixel of it."""
    pixel = view.pixel
    shown = xs[(xs >= view.x0 - pixel) & (xs <= view.x1 + pixel)]
    if len(shown) < 2:
        return shown
    columns = np.floor((shown - view.x0) / pixel)  # sorted xs: each column's first tick starts a run
    keep = np.empty(len(columns), dtype=bool)
    keep[0] = True
    np.not_equal(columns[1:], columns[:-1], out=keep[1:])
    return shown[keep]


def tick_points(xs: np.ndarray, y: float, height: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertical ticks at ``xs`` as point pairs (drawn with ``connect="pairs"``)."""
    return np.repeat(xs, 2), np.tile(np.array([y - height, y + height]), len(xs))


def _line_item(color, width: float = 1.0, pairs: bool = True) -> pg.PlotDataItem:
    pen = pg.mkPen(color, width=width)
    pen.setCapStyle(Qt.PenCapStyle.FlatCap)  # a bar in two pieces: square caps would overlap (a brighter dot) at the join
    return pg.PlotDataItem([], [], connect="pairs" if pairs else "all", pen=pen, antialias=False, skipFiniteCheck=True)


def cache_item(item: pg.GraphicsObject) -> None:
    """Render an item (and its children: a PlotDataItem draws through its curve) once into a pixmap."""
    set_cache(item, True)


def set_cache(item: pg.GraphicsObject, cached: bool) -> None:
    mode = QGraphicsItem.CacheMode.DeviceCoordinateCache if cached else QGraphicsItem.CacheMode.NoCache
    for part in (item, *item.childItems()):
        if part.cacheMode() != mode:
            part.setCacheMode(mode)


class TickMarks:
    """One dense lane kind: settled ticks and a growing tail (see the module doc)."""

    def __init__(self, plot_item: pg.PlotItem, y: float, height: float, color) -> None:
        self.y, self.height = y, height
        self.xs = np.empty(0)
        self._plot = plot_item
        self.settled = _line_item(color)
        self.tail = _line_item(color)
        self._settled_count = 0  # marks of xs folded into the settled item
        self._last_column: float | None = None  # the settled item's last drawn tick, in pixel columns of its view
        self._thinned = False  # whether the settled ticks were thinned to one per column
        self._view: ViewSpan | None = None
        for item in (self.settled, self.tail):
            plot_item.addItem(item)

    def remove(self) -> None:
        for item in (self.settled, self.tail):
            self._plot.removeItem(item)

    def set_cached(self, cached: bool) -> None:
        """Keep the settled ticks as a pixmap (a finished stream), or draw them each time (a live one).

        A cursor move over a finished stream repaints a strip of every lane: from a pixmap that is a blit.
        A live stream re-renders that pixmap at every range change, which cost more than the blits saved
        (``bench gui``: live p99 ~16-18 ms cached, ~15-16 uncached; cursor jumps the other way round).
        """
        set_cache(self.settled, cached)

    def reset(self) -> None:
        """Empty, to be reused by the next stream (making the two items costs more than a live frame)."""
        self.xs = np.empty(0)
        for item in (self.settled, self.tail):
            item.setData([], [])
        self._settled_count, self._last_column, self._thinned, self._view = 0, None, False, None

    def __len__(self) -> int:
        return len(self.xs)

    def update(self, xs: np.ndarray, view: ViewSpan) -> None:
        """The lane now holds ``xs`` (a live stream only appends): draw the new ones in the tail."""
        self.xs = xs
        if view != self._view or len(xs) < self._settled_count or decimates(len(xs), view) != self._thinned:
            self.settle(view)  # drawn for another view, or the lane just outgrew the plot's pixel columns
            return
        tail = xs[self._settled_count:]
        if self._thinned:
            tail = first_per_column(tail, view)
            if len(tail) and self._last_column is not None:
                tail = tail[np.floor((tail - view.x0) / view.pixel) > self._last_column]  # that column has its tick
        self.tail.setData(*tick_points(tail, self.y, self.height))

    def refit(self, view: ViewSpan) -> None:
        """Draw for ``view``, settled, unless already drawn for it (a lane :meth:`update` settled on this frame)."""
        if view != self._view:
            self.settle(view)

    def settle(self, view: ViewSpan) -> None:
        """The view changed (or a new stream): draw every mark for ``view`` in the settled item, empty the tail."""
        self._view = view
        self._thinned = decimates(len(self.xs), view)
        shown = first_per_column(self.xs, view) if self._thinned else self.xs
        self.settled.setData(*tick_points(shown, self.y, self.height))
        self.tail.setData([], [])
        self._settled_count = len(self.xs)
        self._last_column = float(np.floor((shown[-1] - view.x0) / view.pixel)) if self._thinned and len(shown) else None

    def drawn_xs(self) -> np.ndarray:
        """The xs of every tick on screen, settled then tail (tests compare it with :func:`visible_ticks`)."""
        parts = [item.getData()[0] for item in (self.settled, self.tail)]
        return np.concatenate([p[::2] for p in parts if p is not None and len(p)] or [np.empty(0)])


class GrowingBar:
    """A call's bar on the parse lane, from its first to its last argument fragment; its end grows live.

    Like :class:`TickMarks`, the part drawn at the last range change stays put and a tail item covers the
    growth, so a long call does not repaint its whole length every frame.
    """

    def __init__(self, plot_item: pg.PlotItem, y: float, color) -> None:
        self.y = y
        self._plot = plot_item
        self.settled = _line_item(color, width=4, pairs=False)
        self.tail = _line_item(color, width=4, pairs=False)
        self._start: float | None = None
        self._settled_end: float | None = None
        self._end: float | None = None
        for item in (self.settled, self.tail):
            plot_item.addItem(item)

    def remove(self) -> None:
        for item in (self.settled, self.tail):
            self._plot.removeItem(item)

    def update(self, start: float, end: float) -> None:
        end = max(end, start)
        if self._start != start or self._settled_end is None or end < self._settled_end:
            self._start, self._end = start, end
            self.settle()
            return
        if end != self._end:
            self._end = end
            self.tail.setData([self._settled_end, end], [self.y, self.y])

    def settle(self) -> None:
        """Draw the whole bar in the settled item (the view changed, or the bar is new)."""
        if self._start is None or self._end is None:
            return
        self.settled.setData([self._start, self._end], [self.y, self.y])
        self.tail.setData([], [])
        self._settled_end = self._end

    def span(self) -> tuple[float, float] | None:
        """(start, end) as drawn."""
        return None if self._start is None or self._end is None else (self._start, self._end)
