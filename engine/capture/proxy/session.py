"""A proxy session's folder: one capture trace per streamed turn, and an index of every turn.

``--record-dir DIR`` gets a new folder per proxy run, ``DIR/YYYYMMDD-HHMMSS``
(a suffix when two start in the same second), holding ``turn-0001.jsonl``,
``turn-0002.jsonl``... (capture traces, each readable by ``callscope replay``
and written as the stream arrives) and ``turns.jsonl``, one JSON object per
finished turn, streamed or not (:meth:`~.turn.Turn.index_record`). The window
attaches to such a folder (a running CLI proxy's, or one left behind) by
reading the same files.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from callscope.engine.core.json_text import dumps

INDEX_NAME = "turns.jsonl"
TURN_PREFIX = "turn-"


def turn_file_name(number: int) -> str:
    return f"{TURN_PREFIX}{number:04d}.jsonl"


def turn_number(path: Path) -> int | None:
    """The turn number of a session folder's trace file (``turn-0012.jsonl`` -> 12), else None."""
    stem = path.stem
    if path.suffix != ".jsonl" or not stem.startswith(TURN_PREFIX):
        return None
    digits = stem[len(TURN_PREFIX):]
    return int(digits) if digits.isdigit() else None


class SessionFolder:
    """The folder one proxy run records into; made when the proxy starts."""

    def __init__(self, parent: str | os.PathLike[str]) -> None:
        parent = Path(parent)
        parent.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for attempt in range(1000):
            path = parent / (stamp if attempt == 0 else f"{stamp}-{attempt}")
            try:
                path.mkdir()
            except FileExistsError:
                continue
            break
        else:  # pragma: no cover - a thousand proxies started in one second
            raise FileExistsError(f"{parent}: no free session folder name for {stamp}")
        self.path = path
        self.index = path / INDEX_NAME

    def turn_path(self, number: int) -> Path:
        return self.path / turn_file_name(number)

    def add(self, record: dict[str, Any]) -> None:
        """Append one finished turn to the index (one line, written whole and flushed)."""
        with open(self.index, "a", encoding="utf-8", newline="\n") as out:
            out.write(dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")


def is_session_folder(path: str | os.PathLike[str]) -> bool:
    """A folder a proxy recorded into: it has the index or at least one turn trace."""
    folder = Path(path)
    if not folder.is_dir():
        return False
    return (folder / INDEX_NAME).is_file() or any(turn_number(p) is not None for p in folder.glob(f"{TURN_PREFIX}*"))
