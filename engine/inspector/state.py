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
from callscope.engine.core.causes import UNFINISHED
from callscope.engine.core.parse_model import CallOpened, CallRevised, CallsDropped, ContentRevised, Parse
from callscope.engine.formats import UNDECIDED_REASON, UnknownFormat, get_spec
from callscope.engine.inspector.chunks import ChunkIndex, time_text
from callscope.engine.inspector.held import HeldText, explain
from callscope.engine.inspector.lanes import Lanes
from callscope.engine.inspector.parse_cursor import ParseCursor, StepDelta
from callscope.engine.inspector.step_diff import StepDiff, step_diff
from callscope.engine.inspector.text_spans import TextSpans, TokenSpan
from callscope.engine.inspector.timebase import Timebase

#: What the cursor can jump to (``next_mark``): steps that emitted a chunk, changed the parse, broke a rule,
#: revised the parse, opened a call; and the user's bookmarks.
DELTA, EVENT, VIOLATION, REVISION, CALL, BOOKMARK = "delta", "event", "violation", "revision", "call", "bookmark"
MARKS = (DELTA, EVENT, VIOLATION, REVISION, CALL, BOOKMARK)


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
    held: HeldText | None = None  # text the parser has read but not let out yet, and why

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
        self._marks: dict[str, list[int]] = {}
        self.bookmarks: list[int] = []  # steps the user marked (kept sorted)
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
        self._marks.clear()
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
        return self.mark_steps(DELTA)

    def mark_steps(self, kind: str) -> list[int]:
        """The sorted steps of one kind of mark (see :data:`MARKS`)."""
        if kind == BOOKMARK:
            return self.bookmarks
        steps = self._marks.get(kind)
        if steps is None:
            steps = self._marks[kind] = self._compute_marks(kind)
        return steps

    def _compute_marks(self, kind: str) -> list[int]:
        a = self.analysis
        if kind == DELTA:
            return self.chunk_index.delta_steps()
        if kind == VIOLATION:
            return sorted({v.step for v in a.violations if v.step is not None})
        kinds = {EVENT: None, REVISION: (CallRevised, ContentRevised, CallsDropped), CALL: (CallOpened,)}[kind]
        found: list[int] = []
        for step, event in a.parse_events:
            if (kinds is None or isinstance(event, kinds)) and (not found or found[-1] != step):
                found.append(step)
        return found

    def next_mark(self, kind: str, direction: int = 1) -> bool:
        """Jump to the next (``direction`` > 0) or previous mark of ``kind``; stays put if there is none."""
        steps = self.mark_steps(kind)
        here = self.cursor_step
        if direction > 0:
            i = bisect.bisect_right(steps, here)
            return i < len(steps) and self.set_cursor_step(steps[i])
        i = bisect.bisect_left(steps, here) - 1
        return i >= 0 and self.set_cursor_step(steps[i])

    def next_delta(self) -> bool:
        """Jump to the next step at which a chunk went out (stays put if there is none)."""
        return self.next_mark(DELTA, 1)

    def previous_delta(self) -> bool:
        return self.next_mark(DELTA, -1)

    def toggle_bookmark(self, step: int | None = None) -> bool:
        """Bookmark the cursor's step (or ``step``), or remove the bookmark there; True when one was added."""
        step = self.cursor_step if step is None else step
        i = bisect.bisect_left(self.bookmarks, step)
        if i < len(self.bookmarks) and self.bookmarks[i] == step:
            del self.bookmarks[i]
            self._notify("bookmarks")
            return False
        self.bookmarks.insert(i, step)
        self._notify("bookmarks")
        return True

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
            held=self.held_text(index),
        )

    @property
    def markers(self) -> tuple[str, ...]:
        """The wire format's markers (they explain a hold; they never decide what text is)."""
        try:
            return get_spec(self.analysis.source.format).markers.leak if self.analysis.source.format else ()
        except UnknownFormat:
            return ()

    def held_text(self, index: int | None = None) -> HeldText | None:
        """What the parser holds back at position ``index`` (the cursor by default), and why; None if nothing."""
        index = self.cursor if index is None else self.timebase.clamp(index)
        start, end = self.spans.held(index)
        if end <= start:
            return None
        step = self.timebase.step(index)
        cut = self.analysis.finish_cause if self.analysis.finish_cause in UNFINISHED and index == self.last else None
        text = self.spans.text[start:end]
        if cut is None and start == 0 and self._thinking_undecided(step):
            return HeldText(start, end, text, UNDECIDED_REASON)
        return HeldText(start, end, text, explain(text, self.parse_cursor.at(step), self.markers, cut))

    def _thinking_undecided(self, step: int) -> bool:
        """Under ``--thinking auto``, the parser had not read the reasoning state from the text by ``step``."""
        extra = self.analysis.source.extra
        if extra.get("thinking") != "auto":
            return False
        decided = extra.get("thinking_inferred")
        return decided is None or step < decided.get("step", 0)

    def step_diff(self, index: int | None = None) -> StepDiff:
        """What the step at ``index`` (the cursor by default) added, sent, and withheld and why."""
        index = self.cursor if index is None else self.timebase.clamp(index)
        view = self.view(index)
        a = self.analysis
        lo = self.chunk_index.count_until(self.timebase.step(index - 1)) if index > 0 else 0
        hi = view.chunk_count
        wire = {i: (name, args) for i, _id, name, args in self.chunk_index.call_arguments_until(hi)}
        final = not a.running and index == self.last
        return step_diff(view.step, view.delta, view.parse, a.chunks[lo:hi], wire, a.violations, a.source.policy,
                         final, view.held)

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
