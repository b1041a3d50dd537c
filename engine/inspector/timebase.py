"""The cursor's positions and their x coordinates.

A position is step 0 (the request start, where the role chunk goes out) or one
of the analysis' steps. The x axis is milliseconds when the source is timed and
the step number otherwise (fixtures: the byte-prefix length). Lists may grow
(a live run): :meth:`Timebase.sync` picks up the new steps.
"""

from __future__ import annotations

import bisect

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.analysis.units import step_noun


class Timebase:
    """Step numbers and x values of every cursor position, with lookups both ways."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.timed = analysis.timed
        self.steps: list[int] = [0]
        self.xs: list[float] = [0.0]
        self._synced = 0
        #: Position i is step i for every position (steps numbered 1, 2, 3...: every recording but a few):
        #: a step's position is then the step itself, no bisection (panes ask it once per mark).
        self.contiguous = True
        self.sync()

    @property
    def unit_label(self) -> str:
        return "ms" if self.timed else step_noun(self.analysis)

    def sync(self) -> int:
        """Take in steps added since the last call (live runs); returns how many were added."""
        records = self.analysis.steps
        added = 0
        for record in records[self._synced :]:
            if record.step <= self.steps[-1] and len(self.steps) > 1:
                continue  # duplicate or out-of-order step numbers are not positions
            if record.step == 0 and len(self.steps) == 1:
                self.xs[0] = float(record.ms or 0.0) if self.timed else 0.0
                continue
            self.steps.append(record.step)
            if self.timed:
                self.xs.append(float(record.ms) if record.ms is not None else self.xs[-1])
            else:
                self.xs.append(float(record.step))
            added += 1
        self._synced = len(records)
        if self.contiguous and added:
            steps = self.steps
            self.contiguous = steps[-1] == len(steps) - 1 and steps[-added] == len(steps) - added
        return added

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def last(self) -> int:
        return len(self.steps) - 1

    def clamp(self, index: int) -> int:
        return max(0, min(self.last, index))

    def step(self, index: int) -> int:
        return self.steps[self.clamp(index)]

    def x(self, index: int) -> float:
        return self.xs[self.clamp(index)]

    def index_of_step(self, step: int) -> int:
        """The position at or before ``step`` (a chunk or violation step maps to its token)."""
        if self.contiguous:
            return 0 if step < 0 else min(step, len(self.steps) - 1)
        return max(0, bisect.bisect_right(self.steps, step) - 1)

    def x_of_step(self, step: int | None) -> float:
        if step is None:
            return self.xs[-1]
        return self.xs[self.index_of_step(step)]

    def index_at_x(self, x: float) -> int:
        """The last position whose x is at or before ``x`` (what playback shows at time ``x``)."""
        return self.clamp(bisect.bisect_right(self.xs, x) - 1)

    def nearest_index(self, x: float) -> int:
        """The position closest to ``x`` (dragging the cursor snaps to it)."""
        i = bisect.bisect_left(self.xs, x)
        if i <= 0:
            return 0
        if i > self.last:
            return self.last
        return i if self.xs[i] - x < x - self.xs[i - 1] else i - 1

    @property
    def span(self) -> tuple[float, float]:
        return self.xs[0], self.xs[-1]
