"""Which cursor position each frame of an exported replay shows, at a frame rate and a playback speed.

An animation is the replay as playback shows it: frame ``k`` is the moment
``k / fps`` seconds of wall time after the start, at ``speed`` times the
recording's timing (the playback clock's rule: the last position at or before
that moment), so a 1x GIF of a live run takes as long as the run did. An
untimed source advances :data:`UNTIMED_RATE` steps per second. The last frame
is held a moment so a looping image does not snap straight back to the start.
Consecutive frames that show the same position (and the same spinner phase)
are merged by the writers, not here: the schedule stays one frame per tick.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from callscope.engine.inspector.timebase import Timebase

UNTIMED_RATE = 30.0  # steps per second for a source without times (PlaybackClock's default)
#: The most frames one export writes; a longer replay is sampled at a lower frame rate.
MAX_FRAMES = 900


class AnimationError(ValueError):
    """The requested animation cannot be made (bad frame rate or speed); the message says why."""


@dataclass(frozen=True, slots=True)
class FramePlan:
    """One frame per tick: the position each shows, how long each is shown (ms), the rate used."""

    indices: tuple[int, ...]
    frame_ms: float
    fps: float
    hold_frames: int

    @property
    def count(self) -> int:
        return len(self.indices)

    @property
    def duration_ms(self) -> float:
        return self.count * self.frame_ms


def plan_frames(timebase: Timebase, fps: float = 10.0, speed: float = 1.0, hold_ms: float = 2000.0,
                max_frames: int = MAX_FRAMES) -> FramePlan:
    """The frames of a replay from the first position to the last, then ``hold_ms`` on the last."""
    if not (math.isfinite(fps) and fps > 0):
        raise AnimationError(f"the frame rate must be a positive number, not {fps}")
    if not (math.isfinite(speed) and speed > 0):
        raise AnimationError(f"the speed must be a positive number, not {speed}")
    start, end = timebase.span
    span = (end - start) / speed if timebase.timed else timebase.last * 1000.0 / (UNTIMED_RATE * speed)
    hold = max(0.0, hold_ms)
    needed = math.floor(span * fps / 1000.0) + 1 + math.ceil(hold * fps / 1000.0)
    if needed > max_frames:  # a long replay: fewer frames per second, same duration
        fps = fps * max_frames / needed
    frame_ms = 1000.0 / fps
    indices = []
    k = 0
    while True:
        wall = k * frame_ms
        if timebase.timed:
            index = timebase.index_at_x(start + wall * speed)
        else:
            index = timebase.clamp(int(wall * UNTIMED_RATE * speed / 1000.0))
        indices.append(index)
        if index >= timebase.last:
            break
        k += 1
    hold_frames = math.ceil(hold / frame_ms)
    indices.extend([timebase.last] * hold_frames)
    return FramePlan(tuple(indices), frame_ms, fps, hold_frames)
