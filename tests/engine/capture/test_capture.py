"""Wire capture against a real SSE server on 127.0.0.1: one canned stream per contract rule, bad input, the CLI.

The server (tests/support/sse_server.py) is a real HTTP/1.1 server with chunked
bodies; each test plays exactly the bytes, pauses, aborts and stalls it needs.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import ssl
import subprocess
from pathlib import Path
from typing import Any

import pytest

from callscope.cli import main as cli_main
from callscope.engine.analysis.report import report_json, summary_text
from callscope.engine.capture import (
    CaptureAnalyzer,
    CaptureRecorder,
    CaptureRequest,
    StreamCapture,
    analyze_capture_lines,
    analyze_capture_result,
    capture_sync,
)
from callscope.engine.capture.client import data_line_count
from callscope.engine.capture.request import RequestError, build_body, endpoint_url, redact_url
from callscope.engine.core.wire import sse_line
from callscope.engine.recordings.replay import load_analyses
from callscope.engine.recordings.replay_text import analyze_text
from callscope.engine.recordings.trace import read_trace
from tests.support.schema import validate_report
from tests.support.sse_server import (
    ARGS,
    DONE,
    FINISH_TOOLS,
    ROLE,
    RULE_STREAMS,
    CannedServer,
    Scenario,
    chunk,
    clean_call,
    lines_of,
    timed,
    tool,
)

#: Rule-by-rule expectations pinned with the profiles they were written for (see conftest.legacy_profiles).
pytestmark = pytest.mark.usefixtures("legacy_profiles")

BODY = {"messages": [{"role": "user", "content": "weather in Paris?"}], "stream": True}


ATOMIC_SILENCE_MS = 250.0


def rules(analysis) -> set[str]:
    return {v.rule for v in analysis.violations}


def run_capture(url: str, **kw: Any):
    request = CaptureRequest(endpoint_url(url), dict(BODY), read_timeout=kw.pop("read_timeout", 5.0), **kw)
    return capture_sync(request)


# ====================================================================== one rule per stream


#: What the real clients make of each rule's stream, beyond the rule itself: the openai SDK (run for real on the
#: events) and a naive += client concatenate a repeated id or name, raise on a missing index or a bad JSON line;
#: a finish_reason of tool_calls on arguments that do not parse is a finish that disagrees with what arrived.
ALSO = {
    "id-repeated": {"client-mismatch"},
    "id-changed": {"client-mismatch"},
    "name-repeated": {"client-mismatch"},
    "index-missing": {"client-error"},
    "index-reused": {"client-mismatch"},
    "invalid-json-arguments": {"finish-reason-mismatch"},
    "invalid-chunk-json": {"client-error"},
}


@pytest.mark.parametrize("rule", sorted(RULE_STREAMS))
def test_each_rule_is_reported_with_what_clients_make_of_it(server, rule):
    url = server.play(f"rule-{rule}", Scenario(RULE_STREAMS[rule]))
    result = run_capture(url)
    assert result.status == 200
    if rule == "stream-truncated":  # closed without a finish chunk or [DONE]: a failed capture, lines kept
        assert result.error is not None and result.error.kind == "closed"
    else:
        assert result.error is None
    assert data_line_count(result.lines) == data_line_count(RULE_STREAMS[rule])
    analysis = analyze_capture_result(result, atomic_silence_ms=ATOMIC_SILENCE_MS)
    assert rules(analysis) == {rule} | ALSO.get(rule, set()), [v.to_json() for v in analysis.violations]
    violation = next(v for v in analysis.violations if v.rule == rule)
    assert violation.step is not None and violation.detail
    # no call a client mis-assembles is said to reconstruct
    assert not any(c.reconstructs for c in analysis.calls) or rule not in ALSO


def test_rule_steps_point_at_the_offending_chunk():
    a = analyze_capture_lines(RULE_STREAMS["id-changed"])
    assert [(v.rule, v.step, v.call_index) for v in a.violations] == [
        ("id-changed", 3, 0), ("client-mismatch", 4, 0), ("client-mismatch", 4, 0)]
    a = analyze_capture_lines(RULE_STREAMS["duplicated-arguments"])
    assert [(v.rule, v.step) for v in a.violations] == [("duplicated-arguments", 5)]
    a = analyze_capture_lines(RULE_STREAMS["invalid-chunk-json"])
    # the official SDK raises on that very chunk (json.loads); the naive client too
    assert [(v.rule, v.step) for v in a.violations] == [
        ("invalid-chunk-json", 4), ("client-error", 4), ("client-error", 4)]


def test_variants_of_rules():
    # finish_reason stop after tool calls
    a = analyze_capture_lines(lines_of(ROLE, *clean_call(), chunk(finish="stop"), DONE))
    assert rules(a) == {"finish-reason-mismatch"}
    # a trailing re-send of the last fragment once the arguments were complete
    a = analyze_capture_lines(lines_of(ROLE, *clean_call(), chunk(tool(0, args=ARGS[2])), FINISH_TOOLS, DONE))
    assert rules(a) == {"duplicated-arguments"}
    # a special token in content, and a name sent with different text later
    a = analyze_capture_lines(lines_of(ROLE, chunk({"content": "hi<|im_end|>"}), chunk(finish="stop"), DONE))
    assert rules(a) == {"marker-in-content"}
    # a name split over chunks is shown whole, and is no repeat; openai-python and naive join it, but clients that
    # overwrite the name do not (tests/system/test_differential.py): it is flagged
    a = analyze_capture_lines(lines_of(
        ROLE, chunk(tool(0, "call_a", "get_", ARGS[0])), chunk(tool(0, name="weather", args=ARGS[1])),
        chunk(tool(0, args=ARGS[2])), FINISH_TOOLS, DONE))
    assert rules(a) == {"name-fragmented"} and a.calls[0].name == "get_weather" and a.calls[0].reconstructs
    assert a.parse_at(3).calls[0].name == "get_weather"
    # [DONE] without a finish chunk is truncated too; an error object in the stream is named
    a = analyze_capture_lines(lines_of(ROLE, *clean_call(), DONE))
    assert rules(a) == {"stream-truncated"} and "finish_reason" in a.violations[0].detail
    a = analyze_capture_lines(lines_of(ROLE, 'data: {"error": {"message": "CUDA out of memory"}}', DONE))
    assert rules(a) == {"stream-error", "stream-truncated"}
    assert "CUDA out of memory" in a.violations[0].detail


def test_llama_cpp_python_style_repeats_are_not_index_reuse():
    """Repeating id and name on every fragment, including an empty last one, is id/name-repeated only."""
    head = [chunk(tool(0, "call_a", "get_weather", a)) for a in ARGS] + [chunk(tool(0, "call_a", "get_weather", ""))]
    a = analyze_capture_lines(lines_of(ROLE, *head, FINISH_TOOLS, DONE))
    assert rules(a) == {"id-repeated", "name-repeated", "client-mismatch"}
    assert a.calls[0].streamed_arguments == "".join(ARGS) and a.calls[0].name == "get_weather"
    # what the stream meant is clear, but the real clients build the name four times over: not reconstructed
    assert not a.calls[0].reconstructs
    sdk = next(c for c in a.calls[0].clients if c["profile"] == "openai-python")
    assert sdk["name"] == "get_weather" * 4 and sdk["id"] == "call_a" * 4 and not sdk["matches"]


def test_parallel_calls_on_their_own_indexes_are_clean():
    lines = lines_of(
        ROLE, *clean_call(0, "call_a"), *clean_call(1, "call_b", "get_time", ['{"tz"', ': "UTC"}']), FINISH_TOOLS, DONE
    )
    a = analyze_capture_lines(lines)
    assert a.violations == []
    assert [(c.index, c.id, c.name, c.streamed_arguments) for c in a.calls] == [
        (0, "call_a", "get_weather", "".join(ARGS)),
        (1, "call_b", "get_time", '{"tz": "UTC"}'),
    ]


# ====================================================================== clean streams from callscope's own policy

HERMES = (
    'Let me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}\n</tool_call>\n'
    '<tool_call>\n{"name": "get_time", "arguments": {"tz": "Europe/Paris"}}\n</tool_call>'
)


def incremental_lines(text: str, size: int, rate: float | None = None) -> tuple[Any, list[tuple[float, str]]]:
    source = analyze_text(text, "hermes", "incremental", unit="char", size=size, rate=rate)
    lines = [(c.ms or 0.0, sse_line(c, source.identity)) for c in source.chunks]
    return source, timed(*lines, (lines[-1][0], DONE))


def test_incremental_policy_stream_is_clean_over_the_wire(server):
    source, lines = incremental_lines(HERMES, size=3)
    url = server.play("incremental", Scenario([(0.0, line) for _, line in lines if line]))
    result = run_capture(url)
    analysis = analyze_capture_result(result)
    assert analysis.violations == []
    assert analysis.finish_reason == "tool_calls" and not analysis.truncated
    assert [(c.id, c.name, c.streamed_arguments) for c in analysis.calls] == [
        (c.id, c.name, c.streamed_arguments) for c in source.calls
    ]
    assert all(c.reconstructs for c in analysis.calls)
    assert analysis.terminal.content == source.terminal.content
    assert analysis.step_count == len(lines) // 2


@pytest.mark.parametrize("size", [1, 2, 5, 17, 1000])
def test_incremental_policy_streams_assemble_exactly(size):
    """Whatever the step size, the client assembles the policy's calls and finds nothing wrong."""
    source, lines = incremental_lines(HERMES, size=size, rate=100.0)
    a = analyze_capture_lines(lines)
    assert a.violations == []
    assert [c.streamed_arguments for c in a.calls] == [c.streamed_arguments for c in source.calls]
    # TTFD on the wire: the first tool-call delta, against the first call's last fragment
    assert a.ttfd_streaming.ms == source.ttfd_streaming.ms
    assert a.ttfd_atomic.ms >= a.ttfd_streaming.ms


