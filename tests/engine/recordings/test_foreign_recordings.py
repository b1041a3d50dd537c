"""Reading what others recorded: raw SSE dumps, HAR files, mitmproxy flow files, each told apart by content.

Each becomes one capture per event stream and goes through the same stream
checker as callscope's own captures. The mitmproxy flow file under
tests/data/recorded was written by mitmdump itself (reverse proxy in front of
the loopback canned server); it is read through mitmproxy's own reader when
mitmproxy is installed, and refused with one line naming the extra otherwise.
Also here: what ``replay`` accepts and refuses for captured streams.
"""

from __future__ import annotations

import base64
import importlib.util
import json

import pytest

from callscope.cli import main as cli_main
from callscope.engine.recordings.replay import HAR, MITMPROXY, SSE, TRACE, detect_kind, load_analyses, load_recording
from callscope.engine.recordings.sse_dump import sse_transcript  # the window's File > Export > SSE transcript
from callscope.engine.recordings.trace import TraceError
from tests.support.paths import DATA
from tests.support.protocol_streams import responses_stream
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, chunk, clean_call

DATA = DATA / "recorded"
CHAT_EVENTS = [ROLE, *clean_call(), FINISH_TOOLS, DONE]
HAS_MITMPROXY = importlib.util.find_spec("mitmproxy") is not None


def sse_text(events: list[str], newline: str = "\n") -> str:
    return "".join(event.replace("\n", newline) + newline * 2 for event in events)


