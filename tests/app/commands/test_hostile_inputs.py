"""No traceback on any input: every hostile file, stream or option gives a correct report, or one line and exit 2.

Found by fuzzing: deeply nested JSON (Python's ``json`` recurses), NaN and
backwards times in traces, 5,000-digit integers, non-UTF-8 standard input, NaN
options, byte-order marks and UTF-16, unbounded reads (``/dev/zero``, FIFOs).
Each case goes through the real CLI in-process (``callscope.cli.main``) and
checks what a person sees: the exit code, stdout, and stderr being one line
that names the file (and line where it applies). The last test mutates the
shipped fixtures at random (fixed seed) and replays every mutant.
"""

from __future__ import annotations

import io
import json
import os
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callscope.cli import main
from callscope.engine.core import files, json_text
from callscope.engine.formats import FORMAT_IDS
from callscope.engine.formats.samples import render
from callscope.engine.recordings.trace import TRACE_SCHEMA
from tests.support.paths import ROOT
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, chunk, tool

FIXTURES = ROOT / "fixtures"

HEADER = {"type": "header", "schema": TRACE_SCHEMA, "source": "text", "format": "hermes", "unit": "char"}


def cli(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def refused(capsys, *argv: object) -> str:
    """Run the CLI; assert exit 2, nothing on stdout and exactly one line on stderr; return that line."""
    code, out, err = cli(capsys, *argv)
    assert code == 2, (code, out[:300], err[:300])
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err[:500]
    assert "Traceback" not in err
    return err


def strict_json(text: str) -> dict:
    """``text`` parsed as RFC 8259 JSON: ``NaN`` and ``Infinity`` fail the test."""

    def refuse(name: str) -> None:
        pytest.fail(f"{name} in a report")

    return json.loads(text, parse_constant=refuse)


def report(capsys, *argv: object) -> dict:
    """Run the CLI with ``--json``; assert exit 0 and strict JSON (no NaN); return the first run."""
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    assert err == ""
    return strict_json(out)["runs"][0]


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def deep_generation(format_id: str, depth: int) -> str:
    """A generation calling ``f(a=<an array nested depth levels>)`` in ``format_id``'s own syntax."""
    # an array placeholder: every format writes a non-string value as its JSON (a string is quoted in some
    # formats, bare in others, <|"|>-quoted in Gemma's), so the same text stands for the array everywhere
    text = render(format_id, [("f", {"a": [424242]})])
    placeholder = "[424242]"
    assert text.count(placeholder) == 1, text
    return text.replace(placeholder, nested(depth))


def write_trace(path: Path, records: list[dict], header: dict | None = None) -> Path:
    lines = [json.dumps(header or HEADER)] + [json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def simple_trace(path: Path) -> Path:
    """A valid, timed hermes trace with one call."""
    text = render("hermes", [("f", {"x": 1})])
    pieces = [text[i : i + 8] for i in range(0, len(text), 8)]
    steps = [{"type": "step", "ms": 10.0 * (n + 1), "text": piece} for n, piece in enumerate(pieces)]
    return write_trace(path, [*steps, {"type": "end", "cause": "stop", "ms": 10.0 * (len(steps) + 1)}])


# ============================================================ 1. deep JSON


@pytest.mark.parametrize("format_id", FORMAT_IDS)
def test_deep_valid_arguments_analyse_and_reconstruct_in_every_format(tmp_path, capsys, format_id):
    """1,500 levels (past Python's recursion limit) is valid JSON: the call streams and reconstructs."""
    path = tmp_path / "deep.txt"
    path.write_text(deep_generation(format_id, 1500), encoding="utf-8")
    run = report(capsys, "replay-text", path, "--format", format_id)
    (call,) = run["calls"]
    assert call["name"] == "f" and call["reconstructs"]
    assert call["final_arguments"].replace(" ", "") == '{"a":' + nested(1500) + "}"  # an array, not a string
    assert run["finish_reason"] == "tool_calls"
    assert run["violations"] == []
    code, out, err = cli(capsys, "replay-text", path, "--format", format_id, "--chunks")  # the text report too
    assert code == 0 and err == "" and "reconstructs" in out


@pytest.mark.parametrize("policy", ["incremental", "llama_server", "atomic"])
def test_two_hundred_thousand_levels_stream_without_recursion(tmp_path, capsys, policy):
    """The scanner, the policies and reconciliation keep no recursion: 200,000 levels still reconstruct."""
    path = tmp_path / "deeper.txt"
    path.write_text(deep_generation("hermes", 200_000), encoding="utf-8")
    run = report(capsys, "replay-text", path, "--format", "hermes", "--step", "4096", "--policy", policy)
    assert run["calls"][0]["reconstructs"] and run["violations"] == []


def test_deep_arguments_record_and_replay(tmp_path, capsys):
    source = tmp_path / "deep.txt"
    source.write_text(deep_generation("mistral", 3000), encoding="utf-8")
    trace = tmp_path / "deep.jsonl"
    code, _, err = cli(capsys, "replay-text", source, "--format", "mistral", "--step", "97", "--record", trace)
    assert code == 0, err
    run = report(capsys, "replay", trace)
    assert run["calls"][0]["reconstructs"] and run["violations"] == []


def test_deep_json_in_a_trace_line_and_a_fixture_payload_is_read(tmp_path, capsys):
    step = {"type": "step", "ms": 1.0, "text": "hello", "note": json.loads(nested(500)) and None}
    path = tmp_path / "t.jsonl"
    lines = [json.dumps(HEADER), json.dumps(step)[:-1] + ', "deep": ' + nested(5000) + "}", '{"type":"end","cause":"stop"}']
    path.write_text("\n".join(lines) + "\n")
    assert report(capsys, "replay", path)["content"]["final"] == "hello"

    fixture = tmp_path / "f.txt"
    call = '{"type":"function","function":{"name":"f","arguments":"{}"}}'
    fixture.write_text(f'one final {{"content": "hi", "deep": {nested(5000)}, "tool_calls": [{call}]}}\n')
    run = report(capsys, "replay", fixture)
    assert run["content"]["final"] == "hi" and run["calls"][0]["name"] == "f"


def test_deep_documents_are_refused_in_one_line(tmp_path, capsys):
    """Tools, requests and trace headers are documents handed to recursive code: bounded, with a clear line."""
    deep_schema = '{"type": "object", "default": ' + nested(json_text.DOCUMENT_DEPTH + 5) + "}"
    tools = tmp_path / "tools.json"
    tools.write_text(f'[{{"type": "function", "function": {{"name": "f", "parameters": {deep_schema}}}}}]')
    text = tmp_path / "gen.txt"
    text.write_text("hello")
    err = refused(capsys, "replay-text", text, "--format", "qwen3_coder", "--tools", tools)
    assert str(tools) in err and f"nested deeper than {json_text.DOCUMENT_DEPTH} levels" in err

    request = tmp_path / "request.json"
    request.write_text('{"messages": [{"role": "user", "content": "hi"}], "x": ' + nested(5000) + "}")
    err = refused(capsys, "capture", "http://127.0.0.1:9", "--request", request)
    assert str(request) in err and "nested deeper than" in err

    header = dict(HEADER, tools=json.loads(nested(json_text.DOCUMENT_DEPTH + 5)))
    path = tmp_path / "header.jsonl"
    path.write_text(json_text.dumps(header) + "\n")
    err = refused(capsys, "replay", path)
    assert f"{path}:1:" in err and '"tools"' in err


def test_deep_tools_within_the_document_bound_render_and_record(tmp_path, capsys):
    depth = json_text.DOCUMENT_DEPTH - 10
    tools = tmp_path / "tools.json"
    tools.write_text(
        '[{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "default": '
        + nested(depth - 4) + "}}}]"
    )
    text = tmp_path / "gen.txt"
    text.write_text(render("hermes", [("f", {"a": 1})]))
    trace = tmp_path / "rec.jsonl"
    code, _, err = cli(capsys, "replay-text", text, "--format", "hermes", "--tools", tools, "--record", trace)
    assert code == 0, err
    assert report(capsys, "replay", trace)["calls"][0]["reconstructs"]


def test_deep_json_in_live_capture_chunks(tmp_path, capsys):
    """A capture's SSE chunks: deep arguments text, a deep unknown field, and arguments sent as a deep object."""
    deep_args = '{"a": ' + nested(1500) + "}"
    deep_chunk = chunk(tool(0, "call_a", "f", deep_args))[:-1] + ', "x": ' + nested(5000) + "}"
    object_args = chunk(tool(1, "call_b", "g"))
    object_args = object_args.replace('"function": {"name": "g"}', '"function": {"name": "g", "arguments": ' + nested(3000) + "}")
    assert nested(3000) in object_args
    header = {"type": "header", "schema": TRACE_SCHEMA, "source": "capture", "unit": "chunk"}
    lines = [ROLE, deep_chunk, object_args, FINISH_TOOLS, DONE]
    records = [{"type": "line", "ms": float(i), "line": line} for i, line in enumerate(lines)]
    path = write_trace(tmp_path / "capture.jsonl", [*records, {"type": "end", "cause": "stop", "ms": 9.0}], header)
    run = report(capsys, "replay", path)
    assert run["calls"][0]["streamed_arguments"] == deep_args
    rules = {v["rule"] for v in run["violations"]}
    assert "arguments-not-string" in rules  # the object sent as arguments, called out, not a crash
    assert "invalid-chunk-json" not in rules  # callscope reads the deep chunk...
    # ...but the real clients' json.loads does not (RecursionError): so the call does not reconstruct, said why
    assert "client-error" in rules and not run["calls"][0]["reconstructs"]
    assert any("RecursionError" in v["detail"] for v in run["violations"] if v["rule"] == "client-error")


def test_json_text_refuses_only_past_its_bound():
    assert json_text.deeper_than(json_text.loads(nested(json_text.MAX_DEPTH)), json_text.MAX_DEPTH - 1)
    with pytest.raises(json_text.JSONLimitError, match="nested deeper than 100,000 levels"):
        json_text.loads(nested(json_text.MAX_DEPTH + 1))
    json_text.check(nested(json_text.MAX_DEPTH * 3))  # validity has no bound: it builds nothing
    with pytest.raises(json.JSONDecodeError) as caught:
        json_text.check(nested(5000)[:-1])
    assert caught.value.pos == 9999  # where json.loads would say, not a RecursionError
    assert not json_text.is_json("[NaN]", constants=False) and json_text.is_json("[NaN]")


def test_json_text_writes_any_depth():
    """``json.dumps`` gives up past ~1,000 levels; the fallback writes what it would have written."""
    value = json_text.loads('{"a": ' + nested(5000) + "}")
    assert json_text.dumps(value, separators=(",", ":")) == '{"a":' + nested(5000) + "}"
    inner = {"a": [[1, {"b": []}]]}
    wrapped: object = inner
    for _ in range(2000):
        wrapped = [wrapped]
    text = json_text.dumps(wrapped, indent=2)
    assert text.startswith("[\n  [\n    [") and text.endswith("\n  ]\n]")
    innermost = json.dumps(inner, indent=2).replace("\n", "\n" + "  " * 2000)
    assert innermost in text  # the same layout json.dumps gives, at every depth
    assert json_text.dumps(json_text.loads(text), indent=2) == text
    with pytest.raises(ValueError, match="not JSON compliant"):
        json_text.dumps([value, float("nan")], allow_nan=False)


_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4), max_leaves=20
)


