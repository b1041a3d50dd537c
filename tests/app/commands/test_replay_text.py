"""`callscope replay-text`: the report of a raw generation, and one-line errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from callscope.cli import main
from callscope.engine.formats import FORMAT_IDS
from callscope.engine.formats.samples import render
from tests.support.paths import ROOT
from tests.support.schema import validate_report


def cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_unknown_format_exits_2_listing_known(tmp_path, capsys):
    f = tmp_path / "gen.txt"
    f.write_text("hello")
    code, out, err = cli(capsys, "replay-text", str(f), "--format", "nope")
    assert code == 2
    assert err.count("\n") == 1
    for known in FORMAT_IDS:
        assert known in err


@pytest.mark.parametrize(
    "make, why",
    [
        (lambda p: p / "missing.txt", "no such file"),
        (lambda p: p, "directory"),
        (lambda p: (p / "bin.txt", (p / "bin.txt").write_bytes(b"\xff\xfe\x00bad"))[0], "not UTF-8"),
    ],
)
def test_unreadable_file_exits_2_with_one_line(tmp_path, capsys, make, why):
    code, out, err = cli(capsys, "replay-text", str(make(tmp_path)), "--format", "hermes")
    assert code == 2
    assert why in err and err.count("\n") == 1
    assert out == ""


def test_bad_tools_file_names_the_json_path(tmp_path, capsys):
    f = tmp_path / "gen.txt"
    f.write_text("hello")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "ok"}}, {"type": "function", "function": {}}]))
    code, _, err = cli(capsys, "replay-text", str(f), "--format", "hermes", "--tools", str(tools))
    assert code == 2
    assert "$[1].function.name" in err


def test_bad_step_exits_2(tmp_path, capsys):
    f = tmp_path / "gen.txt"
    f.write_text("hello")
    code, _, err = cli(capsys, "replay-text", str(f), "--format", "hermes", "--step", "0")
    assert code == 2 and "--step" in err


def _generation(tmp_path, format_id="hermes"):
    text = render(format_id, [("get_weather", {"city": "Paris", "unit": "celsius"}), ("read_file", {"path": "/etc/hosts"})], "Checking.")
    f = tmp_path / "gen.txt"
    f.write_text(text, encoding="utf-8")
    return f


def test_json_report_validates_and_streams_before_atomic(tmp_path, capsys):
    f = _generation(tmp_path)
    code, out, err = cli(capsys, "replay-text", str(f), "--format", "hermes", "--rate", "24", "--json", "--chunks")
    assert code == 0, err
    doc = json.loads(out)
    validate_report(doc)
    run = doc["runs"][0]
    assert [c["name"] for c in run["calls"]] == ["get_weather", "read_file"]
    assert all(c["reconstructs"] for c in run["calls"])
    assert json.loads(run["calls"][0]["final_arguments"]) == {"city": "Paris", "unit": "celsius"}
    assert run["finish_reason"] == "tool_calls"
    assert run["timed"] is True and run["unit"] == "char"
    assert run["ttfd"]["streaming"]["ms"] < run["ttfd"]["atomic"]["ms"]
    assert run["ttfd"]["atomic"]["step"] == run["steps"]
    kinds = [c["chunk"]["choices"][0]["delta"] for c in run["chunks"]]
    assert kinds[0] == {"role": "assistant", "content": None}
    assert run["content"]["streamed"] == run["content"]["final"]


def test_byte_steps_end_at_byte_offsets(tmp_path, capsys):
    f = tmp_path / "gen.txt"
    f.write_text('天气<tool_call>\n{"name": "f", "arguments": {"q": "东京"}}\n</tool_call>', encoding="utf-8")
    code, out, _ = cli(capsys, "replay-text", str(f), "--format", "hermes", "--step", "byte", "--json")
    assert code == 0
    run = json.loads(out)["runs"][0]
    assert run["unit"] == "byte"
    assert run["steps"] == len(f.read_bytes())
    assert json.loads(run["calls"][0]["final_arguments"]) == {"q": "东京"}
    assert run["content"]["final"] == "天气"


def test_human_summary(tmp_path, capsys):
    f = _generation(tmp_path)
    code, out, _ = cli(capsys, "replay-text", str(f), "--format", "hermes", "--step", "4", "--chunks")
    assert code == 0
    assert "get_weather" in out and "read_file" in out
    assert "finish_reason: tool_calls" in out
    assert "header" in out and "arguments" in out  # the chunk listing


def test_console_entry_point_runs_headless(tmp_path):
    f = _generation(tmp_path)
    out = subprocess.run(
        [sys.executable, "-m", "callscope", "replay-text", str(f), "--format", "hermes", "--json"],
        cwd=ROOT, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["runs"][0]["finish_reason"] == "tool_calls"


def test_thinking_generation_records_and_replays_as_reasoning(tmp_path, capsys):
    f = tmp_path / "gen.txt"
    f.write_text('I should look it up.</think>On it.<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>')
    trace = tmp_path / "t.jsonl"
    code, out, _ = cli(capsys, "replay-text", str(f), "--format", "hermes", "--thinking", "--record", str(trace), "--json")
    assert code == 0
    first = json.loads(out)["runs"][0]
    assert first["reasoning"] == "I should look it up."
    assert first["content"]["final"] == "On it."
    code, out, _ = cli(capsys, "replay", str(trace), "--json")
    again = json.loads(out)["runs"][0]
    assert again["reasoning"] == first["reasoning"]
    assert again["calls"] == first["calls"]  # same minted ids: the recording keeps the stream identity


def test_reads_standard_input_and_usage_errors_are_one_line(tmp_path):
    text = render("hermes", [("f", {"a": 1})], "Hi.")
    out = subprocess.run(
        [sys.executable, "-m", "callscope", "replay-text", "-", "--format", "hermes", "--json"],
        cwd=ROOT, input=text, capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["runs"][0]["calls"][0]["name"] == "f"
    bad = subprocess.run([sys.executable, "-m", "callscope", "replay-text", "-"], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--format" in bad.stderr
