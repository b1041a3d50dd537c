"""The partial parse at any step, cheap for arbitrary jumps.

:meth:`Analysis.parse_at` folds the whole event log up to a step: fine once,
too slow for a cursor dragged across a 20,000-step trace. :class:`ParseCursor`
keeps a checkpoint every ``every`` events and the accumulator of the last
answer, so a jump folds at most ``every`` events from the nearest checkpoint
and a one-step move folds only that step's events.

A checkpoint is not a copy of the parse: a 400 KB call checkpointed every 256
of 100,000 steps was 80 MB of strings. Folding only ever appends to a text's
list of pieces or replaces the list (:mod:`callscope.engine.core.parse_model`),
so a checkpoint keeps each list and how many of its pieces were there then
(:class:`Checkpoint`); each list is joined once, and a jump slices its prefix.
Semantics match :meth:`Analysis.parse_at`: before the last step only the
streamed events count; at (or after) the last step the terminal events too.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from callscope.engine.analysis.analyzer import RUNNING, Analysis
from callscope.engine.core.parse_model import (
    FoldedCall,
    Parse,
    ParseAccumulator,
    ParseEvent,
    summarize,
)


@dataclass(slots=True)
class StepDelta:
    """What the events of one step did to the parse (the parse pane highlights it).

    The core's :class:`~callscope.engine.core.parse_model.StepChanges` with its pieces joined
    and its indexes as sets: what a pane asks (``index in delta.opened``, the appended text).
    """

    content: str = ""
    reasoning: str = ""
    opened: set[int] = field(default_factory=set)
    named: set[int] = field(default_factory=set)
    arguments: dict[int, str] = field(default_factory=dict)
    revised: set[int] = field(default_factory=set)
    dropped_to: int | None = None
    content_revised: bool = False
    failures: list[str] = field(default_factory=list)
    events: int = 0

    @property
    def empty(self) -> bool:
        return self.events == 0


def delta_of(events: list[ParseEvent]) -> StepDelta:
    """The step highlight of ``events`` (summarised by the core, never folded here)."""
    changes = summarize(events)
    return StepDelta(
        content="".join(changes.content),
        reasoning="".join(changes.reasoning),
        opened=set(changes.opened),
        named=set(changes.named),
        arguments={index: "".join(pieces) for index, pieces in changes.appended.items()},
        revised=set(changes.revised),
        dropped_to=changes.dropped_to,
        content_revised=changes.content_revised,
        failures=changes.failures,
        events=len(events),
    )


#: A text of the folded parse as a prefix of a piece list: (the list, how many pieces, how many characters).
Mark = tuple[list[str], int, int]


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """The folded parse after ``events`` events, as prefixes of the folding accumulator's own piece lists.

    Each text is a :data:`Mark`: the list the accumulator was appending to, how many pieces and characters
    it held then. Later appends go after them; a revision gives the accumulator a new list; either way the
    prefix stays what it was. A call's name and id are copied (a later name is set in place).
    """

    events: int
    content: Mark
    reasoning: Mark
    calls: tuple[tuple[str | None, str | None, Mark], ...]  # name, id, arguments


class _Texts:
    """Marks taken as the parse is folded, and prefixes read back, each list joined once."""

    def __init__(self) -> None:
        self._counted: dict[int, tuple[list[str], int, int]] = {}  # id(list) -> (list, pieces, chars) counted
        self._joined: dict[int, tuple[list[str], int, str]] = {}  # id(list) -> (list, pieces, their text)

    def mark(self, pieces: list[str], chars: int | None = None) -> Mark:
        """``pieces`` as they are now; ``chars`` when the caller knows it (a call keeps its length)."""
        count = len(pieces)
        if chars is None:
            seen = self._counted.get(id(pieces))
            done, total = (seen[1], seen[2]) if seen is not None and seen[0] is pieces else (0, 0)
            chars = total + sum(map(len, pieces[done:count]))
            self._counted[id(pieces)] = (pieces, count, chars)
        return pieces, count, chars

    def text(self, mark: Mark) -> str:
        pieces, count, chars = mark
        if not count:
            return ""
        joined = self._joined.get(id(pieces))
        if joined is None or joined[0] is not pieces or joined[1] < count:
            joined = self._joined[id(pieces)] = (pieces, len(pieces), "".join(pieces))
        return joined[2][:chars]

    def checkpoint(self, events: int, acc: ParseAccumulator) -> Checkpoint:
        return Checkpoint(events, self.mark(acc.content_pieces), self.mark(acc.reasoning_pieces),
                          tuple((c.name, c.id, self.mark(c.pieces, c.length)) for c in acc.calls))

    def accumulator(self, checkpoint: Checkpoint) -> ParseAccumulator:
        """A fresh accumulator holding ``checkpoint``'s parse (each text one piece, so folding on stays cheap)."""
        acc = ParseAccumulator()
        content, reasoning = self.text(checkpoint.content), self.text(checkpoint.reasoning)
        acc.content_pieces = [content] if content else []
        acc.reasoning_pieces = [reasoning] if reasoning else []
        acc.calls = [FoldedCall(name, id_, [text] if (text := self.text(mark)) else [], mark[2])
                     for name, id_, mark in checkpoint.calls]
        return acc


