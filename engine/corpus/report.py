"""A corpus summary as people and tools read it: text, a row per recording, CSV and Parquet files.

The text is what ``callscope check`` prints at the end; :func:`recording_row` is one row of the
per-recording table (``--table``, the window's corpus table reads the same fields); the summary's
own long table (:meth:`~.summary.Summary.table`) and the per-recording rows are written as CSV by
the standard library and as Parquet by pyarrow, where it is installed (``callscope[parquet]``).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable
from typing import Any

from callscope.engine.analysis.report import format_seconds
from callscope.engine.corpus.summary import Summary, Tally
from callscope.engine.corpus.verdict import RecordingVerdict

#: Columns of the per-recording table, in order.
RECORDING_COLUMNS = ("path", "kind", "model", "server", "runs", "calls", "violations", "rules", "clients_failing",
                     "ttfd_ms", "ttfd_atomic_ms", "first_violation", "error", "cpu_ms")
#: Rows of a breakdown printed at most (the JSON and the tables hold them all).
SHOWN_GROUPS = 12


class ExportError(Exception):
    """A table that cannot be written (no pyarrow, an unwritable path): one line."""


# ------------------------------------------------------------------ text


def summary_text(summary: Summary, seconds: float | None = None, workers: str | None = None) -> str:
    """The aggregate as ``callscope check`` prints it."""
    s = summary
    lines = []
    took = ""
    if seconds is not None:
        rate = f", {s.recordings / seconds:,.0f} recordings/s" if seconds > 0 else ""
        took = f" in {seconds:.2f} s" + (f" ({workers}{rate})" if workers else rate)
    lines.append(f"checked {s.recordings:,} recording{'s' if s.recordings != 1 else ''}{took}: "
                 f"{s.runs:,} runs, {s.calls:,} calls")
    lines.append(f"verdicts: {s.clean:,} clean, {s.with_violations:,} with violations ({s.violations:,} in all), "
                 f"{s.unreadable:,} unreadable")
    if s.by_rule:
        lines += ["", "violations by rule:"]
        width = max(len(k) for k in s.by_rule)
        for rule, tally in _ordered(s.by_rule):
            lines.append(f"  {rule:<{width}}  {tally.violations:>9,} in {tally.recordings:>8,} "
                         f"recording{'s' if tally.recordings != 1 else ''}")
    for title, groups in (("by model", s.by_model), ("by server", s.by_server), ("by client profile", s.by_client)):
        if groups:
            lines += ["", *_breakdown(title, groups)]
    lines += ["", *_ttfd(s)]
    worst = s.worst_first()
    if worst:
        lines += ["", "worst recordings:"]
        for w in worst:
            lines.append(f"  {w.path}  ({w.distinct} rule{'s' if w.distinct != 1 else ''}, {w.violations:,} "
                         f"violation{'s' if w.violations != 1 else ''}: {', '.join(w.rules)})")
    if s.unreadable:
        lines += ["", f"unreadable ({s.unreadable:,}):"]
        lines += [f"  {path}: {why}" for path, why in s.unreadable_listed]
        if s.unreadable > len(s.unreadable_listed):
            lines.append(f"  … and {s.unreadable - len(s.unreadable_listed):,} more (see --jsonl)")
    return "\n".join(lines)


def _ordered(groups: dict[str, Tally]) -> list[tuple[str, Tally]]:
    return sorted(groups.items(), key=lambda kv: (-kv[1].violations, -kv[1].recordings, kv[0]))


def _breakdown(title: str, groups: dict[str, Tally]) -> list[str]:
    ordered = _ordered(groups)
    shown = ordered[:SHOWN_GROUPS]
    width = max(max(len(k) for k, _ in shown) + 2, len(title))
    lines = [f"{title:<{width}}  {'recordings':>10}  {'with violations':>15}  {'violations':>10}"]
    for key, t in shown:
        lines.append(f"  {key:<{width - 2}}  {t.recordings:>10,}  {t.with_violations:>15,}  {t.violations:>10,}")
    if len(ordered) > len(shown):
        lines.append(f"  … {len(ordered) - len(shown):,} more (see --summary-json)")
    return lines


def _ttfd(s: Summary) -> list[str]:
    lines = [f"{'TTFD':<12}  {'p50':>9}  {'p90':>9}  {'p99':>9}  {'runs':>9}"]
    for name, hist in (("incremental", s.ttfd), ("atomic", s.ttfd_atomic)):
        values = [format_seconds(hist.percentile(q)) if hist.count else "-" for q in (50, 90, 99)]
        lines.append(f"  {name:<10}  {values[0]:>9}  {values[1]:>9}  {values[2]:>9}  {hist.count:>9,}")
    if s.untimed_runs:
        lines.append(f"  (and {s.untimed_runs:,} untimed runs: fixtures and SSE dumps keep no clock)")
    return lines


# ------------------------------------------------------------------ tables


def recording_row(v: RecordingVerdict) -> dict[str, Any]:
    """One recording as a flat row (:data:`RECORDING_COLUMNS`); TTFD of its first timed run."""
    timed = next((r for r in v.runs if r.ttfd_ms is not None), None)
    rules = v.rules()
    return {
        "path": v.path, "kind": v.kind, "model": v.model, "server": v.server, "runs": len(v.runs),
        "calls": v.calls, "violations": sum(rules.values()), "rules": ";".join(sorted(rules)),
        "clients_failing": ";".join(sorted(p for p, n in v.clients().items() if n)),
        "ttfd_ms": timed.ttfd_ms if timed else None, "ttfd_atomic_ms": timed.ttfd_atomic_ms if timed else None,
        "first_violation": v.first_violation(), "error": v.error, "cpu_ms": round(v.cpu_ms, 3),
    }


def write_table(path: str, rows: Iterable[dict[str, Any]], columns: tuple[str, ...]) -> None:
    """``rows`` as CSV, or as Parquet when ``path`` ends in ``.parquet``."""
    if str(path).lower().endswith(".parquet"):
        write_parquet(path, list(rows), columns)
    else:
        write_csv(path, rows, columns)


def write_csv(path: str, rows: Iterable[dict[str, Any]], columns: tuple[str, ...]) -> None:
    try:
        with open(path, "w", encoding="utf-8", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_parquet(path: str, rows: list[dict[str, Any]], columns: tuple[str, ...]) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportError(f"cannot write {os.path.basename(path)}: Parquet needs pyarrow "
                          "(pip install 'callscope[parquet]'); a .csv path writes CSV") from None
    table = pa.Table.from_pylist(rows, schema=_schema(pa, rows, columns))
    try:
        pq.write_table(table, path)
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc}") from None


SUMMARY_COLUMNS = ("section", "key", "metric", "value")


def _schema(pa, rows: list[dict[str, Any]], columns: tuple[str, ...]):
    """Column types from the values (a column of numbers with gaps stays a number column, not strings)."""
    fields = []
    for name in columns:
        values = [r.get(name) for r in rows if r.get(name) is not None]
        if values and all(isinstance(x, int) and not isinstance(x, bool) for x in values):
            kind = pa.int64()
        elif values and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in values):
            kind = pa.float64()
        else:
            kind = pa.string()
        fields.append(pa.field(name, kind))
    return pa.schema(fields)
