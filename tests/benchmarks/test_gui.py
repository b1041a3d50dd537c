"""`callscope bench gui`'s launch measurement: a real `callscope gui FILE` process, to the trace on screen."""

from __future__ import annotations

import pytest

from callscope.benchmarks import gui as bench

pytestmark = pytest.mark.gui  # the child is a Qt window, and the bench reads its signal name from callscope.gui_main


def test_launch_to_the_trace_on_screen_is_measured_in_a_child_with_its_peak_rss(tmp_path):
    trace = tmp_path / "small.jsonl"
    bench.make_trace(trace, 300)
    opened = bench.measure_open(trace, runs=1)
    assert opened["open_ms"] > 0 and opened["open_ms_runs"] == [opened["open_ms"]]
    assert 50 < opened["open_rss_mb"] < 2000  # a Qt window's process, measured by wait4, in MB
