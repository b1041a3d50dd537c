"""`callscope replay FILE`: traces and fixtures detected by content, one run per fixture, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from callscope.cli import main
from callscope.engine.formats.samples import render
from callscope.engine.recordings.trace import TRACE_SCHEMA, TraceHeader, TraceWriter, read_trace
from tests.support.paths import ROOT
from tests.support.schema import validate_report

FIXTURE = "\n".join(
    [
        "# two fixtures, as the server's test writes them",
        'single_call 17 [{"type":"function","function":{"name":"read_file","arguments":"{\\"path\\":\\"/"}}]',
        'single_call final [{"type":"function","function":{"name":"read_file","arguments":"{\\"path\\":\\"/a\\"}"}}]',
        'parallel_calls 9 [{"type":"function","function":{"name":"a","arguments":"{}"}}]',
        "parallel_calls 12 THROW unexpected token",
        'parallel_calls final [{"type":"function","function":{"name":"a","arguments":"{}"}},'
        '{"type":"function","function":{"name":"b","arguments":"{\\"x\\":1}"}}]',
    ]
)


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def fixture_file(tmp_path):
    path = tmp_path / "prefixes.txt"
    path.write_text(FIXTURE + "\n")
    return path


def hermes_trace(tmp_path, end=True, name="weather.jsonl"):
    """A model-like trace: 4-byte steps at 24 steps/s, one byte-split emoji, end record."""
    text = render("hermes", [("get_weather", {"city": "Zürich 🙂", "days": 3})], "Let me check.")
    data = text.encode("utf-8")
    path = tmp_path / name
    with TraceWriter(path, TraceHeader(source="model", format="hermes", unit="token", description="weather")) as w:
        for i in range(0, len(data), 4):
            w.write_step((i // 4 + 1) * 1000 / 24, data[i : i + 4], (i // 4,))
        if end:
            w.end("stop", (len(data) // 4 + 1) * 1000 / 24)
    return path, text


# ------------------------------------------------------------------ fixtures


def test_fixture_file_gives_one_valid_run_per_named_fixture(tmp_path, capsys):
    code, out, err = cli(capsys, "replay", fixture_file(tmp_path), "--json", "--chunks")
    assert code == 0, err
    doc = json.loads(out)
    validate_report(doc)
    single, parallel = doc["runs"]
    assert (single["name"], parallel["name"]) == ("single_call", "parallel_calls")
    for run in doc["runs"]:
        assert run["source"]["kind"] == "fixture" and run["source"]["format"] is None
        assert run["unit"] == "byte" and run["timed"] is False
    assert single["finish_reason"] == "tool_calls" and single["violations"] == []
    assert single["calls"][0]["first_delta"] == {"step": 17, "ms": None}
    assert [v["rule"] for v in parallel["violations"]] == ["parse-error"]
    assert parallel["violations"][0]["step"] == 12
    assert [c["name"] for c in parallel["calls"]] == ["a", "b"]
    assert all(c["reconstructs"] for c in parallel["calls"])
    assert "chunks" in single and single["chunks"][0]["chunk"]["object"] == "chat.completion.chunk"


def test_name_selects_one_fixture(tmp_path, capsys):
    code, out, _ = cli(capsys, "replay", fixture_file(tmp_path), "--name", "parallel_calls", "--json")
    assert code == 0
    assert [r["name"] for r in json.loads(out)["runs"]] == ["parallel_calls"]


def test_policy_option_changes_the_verdict(tmp_path, capsys):
    code, out, _ = cli(
        capsys, "replay", fixture_file(tmp_path), "--name", "single_call", "--policy", "atomic", "--json"
    )
    assert code == 0
    run = json.loads(out)["runs"][0]
    assert run["source"]["policy"] == "atomic"
    assert run["ttfd"]["streaming"]["step"] == 17  # atomic: only at the terminal parse (last prefix)


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--name", "nope"], "no fixture named 'nope'; it holds: single_call, parallel_calls"),
        (["--format", "hermes"], "carries parses, not text"),
        (["--format", "klingon"], "unknown format 'klingon'"),
        (["--policy", "eager"], "unknown policy 'eager'"),
    ],
)
def test_bad_options_exit_2_with_one_line(tmp_path, capsys, argv, expected):
    code, out, err = cli(capsys, "replay", fixture_file(tmp_path), *argv)
    assert code == 2 and out == ""
    assert expected in err and err.count("\n") == 1


# ------------------------------------------------------------------ traces


def test_trace_replays_with_its_times_and_format(tmp_path, capsys):
    path, text = hermes_trace(tmp_path)
    code, out, err = cli(capsys, "replay", path, "--json")
    assert code == 0, err
    doc = json.loads(out)
    validate_report(doc)
    (run,) = doc["runs"]
    assert run["name"] == "weather" and run["source"]["kind"] == "trace" and run["source"]["format"] == "hermes"
    assert run["unit"] == "token" and run["timed"] is True and run["steps"] == -(-len(text.encode()) // 4)
    (call,) = run["calls"]
    assert call["name"] == "get_weather" and call["reconstructs"]
    assert json.loads(call["final_arguments"]) == {"city": "Zürich 🙂", "days": 3}  # the split emoji decoded whole
    assert run["finish_reason"] == "tool_calls" and run["violations"] == []
    assert run["content"]["final"].strip() == "Let me check."
    assert 0 < run["ttfd"]["streaming"]["ms"] < run["ttfd"]["atomic"]["ms"]


def test_format_override_re_analyses_a_trace(tmp_path, capsys):
    path, _ = hermes_trace(tmp_path)
    code, out, _ = cli(capsys, "replay", path, "--format", "mistral", "--json")
    assert code == 0
    run = json.loads(out)["runs"][0]
    assert run["source"]["format"] == "mistral"
    assert run["calls"] == [] and run["finish_reason"] == "stop"  # hermes markup is just content to mistral
    assert "<tool_call>" in run["content"]["final"]


def test_truncated_trace_loads_with_stream_truncated(tmp_path, capsys):
    path, _ = hermes_trace(tmp_path, end=False)
    code, out, _ = cli(capsys, "replay", path, "--json")
    assert code == 0
    run = json.loads(out)["runs"][0]
    validate_report(json.loads(out))
    assert "stream-truncated" in [v["rule"] for v in run["violations"]]
    assert run["truncated"] is True


def test_replay_text_record_writes_a_trace_that_replays_the_same(tmp_path, capsys):
    gen = tmp_path / "gen.txt"
    gen.write_text(render("hermes", [("read_file", {"path": "/tmp/ö"}), ("ls", {})], "Two calls."), encoding="utf-8")
    out_trace = tmp_path / "rec.jsonl"
    code, direct, err = cli(
        capsys,
        "replay-text",
        gen,
        "--format",
        "hermes",
        "--step",
        "byte",
        "--rate",
        "50",
        "--record",
        out_trace,
        "--json",
    )
    assert code == 0, err
    trace = read_trace(out_trace)
    assert trace.header.format == "hermes" and trace.header.unit == "byte" and trace.end.cause == "stop"
    assert trace.data() == gen.read_bytes()
    assert any(len(s.data) == 1 and s.data[0] >= 0x80 for s in trace.steps)  # byte steps split the ö
    code, replayed, _ = cli(capsys, "replay", out_trace, "--json")
    assert code == 0
    a, b = json.loads(direct)["runs"][0], json.loads(replayed)["runs"][0]
    for key in ("finish_reason", "ttfd", "violations", "content", "steps", "unit"):
        assert a[key] == b[key], key
    for call in a["calls"] + b["calls"]:
        del call["id"]  # minted from the run's name, which differs (gen vs rec)
    assert a["calls"] == b["calls"]


# ------------------------------------------------------------------ bad input


def test_a_file_that_is_neither_trace_nor_fixture_says_so(tmp_path, capsys):
    path = tmp_path / "notes.md"
    path.write_text("Some notes\nabout nothing\n")
    code, _, err = cli(capsys, "replay", path)
    assert code == 2 and err.count("\n") == 1
    assert "is not a recording. callscope reads: callscope traces" in err and "byte-prefix fixtures" in err
    (tmp_path / "tools.json").write_text('{"tools": []}')
    code, _, err = cli(capsys, "replay", tmp_path / "tools.json")
    assert code == 2 and "callscope reads: callscope traces" in err


def test_unknown_schema_version_exits_2_naming_known_versions(tmp_path, capsys):
    path = tmp_path / "future.jsonl"
    path.write_text(json.dumps({"type": "header", "schema": "callscope.trace/2"}) + "\n")
    code, _, err = cli(capsys, "replay", path)
    assert code == 2
    assert "future.jsonl:1" in err and "callscope.trace/2" in err and TRACE_SCHEMA in err


def test_malformed_trace_line_exits_2_naming_file_and_line(tmp_path, capsys):
    path, _ = hermes_trace(tmp_path)
    lines = path.read_text().splitlines()
    lines[3] = '{"type": "step", "ms": 1}'
    path.write_text("\n".join(lines) + "\n")
    code, _, err = cli(capsys, "replay", path)
    assert code == 2 and "weather.jsonl:4:" in err and '"text"' in err


def test_malformed_fixture_line_exits_2_naming_file_and_line(tmp_path, capsys):
    path = tmp_path / "bad.txt"
    path.write_text("# x\nf 10 []\nf 12 [oops\n")
    code, _, err = cli(capsys, "replay", path)
    assert code == 2 and "bad.txt:3:" in err


def test_missing_file_exits_2(tmp_path, capsys):
    code, _, err = cli(capsys, "replay", tmp_path / "nope.jsonl")
    assert code == 2 and "no such file" in err


def test_replay_runs_headless_as_a_subprocess(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "callscope", "replay", str(fixture_file(tmp_path)), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    assert [r["name"] for r in json.loads(out.stdout)["runs"]] == ["single_call", "parallel_calls"]


def test_a_capture_trace_is_handed_to_the_capture_analysis(tmp_path, capsys):
    """Capture traces hold received SSE lines, not bytes: replay reports what the server sent."""

    def chunk(delta, finish=None):
        body = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
        body["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish}]
        return "data: " + json.dumps(body)

    path = tmp_path / "cap.jsonl"
    with TraceWriter(path, TraceHeader(source="capture", unit="chunk")) as w:
        w.write_line(1.0, chunk({"role": "assistant", "content": None}))
        call = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a"'}}
        w.write_line(2.0, chunk({"tool_calls": [call]}))
        w.write_line(3.0, chunk({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]}))
        w.write_line(4.0, chunk({}, "tool_calls"))
        w.write_line(5.0, "data: [DONE]")
        w.end("stop", 5.0)
    code, out, err = cli(capsys, "replay", path, "--json")
    assert code == 0, err
    doc = json.loads(out)
    validate_report(doc)
    (run,) = doc["runs"]
    assert run["source"]["kind"] == "capture" and run["unit"] == "chunk"
    assert run["calls"][0]["streamed_arguments"] == '{"a": 1}' and run["calls"][0]["id"] == "call_1"
    code, _, err = cli(capsys, "replay", path, "--format", "hermes")
    assert code == 2 and "--format does not apply" in err
