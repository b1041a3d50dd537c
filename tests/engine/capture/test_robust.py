"""Capture robustness against real loopback servers: long lines, drips, bad durations, kills, secrets, comments.

Every server here is real HTTP on 127.0.0.1 (tests/support/sse_server.py). Nothing is
timed: linearity is checked by counting the bytes the line splitter copies, a
deadline by which error ended the capture, a kill by waiting (bounded, polled)
for the lines to reach the disk first.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from callscope.cli import main as cli_main
from callscope.engine.analysis.report import report_json
from callscope.engine.capture import (
    CaptureRecorder,
    CaptureRequest,
    StreamCapture,
    analyze_capture_result,
    capture_sync,
)
from callscope.engine.capture.client import LineSplitter
from callscope.engine.capture.redact import MASK, Redactor, redact_url, redactor_for
from callscope.engine.capture.request import RequestError, endpoint_url
from callscope.engine.recordings.replay import load_analyses
from callscope.engine.recordings.trace import TraceWriter, read_trace
from tests.support.paths import ROOT
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, Scenario, chunk, clean_call, lines_of, tool

#: Rule-by-rule expectations pinned with the profiles they were written for (see conftest.legacy_profiles).
pytestmark = pytest.mark.usefixtures("legacy_profiles")

BODY = {"messages": [{"role": "user", "content": "weather in Paris?"}], "stream": True}
KEY = "sk-live-Zq81xYw3Secret0000"
KEY_ENV = "CALLSCOPE_ROBUST_KEY"


def request_for(url: str, **kw) -> CaptureRequest:
    return CaptureRequest(endpoint_url(url), dict(BODY), read_timeout=kw.pop("read_timeout", 5.0), **kw)


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def line_records(path: Path) -> list[dict]:
    """The complete ``line`` records on disk now (a half-written last record is not one)."""
    records = []
    for raw in path.read_bytes().split(b"\n")[:-1]:
        record = json.loads(raw)
        if record.get("type") == "line":
            records.append(record)
    return records


# ====================================================================== 1. long lines, linear


def test_line_splitter_copies_each_byte_at_most_once():
    """A line arriving in 2,000 reads is joined once: the work is the line's length, not reads x length."""
    splitter = LineSplitter()
    piece = b"x" * 1000
    for _ in range(2000):
        assert splitter.split(piece) == []
    assert splitter.pending == 2_000_000
    [line] = splitter.split(b"yz\nnext")
    assert len(line) == 2_000_002 and line.endswith(b"xyz")
    assert splitter.copied == 2_000_002  # the old `pending + data` copied ~2 GB here
    assert splitter.rest() == b"next" and splitter.pending == 0


def test_line_splitter_keeps_lines_whole_at_any_boundary():
    stream = b"data: a\r\n\r\n: ping\n\ndata: [DONE]\r\n\r\n"
    for size in (1, 2, 3, 7, len(stream)):
        splitter = LineSplitter()
        lines = []
        for start in range(0, len(stream), size):
            lines += splitter.split(stream[start : start + size])
        assert [line.rstrip(b"\r") for line in lines if line.rstrip(b"\r")] == [b"data: a", b": ping", b"data: [DONE]"]
        assert splitter.copied <= len(stream)


def test_a_long_line_arrives_intact_over_http(server):
    content = "é" + "x" * 3_000_000 + "€"  # multi-byte characters at both ends, cut across reads
    long_line = chunk({"content": content})
    url = server.play("long", Scenario(lines_of(ROLE, long_line, chunk(finish="stop"), DONE)))
    session = StreamCapture(request_for(url))
    result = asyncio.run(session.run())
    assert result.error is None and result.done
    assert [line for _, line in result.lines if line] == [ROLE, long_line, chunk(finish="stop"), DONE]
    assert session.splitter.copied <= len(long_line.encode()) + 100  # one join, not one per read
    assert analyze_capture_result(result).terminal.content == content