def test_atomic_policy_stream_is_flagged_atomic():
    source = analyze_text(HERMES, "hermes", "atomic", unit="char", size=1, rate=50.0)
    lines = timed(*[(c.ms, sse_line(c, source.identity)) for c in source.chunks], (source.chunks[-1].ms, DONE))
    a = analyze_capture_lines(lines)
    assert rules(a) == {"atomic-tool-call"}
    assert a.ttfd_streaming.ms == a.ttfd_atomic.ms  # an atomic server shows nothing sooner


def test_analysis_shape_feeds_the_panes():
    a = analyze_capture_lines(timed(*[(i * 10.0, line) for i, (_, line) in enumerate(RULE_STREAMS["id-repeated"][::2])]))
    assert a.source.kind == "capture" and a.unit == "chunk" and a.timed
    assert a.step_numbers() == [1, 2, 3, 4, 5, 6]
    assert [s.ms for s in a.steps] == [0.0, 10.0, 20.0, 30.0, 40.0, 50.0]
    assert [c.kind for c in a.chunks] == ["role", "header", "arguments", "arguments", "finish"]
    assert a.chunks[2].call_id == "call_a"  # the id re-sent on a later fragment is shown as sent (--chunks)
    mid = a.parse_at(3)
    assert mid.calls[0].name == "get_weather" and mid.calls[0].arguments == ARGS[0] + ARGS[1] and mid.partial
    assert a.parse_at(6).calls[0].arguments == "".join(ARGS) and not a.parse_at(6).partial
    assert a.terminal.calls[0].id == "call_a"
    assert [c.kind for c in a.baseline_chunks] == ["role", "header", "finish"]
    assert a.baseline_chunks[1].step == 4 and a.baseline_chunks[1].text == "".join(ARGS)
    assert a.text_until(2).count("data:") == 2  # each step keeps the raw line it was


