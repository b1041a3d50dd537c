"""The inspector's view state: one analysis, one cursor every pane follows, a hover preview.

:class:`InspectorState` owns the derived structures (timebase, parse cursor,
text spans, chunk index, lanes) and the cursor. Moving the cursor is cheap (an
integer and a notification); panes ask :meth:`view` for what to draw, and the
GUI decides when to redraw (at most once per frame). Navigation: one token,
one emitted delta (the next/previous step at which a chunk went out), start,
end, or the position nearest an x value (dragging) or a step (jumps from
violations and chunks).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.core.parse_model import Parse
from callscope.engine.inspector.chunks import ChunkIndex, time_text
from callscope.engine.inspector.lanes import Lanes
from callscope.engine.inspector.parse_cursor import ParseCursor, StepDelta
from callscope.engine.inspector.text_spans import TextSpans, TokenSpan
from callscope.engine.inspector.timebase import Timebase


@dataclass(slots=True)
class CursorView:
    """Everything the panes show at one position."""

    index: int
    step: int
    x: float
    ms: float | None
    parse: Parse
    delta: StepDelta
    chunk_count: int  # chunks emitted at or before this step
    token: TokenSpan
    cut: int  # text after this character offset is in the future

    @property
    def is_start(self) -> bool:
        return self.index == 0


class InspectorState:
    def __init__(self, analysis: Analysis, checkpoint_every: int = 256) -> None:
        self.analysis = analysis
        self.timebase = Timebase(analysis)
        self.parse_cursor = ParseCursor(analysis, checkpoint_every)
        self.spans = TextSpans(analysis, self.timebase)
        self.chunk_index = ChunkIndex(analysis)
        self._lanes: Lanes | None = None
        self._delta_steps: list[int] | None = None
        self.cursor = 0
        self.hover: int | None = None
        self._listeners: list[Callable[[str], None]] = []
        if not self.live:
            self.spans.finish_text()

    # ------------------------------------------------------------ live growth

    @property
    def live(self) -> bool:
        return self.analysis.running

    def sync(self) -> str:
        """A live run grew: index the new steps; returns the text they added."""
        self.timebase.sync()
        self.parse_cursor.sync()
        text = self.spans.sync()
        self.chunk_index.sync()
        if self._lanes is not None:
            self._lanes.sync()
        self._delta_steps = None
        return text

    @property
    def lanes(self) -> Lanes:
        if self._lanes is None:
            self._lanes = Lanes(self.analysis, self.timebase)
        return self._lanes

    # ------------------------------------------------------------ listeners

    def subscribe(self, listener: Callable[[str], None]) -> None:
        """``listener(what)`` is called with ``"cursor"`` or ``"hover"`` after a change."""
        self._listeners.append(listener)

    def _notify(self, what: str) -> None:
        for listener in list(self._listeners):
            listener(what)

    # ------------------------------------------------------------ cursor

    @property
    def last(self) -> int:
        return self.timebase.last

    @property
    def cursor_step(self) -> int:
        return self.timebase.step(self.cursor)

    def set_cursor(self, index: int) -> bool:
        index = self.timebase.clamp(index)
        if index == self.cursor:
            return False
        self.cursor = index
        self._notify("cursor")
        return True

    def set_cursor_step(self, step: int) -> bool:
        return self.set_cursor(self.timebase.index_of_step(step))

    def set_cursor_x(self, x: float) -> bool:
        return self.set_cursor(self.timebase.nearest_index(x))

    def step_token(self, count: int = 1) -> bool:
        return self.set_cursor(self.cursor + count)

    def home(self) -> bool:
        return self.set_cursor(0)

    def end(self) -> bool:
        return self.set_cursor(self.last)

    def delta_steps(self) -> list[int]:
        if self._delta_steps is None:
            self._delta_steps = self.chunk_index.delta_steps()
        return self._delta_steps

    def next_delta(self) -> bool:
        """Jump to the next step at which a chunk went out (stays put if there is none)."""
        steps = self.delta_steps()
        i = bisect.bisect_right(steps, self.cursor_step)
        return i < len(steps) and self.set_cursor_step(steps[i])

    def previous_delta(self) -> bool:
        steps = self.delta_steps()
        i = bisect.bisect_left(steps, self.cursor_step) - 1
        return i >= 0 and self.set_cursor_step(steps[i])

    def set_hover(self, index: int | None) -> None:
        index = None if index is None else self.timebase.clamp(index)
        if index != self.hover:
            self.hover = index
            self._notify("hover")

    # ------------------------------------------------------------ what to draw

    def view(self, index: int | None = None) -> CursorView:
        index = self.cursor if index is None else self.timebase.clamp(index)
        step = self.timebase.step(index)
        return CursorView(
            index=index,
            step=step,
            x=self.timebase.x(index),
            ms=self.timebase.x(index) if self.timebase.timed else None,
            parse=self.parse_cursor.at(step),
            delta=self.parse_cursor.delta_at(step) if index > 0 else StepDelta(),
            chunk_count=self.chunk_index.count_until(step),
            token=self.spans.span(index),
            cut=self.spans.cut(index),
        )

    def preview(self, index: int) -> str:
        """One-line summary of a position for the hover tooltip (does not move the cursor)."""
        index = self.timebase.clamp(index)
        step = self.timebase.step(index)
        token = self.spans.span(index)
        text = self.spans.text[token.start : token.end]
        head = f"{self.analysis.unit} {step}"  # the unit the window's readouts use ("byte 44", "token 44")
        if self.timebase.timed:
            head += f" · {time_text(self.timebase.x(index))}"
        parts = [head]
        if text:
            parts.append(f"token {text!r} ({token.kind})")
        delta = self.parse_cursor.delta_at(step) if index else StepDelta()
        if delta.opened:
            parts.append("opened call " + ", ".join(map(str, sorted(delta.opened))))
        if delta.named:
            parts.append("named call " + ", ".join(map(str, sorted(delta.named))))
        for call, added in sorted(delta.arguments.items()):
            parts.append(f"call {call} args += {added[:40]!r}")
        lo = self.chunk_index.count_until(self.timebase.step(index - 1)) if index > 0 else 0
        hi = self.chunk_index.count_until(step)
        if hi > lo:
            kinds = [self.analysis.chunks[i].kind for i in range(lo, hi)]
            parts.append(f"{hi - lo} chunk{'s' if hi - lo != 1 else ''}: " + ", ".join(kinds))
        return " · ".join(parts)
