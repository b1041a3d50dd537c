"""A corpus as the window browses it: rows, their cells and sort keys, filters, and the TTFD distribution.

The window's corpus table (File > Open folder) is a thin Qt adapter over :class:`CorpusRows`:
the recordings' verdicts as they arrive from the pool, the values each filter offers (rules,
models, client profiles seen so far), which rows a :class:`CorpusFilter` keeps, and the TTFD
histogram of the rows shown (:func:`ttfd_histogram`). Everything here is tested without a window.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from callscope.engine.analysis.report import format_seconds
from callscope.engine.corpus.summary import UNKNOWN
from callscope.engine.corpus.verdict import RecordingVerdict

#: Rule filter values beyond the rule ids themselves.
ANY_VIOLATION = "(any violation)"
CLEAN = "(clean)"
UNREADABLE = "(unreadable)"


@dataclass(frozen=True, slots=True)
class Column:
    """One column of the corpus table: its title, its text, and the key it sorts by."""

    title: str
    text: Callable[[RecordingVerdict, str], str]  # (verdict, the folder it is shown relative to) -> cell text
    key: Callable[[RecordingVerdict], Any]
    numeric: bool = False
    tip: str = ""


def _first_timed(v: RecordingVerdict):
    return next((r for r in v.runs if r.ttfd_ms is not None), None)


def _ttfd(v: RecordingVerdict, atomic: bool = False) -> float | None:
    run = _first_timed(v)
    if run is None:
        return None
    return run.ttfd_atomic_ms if atomic else run.ttfd_ms


def _number_key(value: float | None) -> float:
    return math.inf if value is None else value  # recordings without a value sort last


def relative(path: str, folder: str) -> str:
    try:
        shown = os.path.relpath(path, folder)
    except ValueError:
        return path
    return path if shown.startswith("..") else shown


COLUMNS: tuple[Column, ...] = (  # what a reader looks for first, first
    Column("Recording", lambda v, f: relative(v.path, f), lambda v: v.path),
    Column("Violations", lambda v, f: "" if v.error else f"{v.violation_count:,}",
           lambda v: -1 if v.error else v.violation_count, True),
    Column("Rules", lambda v, f: ", ".join(sorted(v.rules())), lambda v: (len(v.rules()), sorted(v.rules()))),
    Column("TTFD", lambda v, f: _seconds(_ttfd(v)), lambda v: _number_key(_ttfd(v)), True,
           "first delta as streamed (incremental), first timed run"),
    Column("Atomic TTFD", lambda v, f: _seconds(_ttfd(v, atomic=True)), lambda v: _number_key(_ttfd(v, atomic=True)),
           True, "when an atomic server would have sent its first delta"),
    Column("Model", lambda v, f: v.model or "", lambda v: (v.model is None, v.model or "")),
    Column("Server", lambda v, f: v.server or "", lambda v: (v.server is None, v.server or "")),
    Column("Kind", lambda v, f: v.kind or "-", lambda v: v.kind or "~"),
    Column("Calls", lambda v, f: "" if v.error else f"{v.calls:,}", lambda v: -1 if v.error else v.calls, True),
    Column("Clients failing", lambda v, f: ", ".join(sorted(p for p, n in v.clients().items() if n)),
           lambda v: sorted(p for p, n in v.clients().items() if n)),
    Column("First violation / why unreadable", lambda v, f: v.error or v.first_violation() or "",
           lambda v: v.error or v.first_violation() or ""),
)


def _seconds(ms: float | None) -> str:
    return "" if ms is None else format_seconds(ms)


@dataclass(frozen=True, slots=True)
class CorpusFilter:
    """Which recordings the table shows: by rule (or any violation, clean, unreadable), model, client, path text."""

    rule: str | None = None
    model: str | None = None
    client: str | None = None  # a profile: the recordings it failed on
    text: str = ""

    def matches(self, v: RecordingVerdict) -> bool:
        if self.rule is not None and not _rule_matches(self.rule, v):
            return False
        if self.model is not None and (v.model or UNKNOWN) != self.model:
            return False
        if self.client is not None and not v.clients().get(self.client):
            return False
        return not self.text or self.text.lower() in v.path.lower()


def _rule_matches(rule: str, v: RecordingVerdict) -> bool:
    if rule == UNREADABLE:
        return v.error is not None
    if v.error is not None:
        return False
    if rule == ANY_VIOLATION:
        return v.violation_count > 0
    if rule == CLEAN:
        return v.violation_count == 0
    return rule in v.rules()


class CorpusRows:
    """The recordings checked so far, in arrival order, and the values each filter can offer."""

    def __init__(self, folder: str = "") -> None:
        self.folder = folder
        self.rows: list[RecordingVerdict] = []
        self.rules: set[str] = set()
        self.models: set[str] = set()
        self.clients: set[str] = set()

    def add(self, verdicts: Iterable[RecordingVerdict]) -> bool:
        """Append ``verdicts``; True when a filter gained a value (a new rule, model or client)."""
        before = len(self.rules) + len(self.models) + len(self.clients)
        for v in verdicts:
            self.rows.append(v)
            if v.error is None:
                self.rules.update(v.rules())
                self.models.add(v.model or UNKNOWN)
                self.clients.update(v.clients())
        return len(self.rules) + len(self.models) + len(self.clients) != before

    def rule_choices(self) -> list[str]:
        return [ANY_VIOLATION, CLEAN, UNREADABLE, *sorted(self.rules)]

    def model_choices(self) -> list[str]:
        return sorted(self.models)

    def client_choices(self) -> list[str]:
        return sorted(self.clients)

    def cell(self, row: int, column: int) -> str:
        return COLUMNS[column].text(self.rows[row], self.folder)

    def key(self, row: int, column: int) -> Any:
        return COLUMNS[column].key(self.rows[row])

    def counts(self) -> tuple[int, int, int]:
        """(recordings, with violations, unreadable)."""
        bad = sum(1 for v in self.rows if v.error is None and v.violation_count)
        unreadable = sum(1 for v in self.rows if v.error is not None)
        return len(self.rows), bad, unreadable


@dataclass(frozen=True, slots=True)
class Histogram:
    """TTFD counts in shared log-spaced bins (ms): incremental and atomic, ready to draw as steps."""

    edges: list[float]  # len(counts) + 1 bin edges, ms
    incremental: list[int]
    atomic: list[int]

    @property
    def empty(self) -> bool:
        return not any(self.incremental) and not any(self.atomic)


#: Bins per decade of milliseconds in the window's TTFD plot.
BINS_PER_DECADE = 8


def ttfd_histogram(verdicts: Iterable[RecordingVerdict], per_decade: int = BINS_PER_DECADE) -> Histogram:
    """Every timed run's first delta, incremental and atomic, counted in log bins that cover both."""
    streamed: list[float] = []
    atomic: list[float] = []
    for v in verdicts:
        for run in v.runs:
            if run.ttfd_ms is not None:
                streamed.append(max(run.ttfd_ms, 0.1))
                if run.ttfd_atomic_ms is not None:
                    atomic.append(max(run.ttfd_atomic_ms, 0.1))
    values = streamed + atomic
    if not values:
        return Histogram([], [], [])
    low = math.floor(math.log10(min(values)) * per_decade)
    high = math.floor(math.log10(max(values)) * per_decade) + 1
    edges = [10 ** (k / per_decade) for k in range(low, high + 1)]

    def count(found: list[float]) -> list[int]:
        bins = [0] * (high - low)
        for value in found:
            bins[min(math.floor(math.log10(value) * per_decade) - low, high - low - 1)] += 1
        return bins

    return Histogram(edges, count(streamed), count(atomic))
