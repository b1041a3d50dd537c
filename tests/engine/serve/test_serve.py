"""``callscope serve`` with real parts: the server on 127.0.0.1, httpx as the client, recordings made by callscope.

Served as recorded (byte for byte, at least as late as recorded), converted to
another protocol, atomic, as the final message, a session's turns in order, a
quirk by name; bad requests get OpenAI-shaped JSON errors; each answer is a turn
judged like a proxied one, and recorded so that ``replay`` reads it back.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from callscope.cli import main as cli_main
from callscope.engine.core.shipped import resolve_recording
from callscope.engine.recordings.replay import load_analyses
from callscope.engine.serve import RecordingReplier, quirks_source
from callscope.engine.streams.conformance import analyze_capture_lines
from tests.support.proxy_helpers import ProxyThread
from tests.support.serve_helpers import ServeThread
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, Scenario, chunk, clean_call, lines_of, tool

BODY = {"model": "m", "messages": [{"role": "user", "content": "weather?"}], "stream": True}
CHAT = lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE)
HEADLINE = resolve_recording("headline_701_tokens")


def sse_dump(path: Path, lines: list[tuple[float, str]]) -> Path:
    path.write_text("".join(line + "\n" for _, line in lines), encoding="utf-8")
    return path


def received(text: str) -> list[tuple[float, str]]:
    return [(float(i), line) for i, line in enumerate(text.split("\n")[:-1])]


def post(url: str, path: str, body: dict | None = None, **kwargs) -> httpx.Response:
    return httpx.post(url + path, json=BODY if body is None else body, timeout=60, **kwargs)


# ====================================================================== bad requests


def test_bad_requests_get_openai_shaped_errors(tmp_path):
    with ServeThread.of(str(sse_dump(tmp_path / "s.sse", CHAT))) as serve:
        unknown = post(serve.url, "/v1/embeddings")
        not_json = httpx.post(serve.v1 + "/chat/completions", content=b"{nope", timeout=30)
        empty = post(serve.url, "/v1/chat/completions", {"model": "m", "messages": []})
        wrong_method = httpx.get(serve.v1 + "/chat/completions", timeout=30)
        models = httpx.get(serve.v1 + "/models", timeout=30)
        serve.wait_turns(5)
    assert unknown.status_code == 404
    error = unknown.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["type"] == "invalid_request_error"
    assert "Invalid URL (POST /v1/embeddings)" in error["message"] and "/v1/messages" in error["message"]
    assert not_json.status_code == 400 and "not a JSON object" in not_json.json()["error"]["message"]
    assert empty.status_code == 400 and empty.json()["error"]["param"] == "messages"
    assert wrong_method.status_code == 405
    assert models.status_code == 200 and [m["id"] for m in models.json()["data"]] == ["s"]


# ====================================================================== as recorded, converted, atomic, final


def test_a_capture_is_served_as_recorded_to_its_own_protocol(tmp_path):
    source = sse_dump(tmp_path / "chat.sse", CHAT)
    with ServeThread.of(str(source)) as serve:
        answer = post(serve.url, "/v1/chat/completions")
        [turn] = serve.wait_turns(1)
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert answer.text == source.read_text()  # byte for byte
    assert turn.served == "chat" and turn.protocol == "chat" and turn.error is None
    assert "chat · 1 call" in turn.summary() and "0 violations" in turn.summary()


def test_recorded_times_are_kept_and_speed_divides_them(tmp_path):
    """Each piece leaves no sooner than recorded (over ``speed``): a lower bound, never a timed assertion."""
    timed = [(0.0, ROLE), (0.0, ""), (150.0, clean_call()[0]), (150.0, ""), (300.0, DONE), (300.0, "")]
    from callscope.engine.capture.client import CaptureResult
    from callscope.engine.capture.recording import CaptureRecorder
    from callscope.engine.capture.request import CaptureRequest

    trace = tmp_path / "timed.jsonl"
    recorder = CaptureRecorder(trace, CaptureRequest("http://x/v1/chat/completions", {"stream": True}))
    recorder.write(timed)
    recorder.finish(CaptureResult(url="http://x", lines=timed, done=True, ended_ms=300.0))
    for speed, floor in ((1.0, 300.0), (2.0, 150.0)):
        with ServeThread.of(str(trace), speed=speed) as serve:
            post(serve.url, "/v1/chat/completions")
            [turn] = serve.wait_turns(1)
        sent = {line: ms for ms, line in turn.result.lines}
        assert sent[DONE] >= floor and sent[clean_call()[0]] >= floor / 2


@pytest.mark.parametrize("path, protocol", [("/v1/responses", "responses"), ("/v1/messages", "anthropic")])
def test_a_chat_capture_is_converted_for_a_client_of_another_protocol(tmp_path, path, protocol):
    with ServeThread.of(str(sse_dump(tmp_path / "chat.sse", CHAT))) as serve:
        answer = post(serve.url, path)
        [turn] = serve.wait_turns(1)
    analysis = analyze_capture_lines(received(answer.text), protocol=protocol)
    assert analysis.source.extra["protocol"] == protocol and analysis.violations == []
    assert [(c.id, c.name, c.streamed_arguments) for c in analysis.calls] == [
        ("call_a", "get_weather", '{"city": "Paris", "days": 3}')]
    assert turn.protocol == protocol and "1 call" in turn.summary()


def test_atomic_sends_each_call_whole_and_a_non_streamed_request_gets_the_final_message(tmp_path):
    source = str(sse_dump(tmp_path / "chat.sse", CHAT))
    with ServeThread.of(source, "atomic") as serve:
        answer = post(serve.url, "/v1/chat/completions")
        final = post(serve.url, "/v1/chat/completions", {**BODY, "stream": False})
        serve.wait_turns(2)
    analysis = analyze_capture_lines(received(answer.text), protocol="chat")
    [call] = analysis.calls
    assert call.streamed_arguments == '{"city": "Paris", "days": 3}' and analysis.violations == []
    assert answer.text.count('"tool_calls":[') == 1  # the call in one chunk
    message = final.json()["choices"][0]["message"]
    assert final.headers["content-type"] == "application/json" and final.json()["object"] == "chat.completion"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"city": "Paris", "days": 3}


def test_the_headline_generation_is_served_streamed_or_atomic(tmp_path):
    counts = {}
    for policy in ("incremental", "atomic"):
        with ServeThread.of(HEADLINE, policy, speed=None) as serve:
            answer = post(serve.url, "/v1/chat/completions")
            [turn] = serve.wait_turns(1)
        counts[policy] = answer.text.count('"tool_calls":[')
        assert "1 call" in turn.summary() and "0 violations" in turn.summary(), turn.summary()
    assert counts["atomic"] == 1 and counts["incremental"] > 100


# ====================================================================== sessions and quirks


def test_a_proxy_session_is_served_turn_by_turn(server, tmp_path):
    second = lines_of(ROLE, chunk(tool(0, "call_b", "read_file", '{"path": "a"}')), FINISH_TOOLS, DONE)
    server.play("one", Scenario(CHAT))
    server.play("two", Scenario(second))
    with ProxyThread(f"http://127.0.0.1:{server.port}", tmp_path / "rec") as proxy:
        for name in ("one", "two"):
            httpx.post(f"{proxy.url}/s/{name}/v1/chat/completions", json=BODY, timeout=30)
        proxy.wait_turns(2)
    [session] = list((tmp_path / "rec").iterdir())
    with ServeThread.of(str(session)) as serve:
        names = [json.loads(line[6:])["choices"][0]["delta"]["tool_calls"][0]["function"]["name"]
                 for answer in (post(serve.url, "/v1/chat/completions") for _ in range(3))
                 for line in answer.text.splitlines() if '"name"' in line]
        serve.wait_turns(3)
    assert names == ["get_weather", "read_file", "get_weather"]  # in order, then from the start


def test_a_quirk_is_picked_by_model_and_never_converted(tmp_path):
    quirks = tmp_path / "quirks"
    quirks.mkdir()
    repeated = lines_of(ROLE, chunk(tool(0, "call_a", "get_weather", '{"a": ')),
                        chunk(tool(0, "call_a", "get_weather", "1}")), FINISH_TOOLS, DONE)
    sse_dump(quirks / "name_repeated.sse", repeated)
    sse_dump(quirks / "clean.sse", CHAT)
    (quirks / "README.md").write_text("what each quirk is")
    with ServeThread(RecordingReplier(quirks_source(quirks))) as serve:
        models = httpx.get(serve.v1 + "/models", timeout=30).json()
        picked = post(serve.url, "/v1/chat/completions", {**BODY, "model": "name_repeated"})
        unknown = post(serve.url, "/v1/chat/completions", {**BODY, "model": "gpt-4o"})
        other = post(serve.url, "/v1/messages", {**BODY, "model": "name_repeated"})
        turns = serve.wait_turns(4)
    assert [m["id"] for m in models["data"]] == ["clean", "name_repeated"]
    assert picked.text == (quirks / "name_repeated.sse").read_text()
    served = next(t for t in turns if t.served == "name_repeated" and t.streaming)
    assert "name-repeated" in served.summary()  # judged like any served turn: the quirk's rule fires
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "model_not_found"
    assert "name_repeated" in unknown.json()["error"]["message"]
    assert other.status_code == 400 and "/v1/chat/completions" in other.json()["error"]["message"]


# ====================================================================== turns: judged, recorded, cancelled


def test_served_turns_are_recorded_and_replay_to_their_verdict(tmp_path):
    with ServeThread.of(str(sse_dump(tmp_path / "chat.sse", CHAT)), record_dir=tmp_path / "rec") as serve:
        post(serve.url, "/v1/responses")
        [turn] = serve.wait_turns(1)
    [replayed] = load_analyses(turn.record_path)
    assert replayed.source.extra["protocol"] == "responses" and replayed.violations == []
    assert [c.to_json() for c in replayed.calls] == [c.to_json() for c in turn.analyses[0].calls]
    index = [json.loads(line) for line in (turn.record_path.parent / "turns.jsonl").read_text().splitlines()]
    assert index[0]["file"] == turn.record_path.name and index[0]["calls"] == 1


def test_a_client_that_hangs_up_cancels_its_turn(tmp_path):
    slow = [(0.0, ROLE), (0.0, ""), (0.0, clean_call()[0]), (0.0, ""), (5000.0, DONE), (5000.0, "")]
    dump = tmp_path / "slow.jsonl"
    from callscope.engine.capture.client import CaptureResult
    from callscope.engine.capture.recording import CaptureRecorder
    from callscope.engine.capture.request import CaptureRequest

    recorder = CaptureRecorder(dump, CaptureRequest("http://x/v1/chat/completions", {"stream": True}))
    recorder.write(slow)
    recorder.finish(CaptureResult(url="http://x", lines=slow, done=True, ended_ms=5000.0))
    with ServeThread.of(str(dump)) as serve:
        with httpx.stream("POST", serve.v1 + "/chat/completions", json=BODY, timeout=30) as response:
            lines = response.iter_lines()
            assert next(lines).startswith("data: ")
        [turn] = serve.wait_turns(1)
    assert turn.analyses[0].finish_cause == "cancelled" and turn.error == "the client disconnected"
    assert turn.analyses[0].violations == []


# ====================================================================== the command line


def test_the_cli_refuses_what_it_cannot_serve(tmp_path, capsys):
    assert cli_main(["serve", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert cli_main(["serve", HEADLINE, "--listen", "192.0.2.1:0"]) == 2
    assert "--allow-remote" in capsys.readouterr().err
    assert cli_main(["serve"]) == 2 and "give one of SOURCE, --model or --quirks" in capsys.readouterr().err
    assert cli_main(["serve", HEADLINE, "--speed", "0"]) == 2
    dump = sse_dump(tmp_path / "chat.sse", CHAT)
    assert cli_main(["serve", str(dump), "--policy", "llama_server"]) == 2
    assert "a server sent" in capsys.readouterr().err


def test_a_har_files_streams_are_served_by_name_or_in_turn(tmp_path):
    """A HAR from the browser's developer tools: its event streams, each in its own protocol, named FILE#N."""
    from tests.engine.recordings.test_foreign_recordings import har, har_entry, sse_text
    from tests.support.protocol_streams import responses_stream

    path = tmp_path / "devtools.har"
    path.write_text(har([
        har_entry("https://api.example/v1/models", '{"data": []}', mime="application/json"),
        har_entry("https://api.example/v1/chat/completions", sse_text([ROLE, *clean_call(), FINISH_TOOLS, DONE])),
        har_entry("https://api.example/v1/responses", sse_text(responses_stream())),
    ]))
    with ServeThread.of(str(path)) as serve:
        names = [m["id"] for m in httpx.get(serve.v1 + "/models", timeout=30).json()["data"]]
        asked = post(serve.url, "/v1/responses", {**BODY, "model": "devtools#3"})  # by name, as recorded
        converted = post(serve.url, "/v1/responses", {**BODY, "model": "devtools#2"})  # the chat one, converted
        serve.wait_turns(3)
    assert names == ["devtools#2", "devtools#3"]
    assert asked.text.startswith("event: response.created")
    for answer in (asked, converted):
        analysis = analyze_capture_lines(received(answer.text), protocol="responses")
        assert analysis.violations == [] and analysis.calls[0].name == "get_weather"
