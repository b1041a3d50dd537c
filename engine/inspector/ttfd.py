"""Time to first delta: characters of tool-call arguments delivered over time, streaming policy against atomic.

The curve of a policy is the running total of argument characters the client
has received (the unit the reconciliation pane, the timeline and the call
table count in, so every pane quotes the same total); the
streaming policy ramps, the atomic baseline is one step at the end. The gain is
always worded the same way (:func:`gain_text`): the ratio, then the time saved,
never the one for some runs and the other for others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from callscope.engine.analysis.analyzer import Analysis, StepTime, headline_times
from callscope.engine.analysis.report import ttfd_gain
from callscope.engine.core.wire import WireChunk
from callscope.engine.inspector.timebase import Timebase


@dataclass(slots=True)
class DeliveryCurve:
    """Step-function points (x, cumulative argument characters): start at 0, one point per tool-call chunk."""

    label: str
    xs: list[float] = field(default_factory=list)
    chars: list[int] = field(default_factory=list)
    first: StepTime = field(default_factory=StepTime)

    @property
    def total(self) -> int:
        return self.chars[-1] if self.chars else 0


def argument_chars(chunk: WireChunk) -> int:
    """Characters of call arguments a tool-call chunk delivers (a header's name is not counted)."""
    return len(chunk.text)


def delivery_curve(label: str, chunks: list[WireChunk], timebase: Timebase, first: StepTime) -> DeliveryCurve:
    curve = DeliveryCurve(label, [timebase.xs[0]], [0], first)
    total = 0
    for chunk in chunks:
        if not chunk.is_tool_call:
            continue
        total += argument_chars(chunk)
        x = timebase.x_of_step(chunk.step)
        if curve.xs[-1] == x:
            curve.chars[-1] = total
        else:
            curve.xs.append(x)
            curve.chars.append(total)
    end = timebase.xs[-1]
    if curve.xs[-1] < end:
        curve.xs.append(end)
        curve.chars.append(total)
    return curve


def seconds(ms: float) -> str:
    """``0.41 s``, ``29.3 s``, ``120 ms`` -> three significant digits."""
    if ms < 100:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.3g} s"


def describe_first(at: StepTime, unit: str) -> str:
    if at.step is None:
        return "never"
    if at.ms is not None:
        return seconds(at.ms)
    return f"{unit} {at.step}"


def ttfd_label(analysis: Analysis) -> str:
    """``first delta 0.41 s vs 29.3 s atomic, 71x sooner`` (or why there is none)."""
    times = headline_times(analysis)
    s, a = times.first_delta, times.atomic
    if s.step is None and a.step is None:
        return "no tool-call delta (no call was streamed)"
    policy = analysis.source.policy
    text = f"first delta {describe_first(s, analysis.unit)}"
    if policy != "atomic":
        text += f" vs {describe_first(a, analysis.unit)} atomic"
    gain = gain_text(analysis)
    if gain and policy != "atomic":
        text += f", {gain}"
    return text


def gain_text(analysis: Analysis) -> str | None:
    """The gain in the report's one wording (:func:`~callscope.engine.analysis.report.ttfd_gain`)."""
    return ttfd_gain(analysis)


@dataclass(slots=True)
class TtfdCurves:
    policy: DeliveryCurve
    atomic: DeliveryCurve
    label: str
    x_label: str


def ttfd_curves(analysis: Analysis, timebase: Timebase) -> TtfdCurves:
    times = headline_times(analysis)
    policy = delivery_curve(analysis.source.policy, analysis.chunks, timebase, times.first_delta)
    atomic = delivery_curve("atomic", analysis.baseline_chunks, timebase, times.atomic)
    x_label = "time (ms)" if timebase.timed else f"step ({analysis.unit})"
    return TtfdCurves(policy, atomic, ttfd_label(analysis), x_label)


@dataclass(frozen=True, slots=True)
class TtfdPoint:
    """One run on the TTFD-vs-call-length plot."""

    name: str
    call_chars: int
    streaming: float | None  # ms when timed, else step
    atomic: float | None
    timed: bool


def ttfd_point(analysis: Analysis) -> TtfdPoint | None:
    """None for runs without a tool call (nothing to plot)."""
    times = headline_times(analysis)
    if times.first_delta.step is None and times.atomic.step is None:
        return None
    length = sum(len(c.final_arguments or c.streamed_arguments) for c in analysis.calls) or sum(
        len(c.arguments) for c in analysis.terminal.calls
    )

    def value(at: StepTime) -> float | None:
        if at.step is None:
            return None
        return at.ms if analysis.timed and at.ms is not None else float(at.step)

    return TtfdPoint(analysis.name, length, value(times.first_delta), value(times.atomic), analysis.timed)
