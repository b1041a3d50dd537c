"""`callscope check PATH...`: a real corpus, real worker processes, real output files; errors are one line."""

from __future__ import annotations

import csv
import json
import os
import pty
import subprocess
import sys

import pytest

from callscope import cli
from tests.engine.corpus.test_summary import _same
from tests.support.paths import ROOT

COUNT = 80


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from callscope.benchmarks.corpus import generate

    out = tmp_path_factory.mktemp("check") / "corpus"
    generate(out, COUNT, seed=11)
    return out


def callscope(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "callscope", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, **kwargs)


def test_jsonl_streams_a_line_per_recording_then_the_summary_and_nothing_on_stderr(corpus):
    done = callscope("check", str(corpus), "--jsonl", "--jobs", "2")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", "no progress bar on a pipe"
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    *recordings, summary = lines
    assert len(recordings) == COUNT and len({r["path"] for r in recordings}) == COUNT
    assert summary["schema"] == "callscope.check/1" and summary["recordings"] == COUNT
    assert summary["violations"] == sum(sum(r.get("violations", {}).values()) for r in recordings)
    assert {"trace", "sse", "har", "fixture"} <= {r["kind"] for r in recordings}


def test_the_text_summary_and_strict(corpus, capsys):
    assert cli.main(["check", str(corpus), "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    for part in (f"checked {COUNT} recordings", "violations by rule:", "by model", "by server", "by client profile",
                 "TTFD", "worst recordings:", "2 worker processes"):
        assert part in out, part
    assert cli.main(["check", str(corpus), "--jobs", "1", "--strict"]) == 1  # the corpus breaks rules
    capsys.readouterr()
    clean = str(ROOT / "fixtures" / "formats")
    assert cli.main(["check", clean, "--strict"]) == 0, capsys.readouterr().out


def test_unreadable_recordings_are_listed_and_never_stop_the_run(tmp_path, capsys):
    (tmp_path / "good.jsonl").write_bytes((ROOT / "fixtures" / "formats" / "hermes_single.jsonl").read_bytes())
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "junk.sse").write_bytes(b"\xff\xfe not a stream")
    code = cli.main(["check", str(tmp_path), str(tmp_path / "gone.jsonl"), "--jobs", "2"])
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in out + err
    assert "unreadable (3):" in out
    assert f"{tmp_path / 'gone.jsonl'}: no such file or folder" in out
    assert f"{tmp_path / 'empty.jsonl'}: empty file" in out
    assert "checked 4 recordings" in out and "1 clean" in out
    assert cli.main(["check", str(tmp_path), "--strict"]) == 1  # an unreadable file is not a pass
    capsys.readouterr()


@pytest.mark.parametrize("argv, message", [
    (["check", "/nonexistent/x.jsonl"], "nothing to check (/nonexistent/x.jsonl: no such file or folder)"),
    (["check", "fixtures", "--jobs", "0"], "--jobs must be at least 1"),
    (["check", "fixtures", "--ray-address", "auto"], "--ray-address applies to --executor ray"),
    (["check", "fixtures", "--policy", "nope"], "unknown policy 'nope'"),
    (["check", "fixtures", "--summary-json", "/nonexistent/s.json"], "no such folder /nonexistent"),
])
def test_usage_errors_are_one_line_exit_2(argv, message, capsys):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_summary_and_table_files_in_json_csv_and_parquet(corpus, tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    files = {name: tmp_path / name for name in ("s.json", "s.csv", "s.parquet", "t.csv", "t.parquet")}
    assert cli.main(["check", str(corpus), "--summary-json", str(files["s.json"]), "--summary-csv",
                     str(files["s.csv"]), "--table", str(files["t.csv"])]) == 0
    assert cli.main(["check", str(corpus), "--summary-csv", str(files["s.parquet"]), "--table",
                     str(files["t.parquet"])]) == 0
    capsys.readouterr()
    summary = json.loads(files["s.json"].read_text())
    assert summary["recordings"] == COUNT and summary["by_rule"] and summary["ttfd_ms"]["incremental"]["p50"] > 0
    rows = list(csv.DictReader(files["s.csv"].open()))
    total = {r["metric"]: r["value"] for r in rows if r["section"] == "total"}
    assert int(total["recordings"]) == COUNT and int(total["violations"]) == summary["violations"]
    assert pq.read_table(files["s.parquet"]).num_rows == len(rows)
    table = list(csv.DictReader(files["t.csv"].open()))
    assert len(table) == COUNT and sum(int(r["violations"]) for r in table) == summary["violations"]
    parquet = pq.read_table(files["t.parquet"]).to_pylist()
    assert sorted(r["path"] for r in parquet) == sorted(r["path"] for r in table)
    assert {type(r["ttfd_ms"]) for r in parquet} <= {float, type(None)}  # numbers stay numbers


def test_a_terminal_gets_a_progress_bar_on_stderr(corpus):
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "callscope", "check", str(corpus), "--jobs", "2"], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=follower, text=True, timeout=300)
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:
                break
            if not data:
                break
            shown += data
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert done.returncode == 0
    text = shown.decode(errors="replace")
    assert "checking" in text and f"/{COUNT}" in text and "rec" in text, text
    assert "checking" not in done.stdout  # the summary itself is clean


def test_the_ray_executor_on_a_local_instance_gives_the_local_summary(corpus, tmp_path):
    local, remote = tmp_path / "local.json", tmp_path / "ray.json"
    done = callscope("check", str(corpus), "--summary-json", str(local))
    assert done.returncode == 0, done.stderr
    done = callscope("check", str(corpus), "--executor", "ray", "--ray-address", "local", "--jobs", "2",
                     "--summary-json", str(remote))
    assert done.returncode == 0, done.stderr
    assert "on Ray" in done.stdout and "Traceback" not in done.stderr
    assert _same(json.loads(remote.read_text()), json.loads(local.read_text()))


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_stops_the_pool_at_once_with_one_line(tmp_path, presses):
    """Ctrl+C stops the run between batches (the workers ignore SIGINT: no traceback from each) and the pool
    shuts down cleanly; a second press exits at once, workers included (they hold stdout open). Either
    way one line, exit 130, and never a hang (the first version hung now and then: an exception thrown
    into concurrent.futures, or workers ended mid-result, can leave its manager thread waiting forever)."""
    import signal
    import time

    from callscope.benchmarks.corpus import generate

    generate(tmp_path / "big", 3000, seed=2)
    proc = subprocess.Popen([sys.executable, "-m", "callscope", "check", str(tmp_path / "big"), "--jobs", "2",
                             "--jsonl"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert json.loads(proc.stdout.readline())["path"]  # the pool is running
        for _ in range(presses):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.3)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and err == "callscope: interrupted\n"
    assert len(out.splitlines()) < 2999  # it stopped, it did not finish
