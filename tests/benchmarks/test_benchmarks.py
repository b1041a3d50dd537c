"""The benchmarks are one package outside the product, with one shape; `callscope bench NAME` dispatches to it.

No timing is asserted here (benches report ratios for people to read); these tests check the
layout, the dispatch and that the quick benches run end to end, child processes included.
"""

from __future__ import annotations

import argparse
import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from callscope import benchmarks, cli
from tests.support.paths import ROOT

HEAVY = ("httpx", "llama_cpp", "PySide6", "partial_json_parser")


def _python_files(folder: str) -> list[Path]:
    return sorted((ROOT / folder).rglob("*.py"))


def test_no_benchmark_code_is_inside_engine_or_app():
    """Only the `bench` verb (a dispatcher) mentions the benchmarks; nothing in the product measures itself."""
    named = [str(p.relative_to(ROOT)) for d in ("engine", "app") for p in _python_files(d) if "bench" in p.stem]
    assert named == ["app/commands/bench.py"], named
    importing = []
    for folder in ("engine", "app"):
        for path in _python_files(folder):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                if any(m.startswith("callscope.benchmarks") for m in modules):
                    importing.append(str(path.relative_to(ROOT)))
    assert importing == [], f"the product imports the benchmarks: {importing}"
    assert (ROOT / "benchmarks" / "__init__.py").is_file()


def test_every_bench_has_the_one_shape():
    assert set(benchmarks.NAMES) == {"parse", "template", "replay", "check", "decode", "demo", "gui", "longline",
                                     "capture", "cli", "proxy", "clients"}
    helpers = {"__init__", "__main__", "workload", "corpus", "loopback"}  # what benches feed on, not benches
    on_disk = {p.stem for p in (ROOT / "benchmarks").glob("*.py")} - helpers
    assert on_disk == set(benchmarks.NAMES), "every bench module is registered in benchmarks.NAMES"
    for name in benchmarks.NAMES:
        bench = benchmarks.module(name)
        assert isinstance(bench.WHAT, str) and bench.WHAT
        assert callable(bench.add_arguments) and callable(bench.run)
        args = benchmarks.defaults(name)
        assert args.json is False


def test_building_the_bench_parser_imports_no_heavy_dependency():
    """`callscope bench --help` lists every bench and its options without loading httpx, llama.cpp or Qt."""
    code = (
        "import sys\n"
        "from callscope import benchmarks\n"
        "benchmarks.build_parser()\n"
        f"print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def _parse(*argv: str) -> argparse.Namespace:
    return cli.build_parser("bench").parse_args(["bench", *argv])


def test_each_bench_takes_its_own_options_and_json_on_either_side():
    args = _parse("cli", "--rounds", "3", "--json")
    assert (args.which, args.rounds, args.json) == ("cli", 3, True)
    assert _parse("--json", "parse").json is True
    assert _parse("parse").json is False
    assert _parse("decode", "--builds", "portable,native").builds == "portable,native"
    assert _parse("gui", "--steps", "500").steps == 500
    assert _parse("capture", "--chunks", "100", "--long-line-bytes", "0").long_line_bytes == 0
    assert _parse("replay", "--sizes", "10,20", "--repeat", "1").sizes == "10,20"
    with pytest.raises(SystemExit):
        _parse("parse", "--builds", "portable,native")  # decode's option only


def test_all_runs_every_bench_with_its_defaults(monkeypatch):
    ran = []
    for name in benchmarks.NAMES:
        monkeypatch.setattr(benchmarks.module(name), "run", lambda args, name=name: ran.append((name, args.json)) or 0)
    assert benchmarks.run_selected(_parse("--json", "all")) == 0
    assert ran == [(name, True) for name in benchmarks.NAMES]


def test_a_missed_target_is_exit_1_and_a_bad_option_exit_2(monkeypatch, capsys):
    monkeypatch.setattr(benchmarks.module("cli"), "run", lambda args: 1)
    assert cli.main(["bench", "cli"]) == 1
    assert cli.main(["bench", "replay", "--sizes", "ten"]) == 2
    err = capsys.readouterr().err
    assert err == "callscope bench: --sizes takes comma-separated integers, not 'ten'\n"


def test_parse_bench_runs_from_the_cli(capsys):
    assert cli.main(["bench", "parse", "--formats", "hermes,gpt_oss", "--size", "4096", "--json"]) in (0, 1)
    rows = json.loads(capsys.readouterr().out)
    assert [r["format_id"] for r in rows] == ["hermes", "gpt_oss"] and all(r["reconstructs"] for r in rows)


def test_replay_bench_measures_in_child_processes():
    """The measurement runs as `python -m callscope.benchmarks.replay --child TRACE` (peak RSS per size)."""
    out = subprocess.run([sys.executable, "-m", "callscope", "bench", "replay", "--sizes", "300,600", "--repeat", "1",
                          "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode in (0, 1), out.stderr
    doc = json.loads(out.stdout)
    assert [r["steps"] for r in doc["results"]] == [300, 600] and all(r["reconstructs"] for r in doc["results"])


def test_the_benchmarks_run_without_the_cli():
    out = subprocess.run([sys.executable, "-m", "callscope.benchmarks", "cli", "--help"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and "--rounds" in out.stdout


def test_one_write_file_workload_feeds_the_benches():
    from callscope.benchmarks import workload

    args = workload.big_arguments(4096)
    assert 4000 < len(json.dumps(args)) < 4200 and "\\n" in json.dumps(args)
    assert len(workload.filler(1234)) == 1234 and "\\" not in json.dumps(workload.filler(500))
    assert workload.WRITE_FILE_TOOLS[0]["function"]["name"] == workload.WRITE_FILE


def test_the_cli_summary_of_bench_names_every_bench():
    """`callscope --help` lists the benches without importing them (the CLI starts lazily): keep it true."""
    from callscope.cli import COMMANDS

    summary = COMMANDS["bench"][1]
    assert all(name in summary for name in benchmarks.NAMES), summary
