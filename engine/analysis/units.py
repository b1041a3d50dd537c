"""What a step is called, and how many there are: one wording for every pane, report and export.

An analysis has a ``unit`` (token, char, byte, chunk), but a step is not always one
of them: ``replay-text --step 4`` (or the window's Paste with "4 chars") cuts a
text into 4-character steps and records the unit ``char``. Writing
``f"{step_count} {unit}s"`` then counts steps and calls them characters
("44,274 chars" for 177,095 of them). So a position is named by
:func:`step_noun` (the unit when every step is one of it, else ``step``) and a
count by :func:`steps_text` (the steps, plus the characters or bytes they hold
when those differ).

Tokens and chunks are steps by definition, and so are the positions of a source
that carries parses rather than bytes (a byte-prefix fixture numbers its steps by byte). For characters and bytes the steps
are looked at once, each (a live run's steps are only appended): what was learnt
is kept on the analysis (``Analysis.units_seen``).
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callscope.engine.analysis.analyzer import Analysis

#: Units a step always is exactly one of.
WHOLE_UNITS = ("token", "chunk")
class _Measure:
    """Whether every step so far held exactly one character (or byte), and how many the steps held."""

    __slots__ = ("steps", "seen", "single", "total", "decode")

    def __init__(self, steps: list, unit: str) -> None:
        self.steps = steps
        self.seen = 0
        self.single = True
        self.total = 0
        self.decode = None if unit == "byte" else codecs.getincrementaldecoder("utf-8")("replace").decode

    def take(self) -> None:
        decode, steps = self.decode, self.steps
        single, total = self.single, self.total
        for step in steps[self.seen :] if self.seen else steps:
            size = len(step.data) if decode is None else len(decode(step.data))
            total += size
            single = single and size == 1
        self.seen, self.single, self.total = len(steps), single, total


def plural(count: int, noun: str) -> str:
    """``1 token``, ``2 tokens``, ``100,000 tokens``: counts are read at a glance, so they are grouped."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"


def _measure(analysis: Analysis) -> tuple[bool, int]:
    """(every step holds exactly one unit, how many units the steps hold) for a char or byte analysis."""
    steps = analysis.steps
    measure = analysis.units_seen
    if measure is None or measure.steps is not steps:
        measure = analysis.units_seen = _Measure(steps, analysis.unit)
    if measure.seen != len(steps):
        measure.take()
    # a source that carries parses, not bytes (a byte-prefix fixture): its step numbers are the positions
    return measure.single or not measure.total, measure.total


def step_noun(analysis: Analysis) -> str:
    """``token`` / ``chunk``; ``char`` / ``byte`` when every step is one of them; else ``step``."""
    unit = analysis.unit
    if unit in WHOLE_UNITS or not analysis.steps:
        return unit
    if unit not in ("char", "byte"):
        return "step"
    return unit if _measure(analysis)[0] else "step"


def steps_text(analysis: Analysis, count: int | None = None) -> str:
    """``100,000 tokens``; ``177,095 chars``; ``44,274 steps (177,095 chars)`` when a step holds several.

    ``count``: the steps to count (a live run so far); the analysis's own by default.
    """
    steps = analysis.step_count if count is None else count
    noun = step_noun(analysis)
    if noun != "step" or analysis.unit not in ("char", "byte"):
        return plural(steps, noun)
    return f"{plural(steps, 'step')} ({plural(_measure(analysis)[1], analysis.unit)})"


def position_text(analysis: Analysis, step: int) -> str:
    """``token 13``, ``byte 44``, ``step 12``: where the cursor is, in the noun of :func:`step_noun`."""
    return f"{step_noun(analysis)} {step}"


def tick_texts(values: list[float], spacing: float) -> list[str]:
    """Axis tick labels: ``0``, ``200,000``, ``2,000,000``; ``0.25`` when the ticks are that close.

    Plot libraries fall back to scientific notation for large values (``1e+06``, ``2e+06`` on a
    2,000 s trace in milliseconds). A count or a time is read grouped, with just the decimals the
    spacing of the ticks needs, whatever its size.
    """
    decimals = 0
    while decimals < 6 and spacing > 0 and abs(round(spacing, decimals) - spacing) > spacing * 1e-6:
        decimals += 1  # 0.25 apart: two decimals; 0.5 apart: one; 200,000 apart: none
    texts = []
    for value in values:
        text = f"{value:,.{decimals}f}"
        texts.append("0" if text.lstrip("-").strip("0.,") == "" else text)
    return texts
