"""`callscope bench capture` runs end to end on a small scale: every reader gets every line. No timing is asserted."""

from __future__ import annotations

import shutil

import pytest

from callscope.benchmarks import capture as bench


def test_chunk_bench_counts_every_chunk():
    result = bench.measure(chunks=200, rounds=1)
    assert set(result["modes"]) == set(bench.MODES)
    assert all(run["chunks"] == 200 for mode in result["modes"].values() for run in mode["runs"])
    assert result["ratio"] > 0 and result["target"] == bench.TARGET_RATIO


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_long_line_bench_gets_the_whole_line_through_every_reader():
    """A 300 KB line (the real bench sends 50 MB): curl, bare httpx and callscope each receive it whole."""
    result = bench.measure_long_line(size=300_000, rounds=1)  # raises if any reader lost a byte
    assert set(result["modes"]) == set(bench.LONG_MODES) == {"curl", "bare", "callscope"}
    assert result["ratio"] > 0 and result["ratio_bare"] > 0 and result["target"] == 2.0


def test_long_line_is_one_sse_line_of_the_asked_size():
    line = bench._long_line(10_000)
    assert len(line) == 10_000 and line.count(b"\n") == 2 and line.endswith(b"\n\n")