def test_live_analyzer_matches_the_final_one():
    lines = RULE_STREAMS["index-reused"]
    live = CaptureAnalyzer()
    for ms, line in lines[:8]:
        live.feed_line(ms, line)
    partial = live.analysis(final=False)
    assert partial.terminal.partial and rules(partial) == set()
    for item in lines[8:]:
        live.feed(item)  # the live (LiveAnalysis) feed: one (ms, line) item
    assert report_json([live.finish()]) == report_json([analyze_capture_lines(lines)])


# ====================================================================== bad input


def test_connection_refused_is_one_clear_error():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    result = run_capture(f"http://127.0.0.1:{port}")
    assert result.error is not None and result.error.kind == "refused"
    assert f"127.0.0.1:{port}" in result.error.message and result.lines == []


def test_dns_failure_is_named():
    result = run_capture("http://nonexistent.invalid:8080", connect_timeout=5.0)
    assert result.error is not None and result.error.kind == "dns"
    assert "nonexistent.invalid" in result.error.message


def test_tls_to_a_plain_http_server_fails_clearly(server):
    result = run_capture(server.url("x", scheme="https"), connect_timeout=5.0)
    assert result.error is not None and result.error.kind == "tls"
    assert "TLS" in result.error.message and "http://" in result.error.message