def test_done_and_crlf_split_across_reads_are_still_recognised(server):
    """One byte per read: the CR, the LF and ``[DONE]`` each land in different reads."""
    url = server.play("drip-done", Scenario(lines_of(ROLE, chunk(finish="stop")), drip=b"data: [DONE]\r\n\r\n",
                                            drip_s=0.005))
    result = capture_sync(request_for(url))
    assert result.error is None and result.done
    assert [line for _, line in result.lines if line] == [ROLE, chunk(finish="stop"), DONE]


# ====================================================================== 2. the total deadline


def test_deadline_ends_a_dripping_stream_and_keeps_what_arrived(server):
    """A byte every 50 ms never trips the 5 s read timeout; the 1 s deadline ends it (the drip lasts 30 s:
    without the deadline the server's own 20 s limit would end it, as "closed")."""
    sent = [ROLE, chunk(tool(0, "call_a", "get_weather", '{"city": '))]
    url = server.play("drip", Scenario(lines_of(*sent), drip=chunk(tool(0, args='"Paris"}')).encode() * 10,
                                       drip_s=0.05, max_s=20))
    result = capture_sync(request_for(url, read_timeout=5.0, deadline=1.0))
    assert result.error is not None and result.error.kind == "deadline", result.error
    assert "1 s" in result.error.message and "--deadline" in result.error.message
    whole = [line for _, line in result.lines if line in sent]
    assert whole == sent[: len(whole)] and f"{len(whole)} whole data line" in result.error.message
    if len(result.lines) > len(whole):  # the bytes dripped so far: kept, and the message says the line was cut
        assert result.cut_bytes and "cut off" in result.error.message
    analysis = analyze_capture_result(result)
    assert analysis.truncated and analysis.finish_cause == "error"
    assert "deadline" in analysis.violations[-1].detail


def test_deadline_on_the_command_line(server, tmp_path, capsys):
    url = server.play("cli-drip", Scenario(lines_of(ROLE), drip=b": still thinking\n" * 40, drip_s=0.05, max_s=20))
    out = tmp_path / "drip.jsonl"
    code = cli_main(["capture", url, "--prompt", "x", "--timeout", "5", "--deadline", "1", "--record", str(out)])
    both = capsys.readouterr()
    assert code == 2
    assert both.err.count("\n") == 1 and "deadline" in both.err and "1 s" in both.err
    assert "stream-truncated" in both.out  # the report of what arrived
    trace = read_trace(out)
    assert trace.end is not None and trace.end.cause == "error" and "deadline" in trace.end.detail
    assert trace.lines[0].line == ROLE


def test_deadline_during_a_trickling_error_page_names_the_status(server):
    url = server.play("slow-401", Scenario(status=401, content_type="text/html", body=b"<html>",
                                           drip=b"." * 400, drip_s=0.05, max_s=20))
    result = capture_sync(request_for(url, deadline=1.0))
    assert result.error.kind == "deadline" and "HTTP 401 (text/html) answered" in result.error.message


def test_a_stream_that_ends_in_time_is_not_cut_by_its_deadline(server):
    url = server.play("quick", Scenario(lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE)))
    result = capture_sync(request_for(url, deadline=30.0))
    assert result.error is None and result.done


def test_deadline_is_in_the_help(capsys):
    with pytest.raises(SystemExit):
        cli_main(["capture", "--help"])
    assert "--deadline S" in capsys.readouterr().out


# ====================================================================== 3. durations that mean nothing


@pytest.mark.parametrize(
    ("option", "value"),
    [(option, value) for option in ("--timeout", "--connect-timeout", "--deadline")
     for value in ("nan", "inf", "-inf", "-1", "0")]
    + [("--atomic-silence", value) for value in ("nan", "inf", "-1", "-0.5")],
)
def test_meaningless_durations_are_one_line_usage_errors(option, value, capsys):
    code = cli_main(["capture", "http://127.0.0.1:9", "--prompt", "x", f"{option}={value}"])
    both = capsys.readouterr()
    assert code == 2 and both.out == ""
    assert both.err.count("\n") == 1 and option in both.err and "finite number of seconds" in both.err