class ParseCursor:
    """``at(step)`` = ``analysis.parse_at(step)``, with checkpoints every ``every`` events."""

    def __init__(self, analysis: Analysis, every: int = 256) -> None:
        self.analysis = analysis
        self.every = max(1, every)
        self._keys: list[int] = []  # step of each event (non-decreasing)
        self._texts = _Texts()
        self._checkpoints: list[Checkpoint] = [self._texts.checkpoint(0, ParseAccumulator())]
        #: Folds the streamed events for the checkpoints; never read through ``joined``, which would collapse
        #: (rewrite) the piece lists the checkpoints point into.
        self._build_acc = ParseAccumulator()
        self._built = 0
        self._acc: ParseAccumulator | None = None
        self._acc_end = -1
        self._cache: tuple[int, bool, Parse] | None = None
        self.sync()

    # ------------------------------------------------------------ building

    def sync(self) -> None:
        """Index events added since the last call (live runs) and extend the checkpoints."""
        events = self.analysis.parse_events
        for step, _ in events[len(self._keys) :]:
            self._keys.append(step)
        limit = self._streamed_end()  # terminal events are folded on demand
        while self._built < limit:
            target = min(limit, self._checkpoints[-1].events + self.every)
            acc = self._build_acc
            for _, event in events[self._built : target]:
                event.apply(acc)  # the event folds itself: one call per event on this 100k-event loop
            self._built = target
            if target - self._checkpoints[-1].events >= self.every:
                self._checkpoints.append(self._texts.checkpoint(target, acc))
        self._cache = None

    # ------------------------------------------------------------ queries

    def _live(self) -> bool:
        return self.analysis.finish_cause == RUNNING

    def _streamed_end(self) -> int:
        if self._live():
            return len(self._keys)
        return min(len(self._keys), self.analysis.terminal_events_from)

    def end_of(self, step: int) -> int:
        """How many events make the parse at ``step``."""
        end = bisect.bisect_right(self._keys, step)
        if self._live() or step < self.analysis.last_step:
            end = min(end, self._streamed_end())
        return end

    def at(self, step: int) -> Parse:
        end = self.end_of(step)
        final = not self._live() and step >= self.analysis.last_step
        if self._cache is not None and self._cache[0] == end and self._cache[1] == final:
            return self._cache[2]
        acc = self._accumulator_at(end)
        parse = acc.snapshot(partial=not final)
        self._cache = (end, final, parse)
        return parse

    def _accumulator_at(self, end: int) -> ParseAccumulator:
        events = self.analysis.parse_events
        if self._acc is None or end < self._acc_end or end - self._acc_end > self.every:
            i = bisect.bisect_right(self._checkpoints, end, key=lambda c: c.events) - 1
            checkpoint = self._checkpoints[max(0, i)]
            self._acc = self._texts.accumulator(checkpoint)
            self._acc_end = checkpoint.events
        acc = self._acc
        for _, event in events[self._acc_end : end]:
            event.apply(acc)
        self._acc_end = end
        return self._acc

    def events_at(self, step: int) -> list[ParseEvent]:
        """The events of ``step`` itself (the last step includes the terminal events)."""
        lo = bisect.bisect_left(self._keys, step)
        hi = self.end_of(step)
        return [event for _, event in self.analysis.parse_events[lo:hi]] if hi > lo else []

    def delta_at(self, step: int) -> StepDelta:
        return delta_of(self.events_at(step))