def test_http_error_status_shows_the_body(server):
    body = json.dumps({"error": {"message": "model is still loading", "code": 503}}).encode()
    url = server.play("busy", Scenario(status=503, content_type="application/json", body=body))
    result = run_capture(url)
    assert result.status == 503 and result.error.kind == "http-status"
    assert "HTTP 503" in result.error.message and "model is still loading" in result.error.message


def test_non_sse_answer_is_named(server):
    body = json.dumps({"object": "chat.completion", "choices": [{"message": {"content": "hi"}}]}).encode()
    url = server.play("json", Scenario(content_type="application/json", body=body))
    result = run_capture(url)
    assert result.error.kind == "not-sse"
    assert "application/json" in result.error.message and "chat.completion" in result.error.message


def test_close_mid_stream_keeps_what_was_received(server, tmp_path):
    url = server.play("abort", Scenario(lines_of(ROLE, *clean_call()[:2]), end="abort"))
    request = CaptureRequest(endpoint_url(url), dict(BODY), read_timeout=5.0)
    recorder = CaptureRecorder(tmp_path / "abort.jsonl", request)
    result = capture_sync(request, recorder.write)
    recorder.finish(result)
    assert result.error.kind == "closed" and "mid-stream" in result.error.message
    assert data_line_count(result.lines) == 3 and len(result.lines) == 6  # the blank lines that end events too
    analysis = analyze_capture_result(result)
    assert analysis.truncated and analysis.finish_cause == "error"
    assert rules(analysis) == {"stream-truncated"}  # the half-written call is not also blamed for bad JSON
    assert "mid-stream" in analysis.violations[0].detail
    assert analysis.ttfd_streaming.step is not None
    assert analysis.ttfd_atomic.step is None  # the cut call's last fragment never came: no atomic verdict
    trace = read_trace(tmp_path / "abort.jsonl")
    assert trace.end.cause == "error" and len(trace.lines) == 6  # only what was received, event ends kept
    assert trace.end.detail == result.error.message  # why it ended rides on the end record
    assert not any(line.line.startswith(":") for line in trace.lines)
    [replayed] = load_analyses(tmp_path / "abort.jsonl")
    assert replayed.truncated and replayed.violations == analysis.violations
    assert replayed.source.extra["error"] == result.error.message
    assert f"generation ended: error: {result.error.message}" in summary_text(replayed)


def test_an_old_capture_trace_with_the_comment_note_still_says_why(tmp_path):
    """Traces written before end records had a detail kept the reason as an SSE comment line."""
    path = tmp_path / "old.jsonl"
    header = {"type": "header", "schema": "callscope.trace/1", "source": "capture", "unit": "chunk", "extra": {}}
    received = [line for _, line in lines_of(ROLE, *clean_call()[:2]) if line]  # no blank lines were kept then
    records = [header]
    records += [{"type": "line", "ms": float(i), "line": line} for i, line in enumerate(received)]
    records.append({"type": "line", "ms": 9.0, "line": ": callscope-capture-ended the server closed the connection"})
    records.append({"type": "end", "cause": "error", "ms": 9.0})
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    [analysis] = load_analyses(path)
    assert analysis.step_count == len(received)  # the note is not a received line
    assert analysis.source.extra["error"] == "the server closed the connection"
    assert rules(analysis) == {"stream-truncated"}
    assert "the server closed the connection" in analysis.violations[-1].detail
    assert "generation ended: error: the server closed the connection" in summary_text(analysis)
    # the new form gives the same analysis
    new = tmp_path / "new.jsonl"
    records[-2:] = [{"type": "end", "cause": "error", "ms": 9.0, "detail": "the server closed the connection"}]
    new.write_text("".join(json.dumps(r) + "\n" for r in records))
    [again] = load_analyses(new)
    assert again.violations == analysis.violations
    assert summary_text(again).splitlines()[1:] == summary_text(analysis).splitlines()[1:]  # line 1 names the file


def test_stall_past_the_read_timeout_ends_promptly(server):
    url = server.play("stall", Scenario(lines_of(ROLE, *clean_call()[:1]), end="stall", stall_s=3.0))
    result = run_capture(url, read_timeout=0.3)
    # "stalled" (not "closed"): the read timeout ended it, not the server giving up after 3 s
    assert result.error.kind == "stalled" and "0.3 s" in result.error.message
    assert data_line_count(result.lines) == 2
    assert analyze_capture_result(result).truncated


