"""Plot axes whose tick labels are the engine's (:func:`callscope.engine.analysis.units.tick_texts`).

pyqtgraph writes large tick values in scientific notation (``1e+06`` on a long trace's
millisecond axis); these axes write them grouped (``1,000,000``), like every other number
the window shows.
"""

from __future__ import annotations

import pyqtgraph as pg

from callscope.engine.analysis.units import tick_texts


class CountAxis(pg.AxisItem):
    """An axis of counts or times: grouped digits, the decimals the tick spacing needs, no exponent."""

    def __init__(self, orientation: str, **kwargs) -> None:
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)  # "time (ms)", never "time (ms) (x0.001)"

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:  # noqa: N802 - Qt API
        return tick_texts([v * scale for v in values], spacing * scale)


def count_axes(*orientations: str) -> dict[str, CountAxis]:
    """``axisItems`` for a plot: a :class:`CountAxis` on each side named."""
    return {side: CountAxis(side) for side in orientations}