@settings(max_examples=200, deadline=None)
@given(_VALUES, st.sampled_from([None, 0, 2, "\t"]), st.booleans(), st.booleans())
def test_json_text_agrees_with_the_json_module(value, indent, ensure_ascii, sort_keys):
    """Same values and the same text as ``json``; the iterative paths (forced here) included."""
    options = {"indent": indent, "ensure_ascii": ensure_ascii, "sort_keys": sort_keys}
    text = json.dumps(value, **options)
    assert json_text.dumps(value, **options) == text
    assert "".join(json_text._encode(value, ensure_ascii, indent, None, sort_keys, True)) == text
    assert json_text.loads(text) == value
    assert json_text._Parser(text, build=True, constants=True).parse() == value
    compact = json.dumps(value, separators=(",", ":"))
    assert "".join(json_text._encode(value, True, None, (",", ":"), False, True)) == compact


@pytest.mark.parametrize(
    "text", ["", " ", "[1,]", '{"a":1,}', "[1 2]", '{"a" 1}', "{1:2}", "nul", '"abc', "[1]x", "01", "-", '"\x01"', "[-Inf]"]
)
def test_json_text_reports_bad_json_where_json_does(text):
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as got:
        json_text._Parser(text, build=True, constants=True).parse()
    assert (got.value.msg, got.value.pos) == (expected.value.msg, expected.value.pos)


