"""The callscope.trace/1 format: lossless round trips, crash-readable writing, and precise errors."""

from __future__ import annotations

import json

import pytest

from callscope.engine.analysis.report import describe_finish, report_json, summary_text
from callscope.engine.recordings.trace import (
    KNOWN_SCHEMAS,
    TRACE_SCHEMA,
    TraceEnd,
    TraceError,
    TraceHeader,
    TraceWriter,
    read_trace,
    write_trace,
)
from callscope.engine.recordings.trace_io import analyze_trace

EMOJI = "🙂".encode()  # 4 bytes, split across two steps below


def write(path, lines):
    path.write_text("".join(json.dumps(r) + "\n" if not isinstance(r, str) else r + "\n" for r in lines))
    return path


def header(**fields):
    return {"type": "header", "schema": TRACE_SCHEMA, "source": "model", "format": "hermes", "unit": "token", **fields}


def test_round_trip_keeps_every_header_field_and_split_utf8_bytes(tmp_path):
    path = tmp_path / "t.jsonl"
    hdr = TraceHeader(
        source="model",
        format="hermes",
        template="chatml",
        tools=[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        messages=[{"role": "user", "content": "hi"}],
        model_file="m.gguf",
        model_sha256="ab" * 32,
        sampler={"temperature": 0.0, "seed": 7},
        description="a test",
        unit="token",
        expect={"finish_reason": "stop"},
        extra={"k": [1, 2]},
    )
    with TraceWriter(path, hdr) as w:
        w.write_step(10.0, b"ok " + EMOJI[:2], (1, 2))
        w.write_step(20.5, EMOJI[2:] + b"!", (3,))
        w.write_step(None, "plain ü".encode(), ())
        w.end("length", 30.25)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert records[0]["schema"] == TRACE_SCHEMA and records[0]["type"] == "header"
    assert "b64" in records[1] and "b64" in records[2]  # invalid UTF-8 on their own
    assert records[3]["text"] == "plain ü"  # readable when it can be

    trace = read_trace(path)
    assert trace.header == hdr
    assert [s.data for s in trace.steps] == [b"ok " + EMOJI[:2], EMOJI[2:] + b"!", "plain ü".encode()]
    assert [s.tokens for s in trace.steps] == [(1, 2), (3,), ()]
    assert [s.ms for s in trace.steps] == [10.0, 20.5, None]
    assert trace.end.cause == "length" and trace.end.ms == 30.25
    assert not trace.truncated
    assert trace.text() == "ok 🙂!plain ü"


def test_capture_lines_round_trip(tmp_path):
    path = tmp_path / "cap.jsonl"
    with TraceWriter(path, TraceHeader(source="capture", unit="chunk")) as w:
        w.write_line(1.0, 'data: {"choices":[]}')
        w.write_line(2.0, "data: [DONE]")
        w.end("stop", 2.0)
    trace = read_trace(path)
    assert [(line.ms, line.line) for line in trace.lines] == [(1.0, 'data: {"choices":[]}'), (2.0, "data: [DONE]")]
    assert trace.steps == [] and trace.header.source == "capture"


def test_end_detail_round_trips_and_is_optional(tmp_path):
    path = tmp_path / "err.jsonl"
    with TraceWriter(path, TraceHeader(format="hermes")) as w:
        w.write_step(1.0, b"Hi")
        w.end("error", 2.0, detail="llama_decode returned -1")
    end_record = json.loads(path.read_text().splitlines()[-1])
    assert end_record == {"type": "end", "cause": "error", "ms": 2.0, "detail": "llama_decode returned -1"}
    trace = read_trace(path)
    assert trace.end == TraceEnd("error", 2.0, "llama_decode returned -1")
    copy = tmp_path / "copy.jsonl"
    write_trace(copy, trace)
    assert read_trace(copy).end.detail == "llama_decode returned -1"
    # nothing to say: no key written (same bytes as before the field existed); old traces load with None
    with TraceWriter(tmp_path / "ok.jsonl", TraceHeader(format="hermes")) as w:
        w.end("stop", 3.0)
    assert json.loads((tmp_path / "ok.jsonl").read_text().splitlines()[-1]) == {"type": "end", "cause": "stop", "ms": 3.0}
    old = write(tmp_path / "old.jsonl", [header(), {"type": "step", "ms": 1, "text": "a"}, {"type": "end", "cause": "stop", "ms": 1}])
    assert read_trace(old).end == TraceEnd("stop", 1.0, None)
    assert read_trace(old).header.to_json()["schema"] == "callscope.trace/1"


def test_end_detail_shows_where_the_end_cause_is_shown(tmp_path):
    path = write(
        tmp_path / "failed.jsonl",
        [
            header(),
            {"type": "step", "ms": 1, "text": "Hi <tool_call>"},
            {"type": "end", "cause": "error", "ms": 2, "detail": "llama_decode returned -1"},
        ],
    )
    analysis = analyze_trace(read_trace(path), "incremental", name="failed")
    assert analysis.finish_cause == "error"
    assert report_json([analysis])["runs"][0]["source"]["end_detail"] == "llama_decode returned -1"
    assert "generation ended: error: llama_decode returned -1" in describe_finish(analysis)
    assert "generation ended: error: llama_decode returned -1" in summary_text(analysis)
    plain = write(tmp_path / "plain.jsonl", [header(), {"type": "step", "ms": 1, "text": "Hi"}, {"type": "end", "cause": "stop", "ms": 1}])
    analysis = analyze_trace(read_trace(plain), "incremental", name="plain")
    assert "end_detail" not in analysis.source.extra
    assert describe_finish(analysis).endswith("generation ended: stop)")


def test_every_record_is_on_disk_while_recording(tmp_path):
    """A crash leaves a readable trace: read it while the writer is still open."""
    path = tmp_path / "live.jsonl"
    w = TraceWriter(path, TraceHeader(format="hermes"))
    w.write_step(1.0, b"<tool")
    w.write_step(2.0, b"_call>")
    trace = read_trace(path)
    assert trace.truncated and [s.data for s in trace.steps] == [b"<tool", b"_call>"]
    w.close()


def test_a_record_cut_off_mid_write_is_dropped_not_fatal(tmp_path):
    path = tmp_path / "cut.jsonl"
    with TraceWriter(path, TraceHeader(format="hermes")) as w:
        w.write_step(1.0, b"hello")
    with open(path, "a") as f:
        f.write('{"type":"step","ms":2.0,"te')  # the process died here
    trace = read_trace(path)
    assert trace.truncated and trace.partial_last_line
    assert [s.data for s in trace.steps] == [b"hello"]


def test_truncated_trace_analyses_with_stream_truncated(tmp_path):
    path = tmp_path / "trunc.jsonl"
    with TraceWriter(path, TraceHeader(format="hermes")) as w:
        for i, piece in enumerate(["Hi", " <tool_call>", '{"name": "f", "arguments": {"a": 1']):
            w.write_step(i * 10.0, piece.encode())
    analysis = analyze_trace(read_trace(path), "incremental", name="trunc")
    assert analysis.truncated
    assert "stream-truncated" in {v.rule for v in analysis.violations}
    assert analysis.finish_reason is None  # the stream never finished


def test_writer_rejects_misuse(tmp_path):
    with pytest.raises(ValueError, match="source"):
        TraceWriter(tmp_path / "a.jsonl", TraceHeader(source="video"))
    with TraceWriter(tmp_path / "b.jsonl", TraceHeader()) as w:
        with pytest.raises(TypeError):
            w.write_step(0.0, "text, not bytes")  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="cause"):
            w.end("exploded", 1.0)
        with pytest.raises(TypeError, match="detail"):
            w.end("error", 1.0, detail=42)  # type: ignore[arg-type]
        w.end("stop", 1.0)
        with pytest.raises(ValueError, match="end record"):
            w.write_step(2.0, b"late")


