"""The timeline's vertical grid, drawn as two line items instead of by the axis.

pyqtgraph's axis draws its grid into the picture it replays on every range
change, and those long translucent lines cost ~3.5 ms of a live frame that
widens the range (a 20,000-token run widens a dozen times). Two items of
vertical lines (major and minor ticks of the bottom axis) draw the same grid
in ~0.6 ms. Not cached as pixmaps: re-rendering a plot-sized cache on each
range change cost more (~5 ms) than drawing the lines.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

#: Opacity of the major and the minor grid lines (of 255): faint, as the axis's own grid at alpha 0.15 was.
ALPHAS = (32, 16)


class GridLines:
    """Vertical lines at the bottom axis's tick values, from ``y0`` to ``y1``, behind everything."""

    def __init__(self, plot_item: pg.PlotItem, y0: float, y1: float) -> None:
        self._plot = plot_item
        self._axis = plot_item.getAxis("bottom")
        self._ys = (y0, y1)
        self.levels: list[pg.PlotCurveItem] = []
        for _alpha in ALPHAS:
            curve = pg.PlotCurveItem([], [], connect="pairs", antialias=False, skipFiniteCheck=True)
            curve.setZValue(-100)
            plot_item.addItem(curve, ignoreBounds=True)
            self.levels.append(curve)
        self._key: tuple[float, float, float] | None = None

    def set_color(self, color) -> None:
        """The theme's axis colour, at each level's opacity."""
        for curve, alpha in zip(self.levels, ALPHAS, strict=True):
            pen_color = pg.mkColor(color)
            pen_color.setAlpha(alpha)
            curve.setPen(pg.mkPen(pen_color, width=1))

    def set_visible(self, visible: bool) -> None:
        for curve in self.levels:
            curve.setVisible(visible)

    def update(self, x0: float, x1: float, width: float) -> None:
        """Lines for the x range ``x0``..``x1`` shown over ``width`` pixels (nothing is redone for the same range)."""
        key = (x0, x1, width)
        if key == self._key:
            return
        self._key = key
        levels = self._axis.tickValues(x0, x1, max(1.0, width)) if x1 > x0 else []
        drawn: set[float] = set()
        for index, curve in enumerate(self.levels):
            values = [v for v in (levels[index][1] if index < len(levels) else []) if v not in drawn]
            drawn.update(values)
            xs = np.repeat(np.asarray(values, dtype=float), 2)
            ys = np.tile(np.asarray(self._ys, dtype=float), len(values))
            curve.setData(xs, ys)

    def xs(self, level: int = 0) -> list[float]:
        """The x of each line of a level (tests)."""
        data = self.levels[level].getData()[0]
        return [] if data is None else list(data[::2])
