"""The quirks library (``fixtures/quirks``), and what each client makes of a stream, as a matrix.

Every quirk is a capture trace whose header says what it is, who sent it, and what
every real client library ended with (``extra.outcomes``, from the differential
test). :func:`library` reads them; :func:`client_matrix` says, for any captured
stream, what each client profile ends with: ``ok``, ``wrong`` (and what it got) or
``raises`` (and what); :func:`readme_table` is docs/quirks.md's quirk × client table, made
from the stored outcomes of the real libraries (a test keeps the doc in step).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.core import rules
from callscope.engine.core.shipped import fixtures_dir
from callscope.engine.recordings.capture_trace import analyze_capture_trace
from callscope.engine.recordings.trace import Trace, read_trace
from callscope.engine.streams.clients import GENERATED_ID, PROFILES

OK, WRONG, RAISES = "ok", "wrong", "raises"


@dataclass(frozen=True)
class Quirk:
    id: str
    protocol: str
    what: str
    sent_by: str
    sources: tuple[str, ...]
    outcomes: dict[str, dict[str, Any]]
    measured_with: dict[str, str]
    trace: Trace = field(repr=False)


def quirks_dir() -> Path:
    return fixtures_dir() / "quirks"


def library() -> list[Quirk]:
    """Every shipped quirk, in name order."""
    found = []
    for path in sorted(quirks_dir().glob("*.jsonl")):
        trace = read_trace(path)
        extra = trace.header.extra
        quirk = extra.get("quirk") or {}
        found.append(Quirk(quirk.get("id", path.stem), quirk.get("protocol", extra.get("protocol", "")),
                           trace.header.description, quirk.get("sent_by", ""), tuple(quirk.get("sources", ())),
                           extra.get("outcomes", {}), extra.get("measured_with", {}), trace))
    return found


# ---------------------------------------------------------------- a cell: what one client ends with


@dataclass(frozen=True)
class Cell:
    kind: str  # ok | wrong | raises
    detail: str = ""  # what it got, or what it raised

    @property
    def text(self) -> str:
        return self.kind if not self.detail else f"{self.kind}: {self.detail}"

    def to_json(self) -> dict[str, str]:
        return {"outcome": self.kind, "detail": self.detail}


def _short(text: str | None, limit: int = 40) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _same_arguments(meant: str, got: str | None) -> bool:
    if got == meant:
        return True
    try:
        return json.loads(got or "") == json.loads(meant)
    except ValueError:
        return False


def stored_cell(outcome: dict[str, Any], meant: list[tuple[str | None, str | None, str]]) -> Cell:
    """What a real library ended with (a stored outcome) against the calls the stream meant."""
    if "raises" in outcome:
        return Cell(RAISES, _short(outcome["raises"], 60))
    calls = outcome.get("calls", [])
    if len(calls) != len(meant):
        names = ", ".join(repr(c.get("name")) for c in calls) or "none"
        return Cell(WRONG, f"{len(calls)} calls ({_short(names, 50)})")
    for call, (call_id, name, arguments) in zip(calls, meant):
        if call.get("invalid"):
            return Cell(WRONG, f"{call.get('name')!r} flagged invalid")
        if call.get("name") != name:
            return Cell(WRONG, f"name {_short(call.get('name'))!r}")
        got_id = call.get("id")
        if got_id != call_id and not (got_id == GENERATED_ID and call_id is None):
            return Cell(WRONG, f"id {_short(got_id)!r}")
        if call.get("not_string"):
            return Cell(WRONG, "arguments not a string")
        if not _same_arguments(arguments, call.get("arguments")):
            return Cell(WRONG, f"arguments {_short(call.get('arguments'))!r}")
    return Cell(OK)


def meant_calls(analysis: Analysis) -> list[tuple[str | None, str | None, str]]:
    return [(c.id or None, c.name or None, c.streamed_arguments) for c in analysis.calls]


def predicted_cells(analysis: Analysis) -> dict[str, Cell]:
    """What each profile that read a captured stream ends with, from the analysis's per-call verdicts."""
    cells: dict[str, Cell] = {}
    for profile in analysis.source.extra.get("clients", []):
        verdicts = [next((v for v in call.clients if v["profile"] == profile), None) for call in analysis.calls]
        raised = next((v["error"] for v in verdicts if v and v.get("error")), None)
        if raised is None:
            raised = next((v.detail.split(" raised ", 1)[1] for v in analysis.violations
                           if v.rule == rules.CLIENT_ERROR and v.detail.startswith(f"{profile} raised ")), None)
        if raised is not None:
            cells[profile] = Cell(RAISES, _short(raised.split(" reading ")[0], 60))
            continue
        wrong = next((v for v in verdicts if v and not v.get("matches")), None)
        extra = next((v for v in analysis.violations if v.rule == rules.CLIENT_MISMATCH
                      and v.detail.startswith(f"{profile} assembles ") and v.call_index is None), None)
        if wrong is not None:
            flagged = " (flagged invalid)" if wrong.get("invalid") else ""
            cells[profile] = Cell(WRONG, f"{_short(wrong.get('name'))!r}, {_short(wrong.get('arguments'))!r}"
                                         f"{flagged}")
        elif extra is not None:
            cells[profile] = Cell(WRONG, _short(extra.detail[len(profile) + 12:], 60))
        else:
            cells[profile] = Cell(OK)
    return cells


def client_matrix(analyses: list[tuple[str, Analysis]]) -> tuple[list[str], list[tuple[str, str, dict[str, Cell]]]]:
    """``(profiles, rows)``: each row a captured stream's name, protocol and cell per profile that read it."""
    rows = []
    seen: dict[str, None] = {}
    for name, analysis in analyses:
        cells = predicted_cells(analysis)
        seen.update(dict.fromkeys(cells))
        rows.append((name, str(analysis.source.extra.get("protocol", "")), cells))
    profiles = [p for p in PROFILES if p in seen]
    return profiles, rows


# ---------------------------------------------------------------- the table of docs/quirks.md

_MARK = {OK: "✓", WRONG: "✗", RAISES: "raises"}


def readme_table() -> str:
    """The quirk × client table docs/quirks.md shows: what each real library ended with (stored outcomes)."""
    quirks = library()
    profiles = [p for p in PROFILES if any(p in q.outcomes for q in quirks)]
    rows = ["| quirk | " + " | ".join(f"`{p}`" for p in profiles) + " |",
            "| --- |" + " --- |" * len(profiles)]
    for quirk in quirks:
        meant = meant_calls(analyze_capture_trace(quirk.trace))
        cells = []
        for profile in profiles:
            outcome = quirk.outcomes.get(profile)
            if outcome is None:
                cells.append("")
                continue
            cell = stored_cell(outcome, meant)
            detail = cell.detail.split(":")[0] if cell.kind == RAISES else cell.detail
            cells.append(_MARK[cell.kind] if cell.kind == OK else
                         f"{_MARK[cell.kind]} {detail}".replace("|", "\\|"))
        rows.append(f"| `{quirk.id}` | " + " | ".join(cells) + " |")
    return "\n".join(rows)
