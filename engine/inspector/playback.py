"""The playback clock: given wall-clock time passing, which position to show next.

At speed 1 a timed recording is reproduced with its real timing: the playhead
is a time on the recording's x axis (ms), advanced by ``wall_ms * speed``, and
the shown position is the last one at or before the playhead. An untimed
source plays at :attr:`PlaybackClock.untimed_rate` steps per second times the
speed. "As fast as possible" ignores timing and advances one position per
:meth:`advance` call (the GUI calls it on every event-loop turn and repaints at
most once per frame). With ``loop`` the end wraps to the start.
"""

from __future__ import annotations

from dataclasses import dataclass

from callscope.engine.inspector.timebase import Timebase

SPEEDS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0, 10.0)
ASAP = 0.0  # speed value meaning "as fast as possible"


@dataclass(slots=True)
class Tick:
    """What :meth:`PlaybackClock.advance` decided: the position to show, and whether playback stopped."""

    index: int
    moved: bool
    stopped: bool


class PlaybackClock:
    def __init__(self, timebase: Timebase, speed: float = 1.0, loop: bool = False, untimed_rate: float = 30.0) -> None:
        self.timebase = timebase
        self.speed = speed
        self.loop = loop
        self.untimed_rate = untimed_rate
        self.playing = False
        self.index = 0
        self._playhead = 0.0  # ms on the x axis (timed) or fractional position (untimed)

    @property
    def asap(self) -> bool:
        return self.speed == ASAP

    def set_speed(self, speed: float) -> None:
        if speed < 0:
            raise ValueError("speed must be positive (or 0 for as fast as possible)")
        self.speed = speed

    def play(self, index: int) -> None:
        """Start from position ``index`` (from the start if it is the end)."""
        if index >= self.timebase.last:
            index = 0
        self.playing = True
        self.seek(index)

    def pause(self) -> None:
        self.playing = False

    def seek(self, index: int) -> None:
        """The cursor moved by hand: continue from there."""
        self.index = self.timebase.clamp(index)
        self._playhead = self.timebase.x(self.index) if self.timebase.timed else float(self.index)

    def next_due_ms(self) -> float | None:
        """Wall milliseconds until the next position is due (None when paused or at the end)."""
        if not self.playing or self.index >= self.timebase.last:
            return None
        if self.asap:
            return 0.0
        if self.timebase.timed:
            gap = self.timebase.x(self.index + 1) - self._playhead
        else:
            gap = (self.index + 1 - self._playhead) * 1000.0 / self.untimed_rate
        return max(0.0, gap / self.speed)

    def advance(self, wall_ms: float) -> Tick:
        """``wall_ms`` of real time passed: move the playhead and return the position to show."""
        if not self.playing:
            return Tick(self.index, False, True)
        tb = self.timebase
        before = self.index
        if self.asap:
            target = self.index + 1
            self._playhead = float(target) if not tb.timed else tb.x(target)
        elif tb.timed:
            self._playhead += wall_ms * self.speed
            target = tb.index_at_x(self._playhead)
        else:
            self._playhead += wall_ms * self.speed * self.untimed_rate / 1000.0
            target = int(self._playhead)
        if target >= tb.last:
            if self.loop and before >= tb.last:
                self.seek(0)
                return Tick(0, before != 0, False)
            self.index = tb.last
            if not self.loop:
                self.playing = False
            return Tick(self.index, before != self.index, not self.playing)
        self.index = max(target, self.index)
        return Tick(self.index, before != self.index, False)