# ============================================================ 2. times in traces


@pytest.mark.parametrize("ms", ["NaN", "Infinity", "-Infinity", "1e400", "-100", "1e13", "1" + "0" * 400])
def test_impossible_ms_is_refused_at_load_with_file_and_line(tmp_path, capsys, ms):
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps(HEADER) + "\n" + '{"type":"step","ms":1,"text":"<tool_call>"}\n'
        + f'{{"type":"step","ms":{ms},"text":"x"}}\n' + '{"type":"end","cause":"stop","ms":null}\n'
    )
    for extra in ([], ["--json"]):
        err = refused(capsys, "replay", path, *extra)
        assert f"{path}:3:" in err and '"ms"' in err


def test_decreasing_ms_is_refused_with_file_and_line(tmp_path, capsys):
    """A recorder stamps records in order on a monotonic clock: time going back means a corrupt file,
    which would otherwise report a negative time to first delta."""
    path = simple_trace(tmp_path / "t.jsonl")
    lines = path.read_text().splitlines()
    record = json.loads(lines[3])
    record["ms"] = 1.0
    lines[3] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    err = refused(capsys, "replay", path)
    assert f"{path}:4:" in err and "goes back in time" in err


def test_untimed_steps_between_timed_ones_are_fine(tmp_path, capsys):
    path = write_trace(
        tmp_path / "t.jsonl",
        [{"type": "step", "ms": 5.0, "text": "a"}, {"type": "step", "ms": None, "text": "b"},
         {"type": "step", "ms": 5.0, "text": "c"}, {"type": "end", "cause": "stop", "ms": 6.0}],
    )
    assert report(capsys, "replay", path)["content"]["final"] == "abc"