@pytest.mark.parametrize(
    "lines, line_no, expected",
    [
        ([header(), "{not json"], 2, "not a JSON record"),
        ([header(), {"type": "step", "ms": 1}], 2, 'exactly one of "text"'),
        ([header(), {"type": "step", "ms": 1, "text": "a", "b64": "YQ=="}], 2, 'exactly one of "text"'),
        ([header(), {"type": "step", "ms": "soon", "text": "a"}], 2, '"ms" must be a number'),
        ([header(), {"type": "step", "ms": 1, "b64": "!!!"}], 2, "not valid base64"),
        ([header(), {"type": "step", "ms": 1, "text": "a", "tokens": ["x"]}], 2, "integer token ids"),
        ([header(), {"type": "end", "cause": "boom", "ms": 1}], 2, "must be one of stop, length"),
        ([header(), {"type": "end", "cause": "error", "ms": 1, "detail": 7}], 2, '"detail" must be a string'),
        (
            [header(), {"type": "end", "cause": "stop", "ms": 1}, {"type": "step", "ms": 2, "text": "a"}],
            3,
            "after the end",
        ),
        ([header(), {"type": "frame"}], 2, "unknown record type"),
        ([header(), header()], 2, "second header"),
        ([header(), "[1, 2]"], 2, "expected a JSON object"),
        ([header(unit="parsec")], 1, 'header field "unit"'),
        ([header(tools="none")], 1, 'header field "tools" must be an array'),
    ],
)
def test_malformed_line_names_file_line_and_what_was_expected(tmp_path, lines, line_no, expected):
    path = write(tmp_path / "bad.jsonl", lines)
    with pytest.raises(TraceError) as err:
        read_trace(path)
    assert f"bad.jsonl:{line_no}:" in str(err.value)
    assert expected in str(err.value)


