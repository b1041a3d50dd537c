"""The trace reader's fast path (one decode, the JSON scanner at each line's start) reads what the careful
per-line parser reads, and hands it every file it is not sure of, so errors name the same line and reason."""

from __future__ import annotations

import random

import pytest

from callscope.engine.recordings import trace as trace_module
from callscope.engine.recordings.trace import TraceError, TraceHeader, TraceWriter, parse_trace


def _trace_bytes(tmp_path) -> bytes:
    path = tmp_path / "t.jsonl"
    header = TraceHeader(source="text", format="hermes", unit="token", tools=[{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object"}}}], description="fast path")
    with TraceWriter(path, header, flush_each=False) as writer:
        for i, piece in enumerate(["<tool_call>\n", '{"name": "f", ', '"arguments": {"a": "é', '\\n😀"}}\n', "</tool_call>"]):
            writer.write_step(i * 10.5, piece.encode())
        writer.write_step(60.0, b"\xff\xfe", (1, 2))  # bytes that are not UTF-8: a b64 step
        writer.end("stop", 70.0)
    return path.read_bytes()


def test_a_well_formed_trace_reads_alike_both_ways(tmp_path):
    raw = _trace_bytes(tmp_path)
    fast = trace_module._parse_well_formed(raw, "t")
    assert fast is not None and fast == trace_module._parse_trace(raw, "t")
    assert fast.steps[-1].tokens == (1, 2) and fast.end is not None


@pytest.mark.parametrize("seed", range(6))
def test_a_damaged_trace_is_read_or_refused_alike(tmp_path, seed):
    """Cut, doubled, swapped and corrupted lines: the fast path gives the careful parser's trace, or
    leaves the file to it (and then the error is the careful parser's own)."""
    raw = _trace_bytes(tmp_path)
    rng = random.Random(seed)
    for _ in range(40):
        lines = raw.split(b"\n")
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(lines))
            choice = rng.randrange(7)
            if choice == 0:
                lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
            elif choice == 1:
                lines.insert(i, lines[i])
            elif choice == 2:
                j = rng.randrange(len(lines))
                lines[i], lines[j] = lines[j], lines[i]
            elif choice == 3:
                lines[i] = lines[i] + b" " + lines[i]  # two records on one line
            elif choice == 4:
                lines[i] = b"  " + lines[i]
            elif choice == 5:
                lines[i] = lines[i].replace(b'"ms":', b'"ms":-', 1)
            else:
                lines[i] = lines[i].replace(b"step", b"stop", 1)
        damaged = b"\n".join(lines)
        try:
            careful = trace_module._parse_trace(damaged, "t")
        except TraceError as exc:
            assert trace_module._parse_well_formed(damaged, "t") is None
            with pytest.raises(TraceError) as raised:
                parse_trace(damaged, "t")
            assert str(raised.value) == str(exc)
            continue
        fast = trace_module._parse_well_formed(damaged, "t")
        assert fast is None or fast == careful
        assert parse_trace(damaged, "t") == careful
