"""The aggregate of a corpus: a monoid, so batches are summarised where they ran and merged anywhere.

:class:`Summary` adds one :class:`~.verdict.RecordingVerdict` at a time (:meth:`Summary.add`)
and merges with another summary (:meth:`Summary.merge`): a pool worker or a Ray task summarises
its batch, the caller merges the batches, and the result is the same whatever the split and the
order (tested). Its size does not grow with the corpus: TTFD percentiles come from a
log-binned histogram (:class:`LogHistogram`, 1% wide bins), the worst recordings are a bounded
top list, and unreadable files are counted all but listed up to :data:`LISTED_UNREADABLE`.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from callscope.engine.corpus.verdict import RecordingVerdict

SUMMARY_SCHEMA = "callscope.check/1"
#: How many of the worst recordings a summary keeps.
WORST = 10
#: How many unreadable files a summary lists by path (all are counted).
LISTED_UNREADABLE = 1000
#: The percentiles reported.
PERCENTILES = (50, 90, 99)
#: Key of recordings whose model or server is not known.
UNKNOWN = "(not recorded)"  # a text trace has no server, a fixture file neither server nor model


class LogHistogram:
    """Positive values in logarithmic bins, :data:`BINS_PER_DECADE` a decade (each 1% wide), plus zeros.

    Percentiles are the geometric middle of the bin the rank falls in: within 0.6% of the exact
    value, in a size that depends on the spread of the values, never on how many there are.
    """

    BINS_PER_DECADE = 230  # 10 ** (1 / 230) = 1.0101: one percent per bin

    __slots__ = ("bins", "zeros", "count")

    def __init__(self) -> None:
        self.bins: Counter[int] = Counter()
        self.zeros = 0  # values <= 0 (a first delta "at once")
        self.count = 0

    def add(self, value: float) -> None:
        self.count += 1
        if value <= 0:
            self.zeros += 1
        else:
            self.bins[math.floor(math.log10(value) * self.BINS_PER_DECADE)] += 1

    def merge(self, other: LogHistogram) -> None:
        self.bins.update(other.bins)
        self.zeros += other.zeros
        self.count += other.count

    def percentile(self, q: float) -> float | None:
        """The value at percentile ``q`` (0-100, nearest rank), or None when empty."""
        if not self.count:
            return None
        rank = max(1, math.ceil(q / 100 * self.count))
        if rank <= self.zeros:
            return 0.0
        seen = self.zeros
        for key in sorted(self.bins):
            seen += self.bins[key]
            if seen >= rank:
                return self.value(key)
        return self.value(max(self.bins))  # pragma: no cover - counts always add up

    @classmethod
    def value(cls, key: int) -> float:
        """The middle of bin ``key`` (geometric)."""
        return 10 ** ((key + 0.5) / cls.BINS_PER_DECADE)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"count": self.count}
        for q in PERCENTILES:
            value = self.percentile(q)
            out[f"p{q}"] = round(value, 3) if value is not None else None
        return out


@dataclass(slots=True)
class Tally:
    """Recordings in one group (a model, a server, a client profile) and their violations."""

    recordings: int = 0
    with_violations: int = 0
    violations: int = 0
    cpu_ms: float = 0.0  # what checking them cost (per kind of recording: what a cluster must budget)

    def add(self, violations: int, cpu_ms: float = 0.0) -> None:
        self.recordings += 1
        self.with_violations += violations > 0
        self.violations += violations
        self.cpu_ms += cpu_ms

    def merge(self, other: Tally) -> None:
        self.recordings += other.recordings
        self.with_violations += other.with_violations
        self.violations += other.violations
        self.cpu_ms += other.cpu_ms

    def to_json(self) -> dict[str, Any]:
        return {"recordings": self.recordings, "with_violations": self.with_violations, "violations": self.violations,
                "cpu_ms": round(self.cpu_ms, 3)}


@dataclass(order=True, slots=True)
class Worst:
    """One of the worst recordings: most distinct rules broken, then most violations (ties: by path)."""

    distinct: int
    violations: int
    path: str = field(compare=False)
    rules: list[str] = field(compare=False, default_factory=list)
    first: str | None = field(compare=False, default=None)

    def key(self) -> tuple[int, int, str]:
        # heap order: the least bad first; between equals the later path goes first (so the earliest stays)
        return (self.distinct, self.violations, _reversed(self.path))

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "violations": self.violations, "rules": self.rules, "first": self.first}


def _reversed(path: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in path) + (0,)


@dataclass(slots=True)
class Summary:
    """Everything ``callscope check`` prints at the end, for any number of recordings."""

    recordings: int = 0
    unreadable: int = 0
    unreadable_listed: list[tuple[str, str]] = field(default_factory=list)
    runs: int = 0
    calls: int = 0
    clean: int = 0  # readable recordings without a violation
    violations: int = 0
    by_rule: dict[str, Tally] = field(default_factory=dict)
    by_model: dict[str, Tally] = field(default_factory=dict)
    by_server: dict[str, Tally] = field(default_factory=dict)
    by_client: dict[str, Tally] = field(default_factory=dict)
    by_kind: dict[str, Tally] = field(default_factory=dict)
    ttfd: LogHistogram = field(default_factory=LogHistogram)
    ttfd_atomic: LogHistogram = field(default_factory=LogHistogram)
    untimed_runs: int = 0  # runs with a first delta but no clock (fixtures, SSE dumps): no TTFD in ms
    worst: list[tuple[tuple[int, int, tuple[int, ...]], Worst]] = field(default_factory=list)  # a heap
    cpu_ms: float = 0.0

    # ------------------------------------------------------------ building

    def add(self, verdict: RecordingVerdict) -> None:
        self.recordings += 1
        self.cpu_ms += verdict.cpu_ms
        if verdict.error is not None:
            self.unreadable += 1
            if len(self.unreadable_listed) < LISTED_UNREADABLE:
                self.unreadable_listed.append((verdict.path, verdict.error))
            return
        found = verdict.rules()
        total = sum(found.values())
        self.runs += len(verdict.runs)
        self.calls += verdict.calls
        self.violations += total
        self.clean += total == 0
        for rule, count in found.items():
            tally = self.by_rule.setdefault(rule, Tally())
            tally.add(count)
        cpu = verdict.cpu_ms
        _tally(self.by_model, verdict.model or UNKNOWN, total, cpu)
        _tally(self.by_server, verdict.server or UNKNOWN, total, cpu)
        _tally(self.by_kind, verdict.kind or UNKNOWN, total, cpu)
        for profile, count in verdict.clients().items():
            _tally(self.by_client, profile, count)
        for run in verdict.runs:
            if run.ttfd_ms is not None:
                self.ttfd.add(run.ttfd_ms)
                if run.ttfd_atomic_ms is not None:
                    self.ttfd_atomic.add(run.ttfd_atomic_ms)
            elif run.ttfd_step is not None:
                self.untimed_runs += 1
        if total:
            self._offer(Worst(len(found), total, verdict.path, sorted(found), verdict.first_violation()))

    def merge(self, other: Summary) -> Summary:
        """Add ``other`` into this summary (returns self)."""
        self.recordings += other.recordings
        self.unreadable += other.unreadable
        room = LISTED_UNREADABLE - len(self.unreadable_listed)
        self.unreadable_listed.extend(other.unreadable_listed[:max(room, 0)])
        self.runs += other.runs
        self.calls += other.calls
        self.clean += other.clean
        self.violations += other.violations
        self.cpu_ms += other.cpu_ms
        self.untimed_runs += other.untimed_runs
        for mine, theirs in ((self.by_rule, other.by_rule), (self.by_model, other.by_model),
                             (self.by_server, other.by_server), (self.by_client, other.by_client),
                             (self.by_kind, other.by_kind)):
            for key, tally in theirs.items():
                mine.setdefault(key, Tally()).merge(tally)
        self.ttfd.merge(other.ttfd)
        self.ttfd_atomic.merge(other.ttfd_atomic)
        for _, worst in other.worst:
            self._offer(worst)
        return self

    def _offer(self, worst: Worst) -> None:
        entry = (worst.key(), worst)
        if len(self.worst) < WORST:
            heapq.heappush(self.worst, entry)
        elif entry[0] > self.worst[0][0]:
            heapq.heapreplace(self.worst, entry)

    @classmethod
    def of(cls, verdicts: list[RecordingVerdict]) -> Summary:
        summary = cls()
        for verdict in verdicts:
            summary.add(verdict)
        return summary

    # ------------------------------------------------------------ reading

    @property
    def readable(self) -> int:
        return self.recordings - self.unreadable

    @property
    def with_violations(self) -> int:
        return self.readable - self.clean

    def worst_first(self) -> list[Worst]:
        return [w for _, w in sorted(self.worst, key=lambda e: e[0], reverse=True)]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SUMMARY_SCHEMA,
            "recordings": self.recordings,
            "runs": self.runs,
            "calls": self.calls,
            "verdicts": {"clean": self.clean, "with_violations": self.with_violations, "unreadable": self.unreadable},
            "violations": self.violations,
            "by_rule": _tallies(self.by_rule),
            "by_model": _tallies(self.by_model),
            "by_server": _tallies(self.by_server),
            "by_client": _tallies(self.by_client),
            "by_kind": _tallies(self.by_kind),
            "ttfd_ms": {"incremental": self.ttfd.to_json(), "atomic": self.ttfd_atomic.to_json(),
                        "untimed_runs": self.untimed_runs},
            "worst": [w.to_json() for w in self.worst_first()],
            "unreadable": [{"path": p, "reason": r} for p, r in self.unreadable_listed],
            "unreadable_not_listed": self.unreadable - len(self.unreadable_listed),
            "cpu_ms": round(self.cpu_ms, 3),
        }

    def table(self) -> list[dict[str, Any]]:
        """The summary as one long table (``section, key, metric, value``): the rows of its CSV and Parquet."""
        rows: list[dict[str, Any]] = []

        def row(section: str, key: str, metric: str, value: float | int | None) -> None:
            rows.append({"section": section, "key": key, "metric": metric, "value": value})

        for metric, value in (("recordings", self.recordings), ("runs", self.runs), ("calls", self.calls),
                              ("clean", self.clean), ("with_violations", self.with_violations),
                              ("unreadable", self.unreadable), ("violations", self.violations)):
            row("total", "", metric, value)
        for section, tallies in (("rule", self.by_rule), ("model", self.by_model), ("server", self.by_server),
                                 ("client", self.by_client), ("kind", self.by_kind)):
            for key, tally in sorted(tallies.items(), key=lambda kv: (-kv[1].violations, kv[0])):
                for metric, value in tally.to_json().items():
                    row(section, key, metric, value)
        for key, hist in (("incremental", self.ttfd), ("atomic", self.ttfd_atomic)):
            for metric, value in hist.to_json().items():
                row("ttfd_ms", key, metric, value)
        for worst in self.worst_first():
            row("worst", worst.path, "violations", worst.violations)
        for path, why in self.unreadable_listed:
            rows.append({"section": "unreadable", "key": path, "metric": why, "value": None})
        return rows


def _tally(groups: dict[str, Tally], key: str, violations: int, cpu_ms: float = 0.0) -> None:
    tally = groups.get(key)
    if tally is None:
        tally = groups[key] = Tally()
    tally.add(violations, cpu_ms)


def _tallies(groups: dict[str, Tally]) -> dict[str, dict[str, int]]:
    """Most violations first, then by name: the order a reader scans."""
    ordered = sorted(groups.items(), key=lambda kv: (-kv[1].violations, -kv[1].recordings, kv[0]))
    return {key: tally.to_json() for key, tally in ordered}