@pytest.mark.parametrize("field", ["connect_timeout", "read_timeout", "deadline"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, 0.0])
def test_a_request_refuses_meaningless_durations_whatever_builds_it(field, value):
    """The GUI and scripts build requests without the CLI's checks: the request itself refuses."""
    with pytest.raises(RequestError, match="finite number of seconds"):
        CaptureRequest("http://127.0.0.1:1/v1/chat/completions", dict(BODY), **{field: value})


def test_zero_atomic_silence_is_allowed(capsys):
    """0 s means every one-chunk call counts as atomic: meaningful, so it reaches the network (refused here)."""
    code = cli_main(["capture", f"http://127.0.0.1:{closed_port()}", "--prompt", "x", "--atomic-silence", "0"])
    err = capsys.readouterr().err
    assert code == 2 and "refused" in err and "--atomic-silence" not in err


def test_a_duration_that_is_not_a_number_is_one_line(capsys):
    with pytest.raises(SystemExit) as exited:  # argparse's own error, made one line by the CLI's parser
        cli_main(["capture", "http://127.0.0.1:9", "--prompt", "x", "--deadline", "soon"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--deadline" in err


# ====================================================================== 4. nothing received is lost


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_recorder_never_holds_a_line_longer_than_the_flush_interval(tmp_path):
    """400 lines/s with no quiet moment: every line older than 250 ms is on disk after each write."""
    assert CaptureRecorder.MAX_AGE_S == TraceWriter.FLUSH_INTERVAL_S == 0.25
    path = tmp_path / "steady.jsonl"
    clock = FakeClock()

    async def stream() -> list[int]:
        recorder = CaptureRecorder(path, request_for("http://127.0.0.1:1"), clock=clock)
        received: list[float] = []
        batched = []
        for i in range(400):  # one second of lines, 2.5 ms apart; no await, so only write() can flush
            clock.now += 0.0025
            received.append(clock.now)
            recorder.write([(i * 2.5, f"data: {i}")])
            on_disk = len(line_records(path))
            due = sum(1 for at in received if clock.now - at >= CaptureRecorder.MAX_AGE_S)
            assert on_disk >= due, (i, on_disk, due)
            batched.append(recorder.queued)
        recorder.close()
        return batched

    batched = asyncio.run(stream())
    assert max(batched) > 50  # still batched (the reader is never held up line by line)
    assert [r["line"] for r in line_records(path)] == [f"data: {i}" for i in range(400)]


def _spawn_capture(url: str, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.Popen(
        [sys.executable, "-m", "callscope.cli", "capture", url, "--prompt", "x", "--record", str(out),
         "--timeout", "120", *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )


def _wait_for_lines(path: Path, count: int, proc: subprocess.Popen[bytes], limit_s: float = 60.0) -> None:
    """Poll (bounded, generous) until the recording holds ``count`` lines."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if path.exists() and len(line_records(path)) >= count:
            return
        if proc.poll() is not None:
            pytest.fail(f"capture exited early ({proc.returncode}): {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.02)
    pytest.fail(f"the recording did not reach {count} lines in {limit_s} s")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    if proc.stderr is not None:
        proc.stderr.close()


def test_sigkill_loses_no_line_the_server_sent_before_pausing(server, tmp_path):
    """The server sends N lines then goes silent; once all N are on disk, kill -9: all N stay."""
    sent = [ROLE, *clean_call(), *[chunk({"content": f"word {i} "}) for i in range(20)]]
    url = server.play("pause", Scenario(lines_of(*sent), end="stall", stall_s=60.0, max_s=60.0))
    out = tmp_path / "killed.jsonl"
    proc = _spawn_capture(url, out)
    try:
        _wait_for_lines(out, len(sent), proc)
    finally:
        _kill(proc)
    trace = read_trace(out)
    assert [line.line for line in trace.lines if line.line] == sent and trace.end is None
    [analysis] = load_analyses(out)
    assert analysis.truncated and analysis.step_count == len(sent)
    assert "no end record" in analysis.violations[-1].detail


def test_sigkill_during_a_steady_stream_leaves_a_readable_prefix(server, tmp_path):
    """Killed mid-burst (a line every 2.5 ms): what is on disk is exactly the first lines, in order."""
    sent = [chunk({"content": f"{i} "}) for i in range(4000)]  # 10 s at least: killed long before the end
    url = server.play("steady", Scenario([(0.0025, line) for line in sent], max_s=60.0))
    out = tmp_path / "steady.jsonl"
    proc = _spawn_capture(url, out)
    try:
        _wait_for_lines(out, 40, proc)
    finally:
        _kill(proc)
    trace = read_trace(out)
    kept = [line.line for line in trace.lines if line.line]
    assert len(kept) >= 40 and kept == sent[: len(kept)] and trace.end is None


def test_sigterm_stops_the_capture_and_finishes_the_recording(server, tmp_path):
    """SIGTERM (timeout(1), a CI cancel) is a stop, not a death: every line and the end record are kept."""
    sent = [ROLE, *clean_call()]
    url = server.play("term", Scenario(lines_of(*sent), end="stall", stall_s=60.0, max_s=60.0))
    out = tmp_path / "term.jsonl"
    proc = _spawn_capture(url, out)
    try:
        _wait_for_lines(out, len(sent), proc)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 130
        err = proc.stderr.read().decode() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            _kill(proc)
    assert "interrupted" in err
    trace = read_trace(out)
    assert [line.line for line in trace.lines if line.line] == sent
    assert trace.end is not None and trace.end.cause == "cancelled"


def test_a_half_sent_line_is_kept_when_the_server_closes(server, tmp_path):
    half = 'data: {"id": "chatcmpl-canned", "choices": [{"index": 0, "delta": {"content": "Par'
    for end in ("abort", "clean"):
        url = server.play(f"half-{end}", Scenario(lines_of(ROLE, chunk({"content": "in "})), tail=half.encode(), end=end))
        request = request_for(url)
        out = tmp_path / f"half-{end}.jsonl"
        recorder = CaptureRecorder(out, request)
        result = capture_sync(request, recorder.write)
        recorder.finish(result)
        assert result.error is not None and result.error.kind == "closed"
        assert result.lines[-1][1] == half and result.cut_bytes == len(half.encode())
        assert f"cut off after {len(half.encode())} bytes" in result.error.message
        trace = read_trace(out)
        assert trace.lines[-1].line == half  # recorded as received
        assert "cut off" in trace.end.detail and trace.end.cause == "error"  # and the end record says so
        live = analyze_capture_result(result, name=out.stem)
        assert [v.rule for v in live.violations] == ["stream-truncated"]  # the cut line is not blamed as bad JSON
        assert live.step_count == 3 and "cut off" in live.violations[0].detail
        [replayed] = load_analyses(out)
        assert replayed.violations == live.violations


def test_a_disk_that_fails_mid_capture_stops_the_recording_not_the_capture(server, tmp_path, capsys, monkeypatch):
    """ENOSPC while recording: the report of everything received is still printed, then one line says why."""
    url = server.play("disk-full", Scenario(lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE)))
    out = tmp_path / "full.jsonl"

    def no_space(self: TraceWriter) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(TraceWriter, "flush", no_space)
    code = cli_main(["capture", url, "--prompt", "x", "--record", str(out), "--json"])
    both = capsys.readouterr()
    assert code == 2
    assert json.loads(both.out)["runs"][0]["calls"][0]["name"] == "get_weather"  # nothing received was lost
    assert both.err.count("\n") == 1 and "recording" in both.err and "No space left on device" in both.err
    assert read_trace(out).header.source == "capture"  # what reached the disk is still a readable trace


def test_done_without_its_newline_is_not_a_cut(server):
    url = server.play("sloppy-done", Scenario(lines_of(ROLE, *clean_call(), FINISH_TOOLS), tail=b"data: [DONE]"))
    result = capture_sync(request_for(url))
    assert result.error is None and result.done and result.cut_bytes == 0


# ====================================================================== 5. no secret anywhere


def _assert_no_secret(*texts: str, secrets: tuple[str, ...] = (KEY,)) -> None:
    for text in texts:
        for secret in secrets:
            assert secret not in text
            if len(secret) >= 12:
                assert secret[4:-4] not in text  # not even most of it (an excerpt cut in the middle)


def test_a_401_that_quotes_the_key_is_reported_without_it(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    body = json.dumps({"error": {"message": "Incorrect API key provided: {AUTH}. Find yours at ..."}}).encode()
    url = server.play("401", Scenario(status=401, content_type="application/json", body=body))
    out = tmp_path / "401.jsonl"
    code = cli_main(["capture", url, "--prompt", "x", "--api-key-env", KEY_ENV, "--record", str(out), "--json"])
    both = capsys.readouterr()
    assert server.requests[-1]["headers"]["authorization"] == f"Bearer {KEY}"  # the key did go to the server
    assert code == 2 and "HTTP 401" in both.err and f"Bearer {MASK}" in both.err
    recording = out.read_text()
    assert "HTTP 401" in read_trace(out).end.detail
    _assert_no_secret(both.out, both.err, recording)


def test_a_stream_that_echoes_the_key_is_recorded_and_reported_without_it(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    echoed = [
        ROLE,
        chunk({"content": "you sent {AUTH}"}),
        chunk(tool(0, "call_a", "get_weather", '{"city": "{AUTH}"')),
        chunk(tool(0, args="}")),
        ": debug authorization={AUTH}",
        FINISH_TOOLS,
    ]
    # the last echo drips in one byte per read, so the key arrives split over many reads
    url = server.play("echo", Scenario(lines_of(*echoed), drip=b'data: {"x": "{AUTH}"}\n\n' + DONE.encode() + b"\n\n",
                                       drip_s=0.001))
    out = tmp_path / "echo.jsonl"
    code = cli_main(["capture", url, "--prompt", "x", "--api-key-env", KEY_ENV, "--record", str(out), "--json",
                     "--chunks"])
    both = capsys.readouterr()
    assert code == 0, both.err
    report = json.loads(both.out)
    assert report["runs"][0]["calls"][0]["name"] == "get_weather"
    assert f"Bearer {MASK}" in report["runs"][0]["calls"][0]["streamed_arguments"]
    _assert_no_secret(both.out, both.err, out.read_text())
    assert cli_main(["replay", str(out), "--json"]) == 0
    _assert_no_secret(capsys.readouterr().out)


def test_url_credentials_never_show(server, tmp_path, capsys):
    password = "hunter2-Pa55word"
    for url in (
        f"http://alice:{password}@127.0.0.1:{closed_port()}",  # refused
        f"http://alice:{password}@nonexistent.invalid:8080",  # DNS
        f"ftp://alice:{password}@127.0.0.1/",  # a usage error that quotes the URL
        f"http://alice:{password}@127.0.0.1:99999/",
    ):
        code = cli_main(["capture", url, "--prompt", "x", "--connect-timeout", "5"])
        both = capsys.readouterr()
        assert code == 2 and both.err.count("\n") == 1
        _assert_no_secret(both.out, both.err, secrets=(password, "alice:"))
    # a server echoing the Basic header it got from the URL's credentials, into a recording
    base = server.play("basic", Scenario(status=401, content_type="text/plain", body=b"bad credentials: {AUTH}"))
    url = base.replace("http://", f"http://alice:{password}@")
    out = tmp_path / "basic.jsonl"
    assert cli_main(["capture", url, "--prompt", "x", "--record", str(out)]) == 2
    both = capsys.readouterr()
    assert server.requests[-1]["headers"]["authorization"].startswith("Basic ")
    basic = server.requests[-1]["headers"]["authorization"].split()[1]
    assert "Basic ***" in both.err
    _assert_no_secret(both.out, both.err, out.read_text(), secrets=(password, "alice:", basic))


def test_the_key_variable_must_be_a_set_name(capsys, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    assert cli_main(["capture", "http://127.0.0.1:9", "--prompt", "x", "--api-key-env", KEY_ENV]) == 2
    assert f"${KEY_ENV} is not set" in capsys.readouterr().err
    assert cli_main(["capture", "http://127.0.0.1:9", "--prompt", "x", "--api-key-env", KEY]) == 2
    err = capsys.readouterr().err  # the key pasted where its variable's name goes: refused, not repeated
    assert "name of an environment variable" in err
    _assert_no_secret(err)
    monkeypatch.setenv(KEY_ENV, "sk-two words-here")
    assert cli_main(["capture", "http://127.0.0.1:9", "--prompt", "x", "--api-key-env", KEY_ENV]) == 2
    err = capsys.readouterr().err
    assert "cannot carry (position 7 of 17)" in err and "two words" not in err


def test_redactor_masks_every_echoed_form():
    key = "sk-ab/cd+ef==\u00e9long"
    redactor = Redactor.of([key])
    escaped = json.dumps(key)[1:-1]
    for text in (f"key {key}", f'{{"k": "{escaped}"}}', f"k={escaped.replace('/', chr(92) + '/')}",
                 "q=" + "sk-ab%2Fcd%2Bef%3D%3D%C3%A9long"):
        assert redactor.text(text).count(MASK) == 1, text
    assert redactor.data(f"x {key} y".encode()) == f"x {MASK} y".encode()
    assert "sk-ab" not in repr(redactor)
    assert redactor.text("see http://bob:pw@host/x") == "see http://host/x"
    assert Redactor.of(["abc"]).text("abc") == "abc"  # too short to tell from text: not a secret worth garbling
    exc = RuntimeError(f"header value b'Bearer {key}' is invalid")
    exc.__cause__ = ValueError(key)
    redactor.exception(exc)
    assert key not in str(exc) and key not in str(exc.__cause__)


def test_redactor_for_a_request_covers_key_and_url(monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    redactor = redactor_for("https://u:p%40ss-word@h/v1/chat/completions?api_key=qs-secret-1", KEY_ENV)
    text = f"{KEY} p@ss-word p%40ss-word qs-secret-1"
    assert redactor.text(text) == " ".join([MASK] * 4)
    assert redact_url("https://u:pw@h/v1?token=t0ken") == "https://h/v1?token=***"


def test_header_body_with_the_key_is_recorded_without_it(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, KEY)
    body = {**BODY, "metadata": {"deep": [[[{"api_key": KEY}]]]}}
    request = CaptureRequest("http://127.0.0.1:1/v1/chat/completions", body, api_key_env=KEY_ENV)
    recorder = CaptureRecorder(tmp_path / "h.jsonl", request)
    recorder.close()
    text = (tmp_path / "h.jsonl").read_text()
    assert KEY not in text and MASK in text
    assert read_trace(tmp_path / "h.jsonl").header.extra["request"]["metadata"]["deep"] == [[[{"api_key": MASK}]]]


# ====================================================================== 6. comments are not events


def test_comment_lines_are_recorded_but_are_not_events(server, tmp_path):
    url = server.play("pings", Scenario(lines_of(": ping - 2026-01-01 00:00:15", ": ping - 2026-01-01 00:00:30")))
    request = request_for(url)
    out = tmp_path / "pings.jsonl"
    recorder = CaptureRecorder(out, request)
    result = capture_sync(request, recorder.write)
    recorder.finish(result)
    assert [line for _, line in result.lines if line] == [": ping - 2026-01-01 00:00:15", ": ping - 2026-01-01 00:00:30"]
    assert "without sending a single data line" in result.error.message
    analysis = analyze_capture_result(result)
    assert analysis.steps == [] and [v.rule for v in analysis.violations] == ["stream-truncated"]
    assert len(read_trace(out).lines) == 4  # recorded as received: each comment and the blank line after it
    [replayed] = load_analyses(out)
    assert replayed.steps == [] and replayed.violations == analysis.violations


def test_keepalives_after_the_finish_chunk_do_not_hide_it(server):
    """A server that omits [DONE] but sent its finish chunk, then many keep-alive comments: a complete stream."""
    url = server.play("finish-then-pings", Scenario(lines_of(ROLE, *clean_call(), FINISH_TOOLS, *[": ping"] * 20)))
    result = capture_sync(request_for(url))
    assert result.error is None
    analysis = analyze_capture_result(result)
    assert [c.kind for c in analysis.chunks][-1] == "finish" and analysis.step_count == 5
    assert report_json([analysis])["runs"][0]["finish_reason"] == "tool_calls"
