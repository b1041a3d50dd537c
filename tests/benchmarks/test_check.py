"""`callscope bench check`: one process and the pool side by side on a generated corpus (a small one here)."""

from __future__ import annotations

import json

import pytest

from callscope import benchmarks
from callscope.benchmarks.check import report_lines, run


def test_bench_check_measures_one_process_and_the_pool_side_by_side(capsys):
    code = run(benchmarks.defaults("check", json=True, count=40, jobs=2))
    doc = json.loads(capsys.readouterr().out)
    assert code in (0, 1)  # 1: above target on a busy machine; it still measured
    assert doc["bench"] == "check" and doc["recordings"] == 40 and doc["jobs"] == 2
    assert set(doc["runs"]) == {"one process", "pool"}
    for row in doc["runs"].values():
        assert row["seconds"] > 0 and row["recordings_per_s"] == pytest.approx(40 / row["seconds"], rel=0.01)
    assert doc["runs"]["one process"]["speedup"] == 1.0
    assert set(doc["cpu_ms_by_kind"]) == {"trace", "sse", "har", "fixture"}
    assert sum(doc["recordings_by_kind"].values()) == 40 and doc["target_s"] == 0.06
    text = "\n".join(report_lines(doc))
    assert "recordings/s" in text and "x one process" in text and "CPU per recording" in text