def test_invalid_json_line_does_not_stop_the_capture(server):
    url = server.play("badline", Scenario(RULE_STREAMS["invalid-chunk-json"]))
    result = run_capture(url)
    analysis = analyze_capture_result(result)
    assert rules(analysis) == {"invalid-chunk-json", "client-error"}  # the SDK raises on it: json.loads
    assert analysis.calls[0].streamed_arguments == "".join(ARGS) and analysis.finish_reason == "tool_calls"


def test_stop_keeps_the_partial_capture(server):
    url = server.play("slow", Scenario([(0.0, ROLE), (0.0, clean_call()[0]), (3.0, DONE)], end="clean"))
    request = CaptureRequest(endpoint_url(url), dict(BODY), read_timeout=5.0)
    session = StreamCapture(request)

    async def go():
        loop = asyncio.get_running_loop()
        seen = asyncio.Event()
        session.on_lines = lambda lines: data_line_count(session.result.lines) >= 2 and loop.call_soon(seen.set)
        task = asyncio.ensure_future(session.run())
        await asyncio.wait_for(seen.wait(), 5)
        session.stop()
        return await asyncio.wait_for(task, 5)

    result = asyncio.run(go())
    assert result.cancelled and result.end_cause == "cancelled" and data_line_count(result.lines) == 2
    analysis = analyze_capture_result(result)
    assert analysis.finish_cause == "cancelled" and analysis.truncated
    assert analysis.violations == []  # the user stopped it: no rule against the server (stream-truncated)


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a self-signed certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
         "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    srv = CannedServer().start(ssl_context=context)
    yield srv
    srv.stop()


def test_tls_is_verified_unless_insecure(tls_server):
    url = tls_server.play("ok", Scenario(RULE_STREAMS["id-repeated"])).replace("http://", "https://")
    refused = run_capture(url, connect_timeout=5.0)
    assert refused.error.kind == "tls" and "certificate" in refused.error.message.lower()
    accepted = run_capture(url, connect_timeout=5.0, insecure=True)
    assert accepted.error is None and data_line_count(accepted.lines) == 6


# ====================================================================== request building


def test_endpoint_urls_and_redaction():
    assert endpoint_url("http://h:8080") == "http://h:8080/v1/chat/completions"
    assert endpoint_url("http://h:8080/v1/") == "http://h:8080/v1/chat/completions"
    assert endpoint_url("https://h/x/v1/chat/completions") == "https://h/x/v1/chat/completions"
    for bad in ("ftp://h", "h:8080", "http://", "http://h:99999"):
        with pytest.raises(RequestError):
            endpoint_url(bad)
    assert redact_url("https://u:pw@h/v1/chat/completions?api_key=s3&x=1") == "https://h/v1/chat/completions?api_key=***&x=1"


def test_build_body(tmp_path):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]))
    body = build_body(prompt="hi", tools_file=str(tools), tool_choice="f", model="m", max_tokens=5)
    assert body["messages"] == [{"role": "user", "content": "hi"}] and body["stream"] is True
    assert body["tool_choice"] == {"type": "function", "function": {"name": "f"}} and body["max_tokens"] == 5
    request = tmp_path / "req.json"
    request.write_text(json.dumps({"messages": [{"role": "user", "content": "x"}], "stream": False, "temperature": 0}))
    body = build_body(request_file=str(request), tool_choice="required")
    assert body["stream"] is True and body["temperature"] == 0 and body["tool_choice"] == "required"
    with pytest.raises(RequestError, match="no messages"):
        build_body()
    request.write_text("{oops")
    with pytest.raises(RequestError, match=r"req\.json: not JSON \(line 1, column 2"):
        build_body(request_file=str(request))


# ====================================================================== the command line