def har(entries: list[dict]) -> str:
    return json.dumps({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": entries}},
                      indent=2)


def har_entry(url: str, body: str | None, mime: str = "text/event-stream", timings: dict | None = None,
              base64_body: bool = False, post: dict | None = None) -> dict:
    content = {"size": len(body or ""), "mimeType": mime}
    if body is not None:
        content["text"] = base64.b64encode(body.encode()).decode() if base64_body else body
        if base64_body:
            content["encoding"] = "base64"
    return {
        "startedDateTime": "2026-01-01T00:00:00.000Z", "time": 0,
        "request": {"method": "POST", "url": url, "headers": [{"name": "Authorization", "value": "Bearer sk-har"}],
                    **({"postData": {"mimeType": "application/json", "text": json.dumps(post)}} if post else {})},
        "response": {"status": 200, "headers": [{"name": "Content-Type", "value": mime}], "content": content},
        "timings": timings or {"send": -1, "wait": -1, "receive": -1},
    }


# ====================================================================== raw SSE dumps


def test_callscopes_own_sse_export_replays(tmp_path):
    [original] = load_analyses("fixtures/headline_701_tokens.jsonl")
    dump = tmp_path / "headline.sse"
    dump.write_text(sse_transcript(original))
    assert detect_kind(dump.read_bytes()) == SSE
    [replayed] = load_analyses(dump)
    assert not replayed.timed and replayed.source.extra["protocol"] == "chat"
    assert [(c.name, c.streamed_arguments) for c in replayed.calls] == \
        [(c.name, c.streamed_arguments) for c in original.calls]
    assert all(c.reconstructs for c in replayed.calls) and replayed.finish_reason == original.finish_reason


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_curl_dump_with_any_line_end_and_a_head_replays(tmp_path, newline):
    head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n" if newline == "\r\n" else ""
    dump = tmp_path / "curl.txt"
    dump.write_text(head + ": ping" + newline + sse_text(CHAT_EVENTS, newline), newline="")
    [analysis] = load_analyses(dump)
    assert analysis.calls[0].name == "get_weather" and analysis.calls[0].reconstructs
    assert analysis.violations == [] and analysis.step_count == len(CHAT_EVENTS)


def test_a_dump_cut_short_is_truncated_not_unreadable(tmp_path):
    dump = tmp_path / "cut.sse"
    dump.write_text(sse_text(CHAT_EVENTS[:3]))
    [analysis] = load_analyses(dump)
    assert "stream-truncated" in {v.rule for v in analysis.violations}


def test_a_dump_with_no_data_line_is_one_line_error(tmp_path, capsys):
    dump = tmp_path / "comments.sse"
    dump.write_text(": ping\n\n: ping\n\n")
    assert cli_main(["replay", str(dump)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "without a single data line" in err


# ====================================================================== HAR


def test_a_har_files_event_streams_are_one_run_each_with_their_timings(tmp_path):
    path = tmp_path / "devtools.har"
    path.write_text(har([
        har_entry("https://api.example/v1/models", '{"data": []}', mime="application/json"),
        har_entry("https://api.example/v1/chat/completions?key=secret", sse_text(CHAT_EVENTS),
                  timings={"blocked": 2, "dns": -1, "connect": 10, "send": 1, "wait": 300.5, "receive": 900},
                  post={"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}),
        har_entry("https://api.example/v1/responses", sse_text(responses_stream()), base64_body=True),
    ]))
    assert detect_kind(path.read_bytes()) == HAR
    recording = load_recording(path)
    assert recording.names() == ["devtools#2", "devtools#3"]
    chat, responses = load_analyses(path)
    assert chat.name == "devtools#2" and chat.source.extra["protocol"] == "chat"
    assert chat.source.extra["url"] == "https://api.example/v1/chat/completions"  # no query: it may hold a key
    assert chat.steps[0].ms == 313.5 and chat.timed  # the first byte: blocked + connect + send + wait
    trace = recording.captures[0][1]
    assert trace.end.ms == 1213.5 and trace.header.messages == [{"role": "user", "content": "hi"}]
    assert responses.source.extra["protocol"] == "responses" and responses.calls[0].reconstructs
    assert not responses.timed
    [only] = load_analyses(path, name="devtools#3")
    assert only.name == "devtools#3"
    with pytest.raises(TraceError, match="no stream named 'x'; it holds: devtools#2, devtools#3"):
        load_analyses(path, name="x")


def test_a_har_without_event_streams_says_why(tmp_path, capsys):
    plain = tmp_path / "plain.har"
    plain.write_text(har([har_entry("https://h/v1/models", "{}", mime="application/json")]))
    empty = tmp_path / "empty.har"
    empty.write_text(har([har_entry("https://h/v1/chat/completions", None)]))
    for path, why in ((plain, "no text/event-stream response"), (empty, "kept no body")):
        assert cli_main(["replay", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and why in err and str(path) in err


# ====================================================================== mitmproxy


def test_a_mitmproxy_flow_file_is_recognised_by_content():
    assert detect_kind((DATA / "chat.mitm").read_bytes()) == MITMPROXY
    assert detect_kind(b"12:not a flow;}") is None


@pytest.mark.skipif(HAS_MITMPROXY, reason="mitmproxy is installed: the file is read, not refused")
def test_without_mitmproxy_a_flow_file_is_refused_with_one_line_naming_the_extra(capsys):
    assert cli_main(["replay", str(DATA / "chat.mitm")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "mitmproxy flow file" in err and "pip install 'callscope[mitmproxy]'" in err


@pytest.mark.skipif(not HAS_MITMPROXY, reason="needs mitmproxy (the callscope[mitmproxy] extra)")
def test_a_mitmproxy_flow_file_replays_through_mitmproxys_reader():
    recording = load_recording(DATA / "chat.mitm")
    assert recording.names() == ["chat#2"]  # flow 1 is a JSON model list
    [analysis] = load_analyses(DATA / "chat.mitm")
    assert analysis.calls[0].name == "get_weather" and analysis.calls[0].reconstructs and not analysis.violations
    assert analysis.steps[0].ms is not None


# ====================================================================== what replay accepts for captured streams


def test_replay_refuses_a_policy_or_format_for_captured_streams_and_takes_an_atomic_silence(tmp_path, capsys):
    dump = tmp_path / "atomic.sse"
    dump.write_text(sse_text(CHAT_EVENTS))
    for option in (["--policy", "atomic"], ["--format", "hermes"]):
        assert cli_main(["replay", str(dump), *option]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{option[0]} does not apply" in err
    assert cli_main(["replay", str(dump), "--atomic-silence", "0.5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["calls"][0]["reconstructs"]
    assert cli_main(["replay", "headline_701_tokens", "--atomic-silence", "1"]) == 2
    assert "--atomic-silence judges captured streams" in capsys.readouterr().err
    assert cli_main(["replay", str(dump), "--atomic-silence", "inf"]) == 2
    assert "finite number of seconds" in capsys.readouterr().err


def test_a_capture_recording_keeps_its_atomic_silence_for_the_replay(server, tmp_path, capsys):
    from tests.support.sse_server import Scenario, timed, tool

    # one chunk with the whole call after 0.35 s: atomic under a 0.2 s silence, not under the default 1 s
    url = server.play("slow-atomic", Scenario(timed((0.0, ROLE), (0.35, chunk(tool(0, "call_a", "get_weather",
                                                                                  '{"city": "Paris", "days": 3}'))),
                                                   (0.0, FINISH_TOOLS), (0.0, DONE))))
    out = tmp_path / "atomic.jsonl"
    assert cli_main(["capture", url, "--prompt", "x", "--atomic-silence", "0.2", "--record", str(out), "--json"]) == 0
    live = json.loads(capsys.readouterr().out)
    assert [v["rule"] for v in live["runs"][0]["violations"]] == ["atomic-tool-call"]
    assert cli_main(["replay", str(out), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    live["runs"][0]["source"].pop("path"), replayed["runs"][0]["source"].pop("path")
    assert replayed == live  # judged with the recorded 0.2 s
    assert cli_main(["replay", str(out), "--atomic-silence", "5", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["violations"] == []


def test_a_capture_that_failed_prints_the_report_its_replay_prints(tmp_path, capsys):
    out = tmp_path / "refused.jsonl"
    assert cli_main(["capture", "http://127.0.0.1:9", "--prompt", "x", "--record", str(out), "--json"]) == 2
    both = capsys.readouterr()
    live = json.loads(both.out)
    assert "connection refused" in both.err and both.err.count("\n") == 1
    assert detect_kind(out.read_bytes()) == TRACE
    assert cli_main(["replay", str(out), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    live["runs"][0]["source"].pop("path"), replayed["runs"][0]["source"].pop("path")
    assert replayed == live and live["runs"][0]["violations"][0]["rule"] == "stream-truncated"