def test_unknown_schema_version_lists_known_versions(tmp_path):
    path = write(tmp_path / "v9.jsonl", [header(schema="callscope.trace/9")])
    with pytest.raises(TraceError) as err:
        read_trace(path)
    message = str(err.value)
    assert "callscope.trace/9" in message and "v9.jsonl:1" in message
    for known in KNOWN_SCHEMAS:
        assert known in message


def test_a_file_that_is_not_a_trace_says_so(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello world\n")
    with pytest.raises(TraceError, match="not a callscope trace"):
        read_trace(path)
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(TraceError, match="empty file"):
        read_trace(tmp_path / "empty.jsonl")


def test_file_content_is_data_never_code(tmp_path):
    """Strings that look like code stay strings; nothing is evaluated or imported."""
    marker = tmp_path / "pwned"
    payload = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    path = write(
        tmp_path / "evil.jsonl",
        [
            header(description=payload, format=None),
            {"type": "step", "ms": 0, "text": payload},
            {"type": "end", "cause": "stop", "ms": 0},
        ],
    )
    trace = read_trace(path)
    assert trace.text() == payload and trace.header.description == payload
    assert not marker.exists()


def test_buffered_writer_still_flushes_periodically(tmp_path):
    """flush_each=False (the decode loop's hot path) must not leave a crash with nothing on disk."""
    from callscope.engine.recordings.trace import TraceHeader, TraceWriter, read_trace

    path = tmp_path / "t.jsonl"
    writer = TraceWriter(path, TraceHeader(source="text", format="hermes", unit="char"), flush_each=False)
    writer.FLUSH_INTERVAL_S = 3600.0
    writer.write_step(1.0, b"a")
    assert read_trace(path).steps == []  # buffered
    writer.FLUSH_INTERVAL_S = 0.0
    writer.write_step(2.0, b"b")
    loaded = read_trace(path)  # the writer is still open: what a crash would leave
    assert [s.data for s in loaded.steps] == [b"a", b"b"] and loaded.truncated
    writer.close()