def test_cli_reports_and_records_and_replays_the_same(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CALLSCOPE_TEST_KEY", "sk-very-secret-123")
    url = server.play("cli", Scenario(RULE_STREAMS["name-repeated"]))
    out = tmp_path / "cap.jsonl"
    code = cli_main(["capture", url, "--prompt", "weather?", "--record", str(out), "--json",
                     "--api-key-env", "CALLSCOPE_TEST_KEY", "--timeout", "5"])
    live = capsys.readouterr()
    assert code == 0
    assert server.requests[-1]["headers"]["authorization"] == "Bearer sk-very-secret-123"
    assert server.requests[-1]["body"]["stream"] is True
    for text in (live.out, live.err, out.read_text()):
        assert "sk-very-secret" not in text
    report = json.loads(live.out)
    validate_report(report)
    run = report["runs"][0]
    assert run["source"]["kind"] == "capture" and run["unit"] == "chunk"
    assert [v["rule"] for v in run["violations"]] == ["name-repeated", "client-mismatch", "client-mismatch"]
    assert run["source"]["protocol"] == "chat" and run["source"]["clients"] == ["openai-python", "naive"]
    assert [c["profile"] for c in run["calls"][0]["clients"]] == ["openai-python", "naive"]
    assert cli_main(["replay", str(out), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)["runs"][0]
    run["source"].pop("path"), replayed["source"].pop("path")
    assert replayed == run
    assert [a.violations for a in load_analyses(out)] == [analyze_capture_result(capture_sync(
        CaptureRequest(endpoint_url(url), dict(BODY))), name="cap").violations]


def test_cli_strict_and_error_exit_codes(server, capsys):
    url = server.play("strict", Scenario(RULE_STREAMS["id-changed"]))
    assert cli_main(["capture", url, "--prompt", "x"]) == 0
    assert "id-changed" in capsys.readouterr().out
    assert cli_main(["capture", url, "--prompt", "x", "--strict"]) == 1
    capsys.readouterr()
    clean = server.play("strict-clean", Scenario(RULE_STREAMS["id-changed"][:2] + lines_of(*clean_call(), FINISH_TOOLS, DONE)))
    assert cli_main(["capture", clean, "--prompt", "x", "--strict", "--chunks"]) == 0
    assert "violations: none" in capsys.readouterr().out
    aborted = server.play("cli-abort", Scenario(lines_of(ROLE, *clean_call()[:2]), end="abort"))
    assert cli_main(["capture", aborted, "--prompt", "x"]) == 2
    both = capsys.readouterr()
    assert "stream-truncated" in both.out  # the report of what was received...
    assert both.err.strip().splitlines() == [both.err.strip()] and "mid-stream" in both.err  # ...then one line
    busy = server.play("cli-busy", Scenario(status=503, content_type="text/plain", body=b"overloaded"))
    assert cli_main(["capture", busy, "--prompt", "x", "--json"]) == 2
    both = capsys.readouterr()
    assert "HTTP 503" in both.err and "overloaded" in both.err
    [run] = json.loads(both.out)["runs"]  # the report its recording replays to, even with nothing received
    assert [v["rule"] for v in run["violations"]] == ["stream-truncated"] and "HTTP 503" in run["violations"][0]["detail"]


def test_cli_usage_errors(capsys):
    assert cli_main(["capture", "http://127.0.0.1:9"]) == 2
    assert "no messages" in capsys.readouterr().err
    assert cli_main(["capture", "ftp://x", "--prompt", "x"]) == 2
    assert "http://" in capsys.readouterr().err
    assert cli_main(["capture", "http://127.0.0.1:9", "--prompt", "x", "--timeout", "0"]) == 2
    assert "--timeout" in capsys.readouterr().err


def test_killed_capture_trace_replays_as_truncated(tmp_path):
    """A recording without its end record (the capture was killed) still replays, marked truncated."""
    path = tmp_path / "killed.jsonl"
    request = CaptureRequest("http://127.0.0.1:1/v1/chat/completions", dict(BODY))
    recorder = CaptureRecorder(path, request)
    recorder.write(RULE_STREAMS["id-repeated"][:6])
    recorder.close()
    [analysis] = load_analyses(path)
    assert analysis.truncated and analysis.source.kind == "capture"
    assert rules(analysis) == {"id-repeated", "client-mismatch", "stream-truncated"}
    assert "no end record" in analysis.violations[-1].detail
    assert Path(analysis.source.path) == path


def test_named_tool_choice_must_name_a_request_tool(tmp_path, capsys):
    from callscope.cli import main as cli_main

    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]))
    code = cli_main(["capture", "http://127.0.0.1:9", "--prompt", "hi", "--tools", str(tools), "--tool-choice", "nosuch"])
    err = capsys.readouterr().err
    assert code == 2 and "'nosuch'" in err and "get_weather" in err and err.count("\n") == 1
