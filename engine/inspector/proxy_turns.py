"""The window's Proxy source, Qt-free: the list of turns, from a running proxy or from a session folder.

A turn is one exchange through the recording proxy (:mod:`callscope.engine.capture.proxy`).
The window lists them as they happen, whichever way it watches them:

- a proxy it started itself: the proxy's observer calls hand over each
  :class:`~callscope.engine.capture.proxy.Turn` (:meth:`TurnList.put_turn`);
- a session folder (a running ``callscope proxy --record-dir``'s, or one left
  behind): :class:`SessionReader` reads the folder's index (``turns.jsonl``,
  one record per finished turn) and its turn traces, and on each
  :meth:`SessionReader.poll` gives the rows that are new or changed: a turn
  trace that appears is a turn in progress, its index record ends it.

Rows are plain data (:class:`TurnRow`); the pane shows :attr:`TurnRow.summary`,
the same line ``callscope proxy`` prints.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callscope.engine.capture.proxy import INDEX_NAME, Turn, turn_number
from callscope.engine.capture.proxy.session import TURN_PREFIX, turn_file_name
from callscope.engine.core.json_text import DOCUMENT_DEPTH, loads

#: The longest index line read (a turn's record is a few hundred bytes; a corrupt file is not read whole).
MAX_INDEX_LINE = 1 << 20


@dataclass(slots=True)
class TurnRow:
    """One turn as the list shows it."""

    number: int
    summary: str
    done: bool = False
    streaming: bool = True  # until the answer says otherwise
    protocol: str | None = None
    file: Path | None = None  # its capture trace, when recorded
    violations: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def openable(self) -> bool:
        """A streamed turn has something to show in the panes (live, or its recording)."""
        return self.streaming

    @property
    def failed(self) -> bool:
        return self.done and (bool(self.violations) or self.error is not None)


def row_of_turn(turn: Turn) -> TurnRow:
    """A running proxy's turn as a row: its index record once judged (the fields the folder keeps), else its line."""
    judged = bool(turn.analyses) or turn.judged_index is not None
    if turn.done and (judged or not turn.streaming):
        return row_of_record(turn.index_record(), turn.record_path.parent if turn.record_path is not None else None)
    return TurnRow(turn.number, turn.summary(), done=False, streaming=turn.streaming, protocol=turn.protocol,
                   file=turn.record_path)


def row_of_record(record: dict[str, Any], folder: Path | None) -> TurnRow:
    """A finished turn's index record (``turns.jsonl``) as a row."""
    number = record.get("turn")
    number = number if isinstance(number, int) and not isinstance(number, bool) else 0
    name = record.get("file")
    file = folder / name if folder is not None and isinstance(name, str) and "/" not in name and name else None
    violations = record.get("violations")
    error = record.get("error")
    summary = record.get("summary")
    return TurnRow(
        number,
        summary if isinstance(summary, str) else f"#{number}",
        done=True,
        streaming=bool(record.get("stream")),
        protocol=record.get("protocol") if isinstance(record.get("protocol"), str) else None,
        file=file,
        violations=[v for v in violations if isinstance(v, str)] if isinstance(violations, list) else [],
        error=error if isinstance(error, str) else None,
    )


class TurnList:
    """The turns in order of their number; :meth:`put` adds or replaces one and says where it is."""

    def __init__(self) -> None:
        self.rows: list[TurnRow] = []
        self._at: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.rows)

    def get(self, number: int) -> TurnRow | None:
        at = self._at.get(number)
        return self.rows[at] if at is not None else None

    def put(self, row: TurnRow) -> int:
        """Add ``row`` (or replace the row of its number); its position. Turns arrive almost always in order."""
        at = self._at.get(row.number)
        if at is not None:
            self.rows[at] = row
            return at
        at = len(self.rows)
        while at > 0 and self.rows[at - 1].number > row.number:
            at -= 1
        self.rows.insert(at, row)
        if at == len(self.rows) - 1:
            self._at[row.number] = at
        else:
            self._at = {r.number: i for i, r in enumerate(self.rows)}
        return at

    def put_turn(self, turn: Turn) -> int:
        return self.put(row_of_turn(turn))

    def latest_open(self) -> TurnRow | None:
        """The newest streamed turn (what the window follows)."""
        return next((r for r in reversed(self.rows) if r.openable), None)


class SessionReader:
    """Watches a proxy's session folder: :meth:`poll` reads what was added since the last poll."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.turns = TurnList()
        self._offset = 0  # bytes of the index read (whole lines only)
        self._seen_files: set[str] = set()
        #: Size of each in-progress turn's trace at the last poll: a turn that grew is shown again.
        self.sizes: dict[int, int] = {}

    def poll(self) -> list[TurnRow]:
        """Rows new or changed since the last poll: turns that ended (index), turns that started (a trace appeared)."""
        changed: dict[int, TurnRow] = {}
        for path in sorted(self.folder.glob(f"{TURN_PREFIX}*.jsonl")):
            number = turn_number(path)
            if number is None or path.name in self._seen_files:
                continue
            self._seen_files.add(path.name)
            if self.turns.get(number) is None:
                row = TurnRow(number, f"#{number} {path.name}: in progress", file=path)
                self.turns.put(row)
                changed[number] = row
        for record in self._new_records():
            row = row_of_record(record, self.folder)
            if row.number:
                self.turns.put(row)
                changed[row.number] = row
                self.sizes.pop(row.number, None)
        return sorted(changed.values(), key=lambda r: r.number)

    def grown(self, number: int) -> bool:
        """The in-progress turn's trace has grown since the last look (its view is worth reloading)."""
        row = self.turns.get(number)
        if row is None or row.file is None:
            return False
        try:
            size = row.file.stat().st_size
        except OSError:
            return False
        before = self.sizes.get(number)
        self.sizes[number] = size
        return before != size

    def turn_path(self, number: int) -> Path:
        return self.folder / turn_file_name(number)

    def _new_records(self) -> list[dict[str, Any]]:
        index = self.folder / INDEX_NAME
        try:
            with open(index, "rb") as f:
                f.seek(self._offset)
                data = f.read(MAX_INDEX_LINE * 16)
        except OSError:
            return []
        end = data.rfind(b"\n")
        if end < 0:
            return []
        self._offset += end + 1
        records = []
        for raw in data[: end + 1].splitlines():
            try:
                record = loads(raw.decode("utf-8"), DOCUMENT_DEPTH)
            except (ValueError, UnicodeDecodeError):
                continue  # a damaged line: the others still list
            if isinstance(record, dict):
                records.append(record)
        return records
