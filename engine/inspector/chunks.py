"""The emitted-deltas pane's data: chunk rows, raw JSON, and per-call arguments at the cursor.

Rows are computed on demand from the chunk list (a table shows a few dozen at
a time); the arguments each call has accumulated by any chunk are answered
from per-call prefix lengths, so moving the cursor never re-joins fragments.
"""

from __future__ import annotations

import bisect
import json
from array import array
from dataclasses import dataclass

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.core.wire import ARGUMENTS, FINISH, HEADER, ROLE, WireChunk, chunk_json

COLUMNS = ("step", "time", "index", "kind", "fragment")
#: Rows kept formatted (a screenful many times over); dropped all at once past it.
ROW_CACHE = 4096


def fragment_text(chunk: WireChunk, limit: int = 200, cause: str | None = None) -> str:
    """One-line summary of a chunk's payload for the table.

    A stream that ended without a finish_reason (stopped, failed) says so in words,
    never as a Python ``None``; ``cause`` is the analysis' finish cause.
    """
    if chunk.kind == ROLE:
        body = "role: assistant"
    elif chunk.kind == FINISH:
        if chunk.finish_reason is None:
            body = f"no finish_reason (stream {cause})" if cause else "no finish_reason"
        else:
            body = f"finish_reason: {chunk.finish_reason}"
    elif chunk.kind == HEADER:
        body = f"{chunk.name} {chunk.call_id}  " + json.dumps(chunk.text, ensure_ascii=False)
    else:
        body = json.dumps(chunk.text, ensure_ascii=False)
    return body if len(body) <= limit else body[: limit - 1] + "…"


def time_text(ms: float | None) -> str:
    """Seconds with millisecond precision, always: a column never mixes ``0.0 ms`` with ``1.104 s``."""
    if ms is None:
        return "–"
    return f"{ms / 1000:.3f} s"


@dataclass(frozen=True, slots=True)
class ChunkRow:
    step: int
    time: str
    index: str
    kind: str
    fragment: str


class ChunkIndex:
    """Lookups over an analysis' chunk list (which may grow during a live run)."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.steps: list[int] = []
        self._rows: dict[int, ChunkRow] = {}
        # index -> (chunk numbers, cumulative lengths, texts); the numbers as machine integers (one per chunk)
        self._per_call: dict[int, tuple[array, array, list[str]]] = {}
        self.sync()

    def sync(self) -> int:
        chunks = self.analysis.chunks
        start = len(self.steps)
        for number in range(start, len(chunks)):
            chunk = chunks[number]
            self.steps.append(chunk.step)
            if chunk.kind in (HEADER, ARGUMENTS) and chunk.index is not None:
                entry = self._per_call.get(chunk.index)
                if entry is None:
                    entry = self._per_call[chunk.index] = (array("q"), array("q"), [])
                numbers, lengths, texts = entry
                numbers.append(number)
                lengths.append((lengths[-1] if lengths else 0) + len(chunk.text))
                texts.append(chunk.text)
        return len(chunks) - start

    def __len__(self) -> int:
        return len(self.steps)

    def count_until(self, step: int) -> int:
        """How many chunks went out at or before ``step``."""
        return bisect.bisect_right(self.steps, step)

    def row(self, number: int) -> ChunkRow:
        """The table's cells for chunk ``number`` (kept: a table asks for each cell of a row, every paint)."""
        row = self._rows.get(number)
        if row is None:
            if len(self._rows) >= ROW_CACHE:
                self._rows.clear()
            row = self._rows[number] = self._make_row(number)
        return row

    def _make_row(self, number: int) -> ChunkRow:
        chunk = self.analysis.chunks[number]
        return ChunkRow(
            chunk.step,
            time_text(chunk.ms),
            "" if chunk.index is None else str(chunk.index),
            chunk.kind,
            fragment_text(chunk, cause=self.analysis.finish_cause),
        )

    def raw_json(self, number: int, indent: int | None = None) -> str:
        """The ``chat.completion.chunk`` as the client received it (compact, like the SSE line)."""
        return json.dumps(chunk_json(self.analysis.chunks[number], self.analysis.identity), ensure_ascii=False, indent=indent)

    def delta_steps(self) -> list[int]:
        """Distinct steps at which something other than the role chunk went out."""
        seen: list[int] = []
        for chunk, step in zip(self.analysis.chunks, self.steps):
            if chunk.kind != ROLE and (not seen or seen[-1] != step):
                seen.append(step)
        return seen

    def call_arguments_until(self, count: int) -> list[tuple[int, str, str, str]]:
        """(index, id, name, arguments so far) per call, counting the first ``count`` chunks."""
        out = []
        chunks = self.analysis.chunks
        for index in sorted(self._per_call):
            numbers, lengths, texts = self._per_call[index]
            k = bisect.bisect_left(numbers, count)
            if k == 0:
                continue
            header = chunks[numbers[0]]
            joined = "".join(texts) if len(texts) > 1 else texts[0]
            if len(texts) > 1:
                texts[:] = [joined]  # keep the join; lengths still index into it
            out.append((index, header.call_id or "", header.name or "", joined[: lengths[k - 1]]))
        return out