def test_report_json_never_prints_nan(capsys):
    """Whatever reaches the report, --json prints valid JSON or one error line: never ``NaN``."""
    import argparse

    from callscope.commands.common import CliError, print_report
    from callscope.engine.analysis.analyzer import Analyzer, SourceInfo
    from callscope.engine.formats import make_parser

    analyzer = Analyzer("nan", SourceInfo("text", None, "hermes", "incremental"), "char", True, make_parser("hermes"))
    analyzer.feed_text("<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>", float("nan"))
    analysis = analyzer.finish()
    with pytest.raises(CliError, match="not JSON compliant"):
        print_report([analysis], argparse.Namespace(json=True, chunks=True))
    assert capsys.readouterr().out == ""


def test_shipped_fixtures_all_load(capsys):
    for path in sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".jsonl", ".txt")):
        code, _, err = cli(capsys, "replay", path, "--json")
        assert code == 0, f"{path}: {err}"


# ============================================================ 3. long integers


def test_a_5000_digit_prefix_length_in_a_fixture_is_one_line(tmp_path, capsys):
    path = tmp_path / "f.txt"
    call = '[{"type":"function","function":{"name":"f","arguments":"{}"}}]'
    path.write_text(f"one {'1' * 5000} {call}\none final {call}\n")
    err = refused(capsys, "replay", path)
    assert f"{path}:1:" in err and "5,000 digits" in err


def test_a_5000_digit_integer_in_a_fixture_payload_is_one_line(tmp_path, capsys):
    path = tmp_path / "f.txt"
    path.write_text(f'one final [{{"type":"function","id_number":{"7" * 5000},"function":{{"name":"f","arguments":"{{}}"}}}}]\n')
    err = refused(capsys, "replay", path)
    assert f"{path}:1:" in err and "5,000 digits" in err


def test_5000_digit_integers_in_arguments_are_valid_json(tmp_path, capsys):
    digits = "9" * 5000
    fixture = tmp_path / "f.txt"
    fixture.write_text(f'one final [{{"type":"function","function":{{"name":"f","arguments":"{{\\"n\\": {digits}}}"}}}}]\n')
    run = report(capsys, "replay", fixture)
    assert run["calls"][0]["final_arguments"] == '{"n": ' + digits + "}"
    assert "invalid-json-arguments" not in {v["rule"] for v in run["violations"]}

    for format_id in ("hermes", "qwen3_coder", "gpt_oss"):
        text = tmp_path / f"{format_id}.txt"
        text.write_text(render(format_id, [("f", {"n": "@N@"})]).replace('"@N@"' if format_id != "qwen3_coder" else "@N@", digits))
        run = report(capsys, "replay-text", text, "--format", format_id, "--step", "64")
        assert run["calls"][0]["reconstructs"] and run["violations"] == [], format_id
        assert run["calls"][0]["final_arguments"].replace(" ", "") == '{"n":' + digits + "}", format_id


