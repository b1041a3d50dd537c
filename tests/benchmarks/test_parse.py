"""The parse benchmark runs every format end to end (its numbers are read by people, not asserted)."""

import pytest

from callscope.benchmarks.parse import bench_format
from callscope.engine.formats import FORMAT_IDS


@pytest.mark.parametrize("format_id", FORMAT_IDS)
def test_bench_input_streams_and_reconstructs(format_id):
    result = bench_format(format_id, size=4096, step=4, reparse_samples=4)
    assert result.reconstructs
    assert result.steps > 1000
    assert result.first_kb_us > 0 and result.last_kb_us > 0
