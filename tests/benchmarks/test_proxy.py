"""`callscope bench proxy` end to end on tiny streams: every route, the neighbour, the verdict's time and CPU.

No timing is asserted (benches report for people to read): that the measurements exist and are sane.
"""

from __future__ import annotations

import os

import pytest

from callscope import cli
from callscope.benchmarks import proxy as bench


def test_the_proxy_bench_measures_time_to_verdict_cpu_and_the_neighbour_rounds():
    result = bench.measure(burst=300, paced=20, interval_ms=1.0, rounds=1, neighbour=True)
    assert set(result["runs"]["burst"]) == {"direct", "proxy", "direct + neighbour", "proxy + neighbour"}
    assert set(result["runs"]["paced"]) == {"direct", "proxy"}
    assert result["time_to_verdict_s"] >= 0 and len(result["time_to_verdict_runs_s"]) == 1
    assert result["proxy_cpu_us_per_chunk"] >= 0 and result["verdict_cpu_us_per_chunk"] >= 0
    assert result["throughput_ratio_with_neighbour"] > 0


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="CPU per chunk reads /proc")
def test_cpu_is_read_from_proc_for_a_process_and_its_children():
    assert bench._cpu_seconds(os.getpid()) > 0
    assert bench._cpu_seconds(2**22 + 12345) == 0.0  # gone: nothing, not an error


def test_vs_mitmdump_without_mitmdump_is_one_line(tmp_path, capsys):
    missing = tmp_path / "mitmdump"
    assert cli.main(["bench", "proxy", "--vs", "mitmdump", "--mitmdump", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no mitmdump at" in err and "callscope[mitmproxy]" in err


@pytest.mark.skipif(bench.mitmdump_path() is None, reason="needs mitmdump (the callscope[mitmproxy] extra) on PATH")
def test_with_mitmdump_and_a_neighbour_every_route_is_read_under_load_too():
    result = bench.measure(burst=300, paced=20, interval_ms=1.0, rounds=1, neighbour=True,
                           mitmdump=bench.mitmdump_path())
    assert set(result["runs"]["burst"]) == {"direct", "proxy", "mitmdump", "direct + neighbour",
                                            "proxy + neighbour", "mitmdump + neighbour"}
    assert result["throughput_vs_mitmdump"] > 0 and result["throughput_vs_mitmdump_with_neighbour"] > 0
    assert result["mitmdump_cpu_us_per_chunk"] > 0