def test_a_5000_digit_token_id_in_a_trace_is_one_line(tmp_path, capsys):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(HEADER) + "\n" + f'{{"type":"step","ms":1,"text":"a","tokens":[{"5" * 5000}]}}\n')
    err = refused(capsys, "replay", path)
    assert f"{path}:2:" in err and "digits" in err


# ============================================================ 4. standard input


def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape"))


def test_non_utf8_standard_input_names_stdin_and_the_byte(monkeypatch, capsys):
    _stdin(monkeypatch, b"<tool_call>\xff\xfe")
    err = refused(capsys, "replay-text", "-", "--format", "hermes")
    assert "<stdin>" in err and "byte 11" in err


def test_standard_input_with_a_bom_reads_as_text(monkeypatch, capsys):
    _stdin(monkeypatch, b"\xef\xbb\xbf" + render("hermes", [("f", {"x": 1})]).encode())
    run = report(capsys, "replay-text", "-", "--format", "hermes")
    assert run["calls"][0]["reconstructs"] and run["content"]["final"] == ""


def test_standard_input_is_bounded(monkeypatch, capsys):
    monkeypatch.setattr(files, "RECORDING_CAP", 100)
    _stdin(monkeypatch, b"x" * 101)
    err = refused(capsys, "replay-text", "-", "--format", "hermes")
    assert "<stdin>" in err and "larger than 100 bytes" in err
    _stdin(monkeypatch, b"x" * 100)
    assert report(capsys, "replay-text", "-", "--format", "hermes")["content"]["final"] == "x" * 100


# ============================================================ 5. numeric options


@pytest.mark.parametrize("rate", ["nan", "inf", "-inf", "0", "-3", "1e-300"])
def test_replay_text_rate_must_give_finite_times(tmp_path, capsys, rate):
    path = tmp_path / "gen.txt"
    path.write_text("hello")
    err = refused(capsys, "replay-text", path, "--format", "hermes", f"--rate={rate}")
    assert "--rate" in err


def test_a_huge_rate_is_fine(tmp_path, capsys):
    path = tmp_path / "gen.txt"
    path.write_text(render("hermes", [("f", {"x": 1})]))
    run = report(capsys, "replay-text", path, "--format", "hermes", "--rate", "1e308")
    assert run["calls"][0]["reconstructs"]
    code, out, _ = cli(capsys, "replay-text", path, "--format", "hermes", "--rate", "1e308")
    assert code == 0 and "at once" in out


@pytest.mark.parametrize("temp", ["nan", "inf", "-1"])
def test_run_temperature_must_be_finite(capsys, temp):
    assert "--temp" in refused(capsys, "run", f"--temp={temp}")


# ============================================================ 6. encodings


def test_a_trace_with_a_utf8_bom_loads(tmp_path, capsys):
    plain = simple_trace(tmp_path / "t.jsonl")
    (tmp_path / "bom").mkdir()
    bom = tmp_path / "bom" / "t.jsonl"  # the same name: the same call ids
    bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    calls = report(capsys, "replay", bom)["calls"]
    assert calls == report(capsys, "replay", plain)["calls"] and calls[0]["reconstructs"]


def test_a_fixture_with_a_utf8_bom_loads(tmp_path, capsys):
    path = tmp_path / "f.txt"
    path.write_bytes(b'\xef\xbb\xbfone final [{"type":"function","function":{"name":"f","arguments":"{}"}}]\n')
    run = report(capsys, "replay", path)
    assert run["name"] == "one" and run["calls"][0]["name"] == "f"  # the mark is not part of the fixture's name


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_files_are_named_as_such(tmp_path, capsys, encoding):
    """With a byte-order mark (utf-16, utf-32) or without one (-le, -be: told by the NUL bytes)."""
    trace = tmp_path / "t.jsonl"
    trace.write_bytes(simple_trace(tmp_path / "plain.jsonl").read_text().encode(encoding))
    name = "UTF-32" if encoding == "utf-32" else "UTF-16"
    err = refused(capsys, "replay", trace)
    assert str(trace) in err and f"looks like {name}; save it as UTF-8" in err
    tools = tmp_path / "tools.json"
    tools.write_bytes('[{"type": "function", "function": {"name": "f"}}]'.encode(encoding))
    gen = tmp_path / "gen.txt"
    gen.write_text("hello")
    err = refused(capsys, "replay-text", gen, "--format", "hermes", "--tools", tools)
    assert str(tools) in err and f"looks like {name}" in err
    gen.write_bytes("hello there".encode(encoding))
    assert f"looks like {name}" in refused(capsys, "replay-text", gen, "--format", "hermes")


# ============================================================ 7. bounded reads


@pytest.mark.parametrize("verb", ["replay", "replay-text", "tools"])
def test_dev_zero_is_refused_at_once(tmp_path, capsys, verb):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    gen = tmp_path / "gen.txt"
    gen.write_text("hello")
    argv = {
        "replay": ["replay", "/dev/zero"],
        "replay-text": ["replay-text", "/dev/zero", "--format", "hermes"],
        "tools": ["replay-text", gen, "--format", "hermes", "--tools", "/dev/zero"],
    }[verb]
    err = refused(capsys, *argv)
    assert "/dev/zero: not a regular file (a character device)" in err


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path, capsys):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert "not a regular file (a named pipe)" in refused(capsys, "replay", fifo)
    assert "not a regular file" in refused(capsys, "replay-text", fifo, "--format", "hermes")


def test_directories_and_empty_files_are_one_line(tmp_path, capsys):
    assert "is a directory" in refused(capsys, "replay", tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert "empty file" in refused(capsys, "replay", empty)


def test_a_recording_just_over_the_cap_is_refused(tmp_path, capsys, monkeypatch):
    path = simple_trace(tmp_path / "t.jsonl")
    size = path.stat().st_size
    monkeypatch.setattr(files, "RECORDING_CAP", size)
    assert report(capsys, "replay", path)["calls"]
    monkeypatch.setattr(files, "RECORDING_CAP", size - 1)
    err = refused(capsys, "replay", path)
    assert f"{path}: {size:,} bytes, larger than" in err


def test_a_document_just_over_its_cap_is_refused(tmp_path, capsys, monkeypatch):
    tools = tmp_path / "tools.json"
    tools.write_text('[{"type": "function", "function": {"name": "f"}}]' + " " * 100)
    gen = tmp_path / "gen.txt"
    gen.write_text("hello")
    monkeypatch.setattr(files, "DOCUMENT_CAP", tools.stat().st_size - 1)
    assert "larger than" in refused(capsys, "replay-text", gen, "--format", "hermes", "--tools", tools)
    monkeypatch.setattr(files, "DOCUMENT_CAP", tools.stat().st_size)
    assert report(capsys, "replay-text", gen, "--format", "hermes", "--tools", tools)["content"]["final"] == "hello"


class _Endless(io.RawIOBase):
    """A stream that never ends (like /dev/zero behind a pipe), counting what was taken from it."""

    def __init__(self) -> None:
        self.taken = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        assert size is not None and size >= 0, "an unbounded read"
        self.taken += size
        return b"\0" * size


def test_reading_stops_one_byte_past_the_cap():
    stream = _Endless()
    with pytest.raises(ValueError, match="larger than 3 MiB"):
        files.read_capped(stream, 3 << 20, "<endless>", ValueError)
    assert stream.taken == (3 << 20) + 1


# ============================================================ beyond: odd shapes, and a fuzz pass


@pytest.mark.parametrize(
    "lines, where, why",
    [
        (["[1, 2]"], None, "callscope reads: callscope traces"),
        ([json.dumps(HEADER), '"step"'], 2, "expected a JSON object record"),
        ([json.dumps(HEADER), "17"], 2, "expected a JSON object record"),
        ([json.dumps(dict(HEADER, source=["text"]))], 1, '"source"'),
        ([json.dumps(dict(HEADER, tools={"a": 1}))], 1, '"tools" must be an array'),
        ([json.dumps(dict(HEADER, schema=5))], 1, '"schema"'),
        ([json.dumps(dict(HEADER, format=7))], 1, '"format" must be a string'),
        ([json.dumps(HEADER), '{"type": "step", "text": 5}'], 2, '"text" must be a string'),
        ([json.dumps(HEADER), '{"type": "step", "text": "a", "tokens": [1.5]}'], 2, '"tokens"'),
        ([json.dumps(HEADER), '{"type": "step", "b64": "!!"}'], 2, "base64"),
        ([json.dumps(HEADER), '{"type": "end", "cause": "stop"}', '{"type": "step", "text": "a"}'], 3, "after the end"),
        ([json.dumps(HEADER), '{"type": {"a": 1}}'], 2, "unknown record type"),
        ([json.dumps(HEADER), '{"type": "' + "x" * 10_000 + '"}'], 2, "unknown record type"),
    ],
)
def test_odd_trace_shapes_are_one_line_naming_the_line(tmp_path, capsys, lines, where, why):
    path = tmp_path / "odd.jsonl"
    path.write_text("\n".join(lines) + "\n")
    err = refused(capsys, "replay", path)
    assert (f"{path}:{where}:" if where else f"{path} ") in err and why in err
    assert len(err) < 400  # a 10,000-character field value is clipped, not echoed


_SPLICES = [b"NaN", b"-1", b"1e400", b"[", b"]", b"{", b"}", b'"', b"\\", b"\x00", b"\xff", b"\xef\xbb\xbf",
            b"null", b"[]", b"{}", b"\n", b"7" * 5000, b"[" * 3000, b'"ms":-5,', b'"type":"end",', b"\\ud800",
            b"final", b"THROW", b" ", b"#", b"<tool_call>", b"</tool_call>", b"\r\n"]
_OPTIONS = [[], ["--json"], ["--chunks"], ["--json", "--chunks"], ["--policy", "llama_server"], ["--policy", "atomic"],
            ["--format", "qwen3_coder"], ["--format", "gpt_oss"], ["--format", "mistral"]]


def _mutant(rng: random.Random, data: bytes) -> bytes:
    """``data`` with 1-4 random edits: a span deleted, a hostile token spliced in, a byte changed, a line doubled."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op, at = rng.randrange(4), rng.randrange(len(out) + 1)
        if op == 0:
            del out[at : at + rng.randint(1, 24)]
        elif op == 1:
            out[at : at + rng.randint(0, 6)] = rng.choice(_SPLICES)
        elif op == 2 and out:
            out[min(at, len(out) - 1)] = rng.randrange(256)
        else:
            lines = bytes(out).split(b"\n")
            lines.insert(rng.randrange(len(lines) + 1), rng.choice(lines))
            out = bytearray(b"\n".join(lines))
    return bytes(out)


def _value_mutant(rng: random.Random, data: bytes) -> bytes:
    """A trace with one record's field set to a hostile value: the JSON stays valid, the content does not."""
    records = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    record = rng.choice(records)
    field = rng.choice(["ms", "text", "tokens", "type", "cause", "b64", "format", "source", "unit", "tools", "extra"])
    record[field] = rng.choice(_HOSTILE_VALUES)
    return "\n".join(json_text.dumps(r) for r in records).encode("utf-8", "surrogatepass")


_HOSTILE_VALUES = [None, True, -1, 1e300, float("nan"), float("inf"), -1e-300, "", "\ud800", [], {}, [1],
                   "<tool_call>", "}", 10**30, json_text.loads(nested(3000)), {"type": "function"}]


def test_fuzzed_fixtures_never_give_a_traceback(tmp_path, capsys):
    """300 mutants of the shipped library, fixed seed: each replays (exit 0, strict JSON) or is one line, exit 2."""
    rng = random.Random(20240601)
    library = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".jsonl", ".txt"))
    outcomes = {0: 0, 2: 0}
    for i in range(300):
        source = rng.choice(library)
        mutate = _value_mutant if source.suffix == ".jsonl" and rng.random() < 0.5 else _mutant
        path = tmp_path / f"mutant{i}{source.suffix}"
        path.write_bytes(mutate(rng, source.read_bytes()))
        options = rng.choice(_OPTIONS)
        code, out, err = cli(capsys, "replay", path, *options)
        assert code in outcomes, (path, options, code, err[-500:])
        outcomes[code] += 1
        if code == 2:
            assert out == "" and err.count("\n") == 1 and "Traceback" not in err, (path, options, err[-500:])
        else:
            assert err == "", (path, options, err[-500:])
            if "--json" in options:
                strict_json(out)
    assert outcomes[0] >= 30 and outcomes[2] >= 30, outcomes  # both kinds of outcome were exercised
