"""The recording proxy with real parts: the loopback canned server upstream, real sockets, the official openai SDK.

What a client gets through the proxy is what it gets directly (byte for byte,
chunk for chunk, as the server sends it: never buffered); each streamed turn
is recorded as a capture trace that replays to the very report the proxy gave
live; the client's key reaches the upstream but no recording; non-streaming
answers pass through and are listed; an unreachable upstream is a 502 with
one line; a client that leaves cancels its upstream request.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading

import httpx
import pytest

from callscope.engine.capture.proxy import ProxyConfig, check_upstream, parse_listen
from callscope.engine.capture.proxy.config import upstream_url
from callscope.engine.capture.proxy.lines import BodyDecoder, LineStamper
from callscope.engine.capture.redact import Redactor
from callscope.engine.capture.request import RequestError
from callscope.engine.recordings.trace import read_trace
from tests.support.paths import ROOT
from tests.support.protocol_streams import anthropic_stream, responses_stream
from tests.support.proxy_helpers import ProxyThread, live, replayed
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, Scenario, chunk, clean_call, lines_of

SECRET = "sk-proxy-test-0123456789abcdef"
CHAT = lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE)


def upstream(server) -> str:
    return f"http://127.0.0.1:{server.port}"


# ====================================================================== what the client gets


def test_the_openai_sdk_gets_the_same_chunks_through_the_proxy_as_directly(server, tmp_path):
    import openai

    server.play("sdk-chat", Scenario(CHAT))
    with ProxyThread(upstream(server), tmp_path) as proxy:
        got = {}
        for how, base in (("direct", upstream(server)), ("proxy", proxy.url)):
            client = openai.OpenAI(base_url=f"{base}/s/sdk-chat/v1", api_key=SECRET, max_retries=0)
            with client.chat.completions.stream(model="m", messages=[{"role": "user", "content": "x"}]) as stream:
                chunks = [event.chunk.model_dump() for event in stream if event.type == "chunk"]
                final = stream.get_final_completion()
            got[how] = (chunks, final.choices[0].message.tool_calls[0].model_dump())
        [turn] = proxy.wait_turns(1)
    assert got["proxy"] == got["direct"] and len(got["proxy"][0]) == 5
    assert turn.streaming and turn.protocol == "chat" and turn.model == "m"
    assert "1 call" in turn.summary() and "0 violations" in turn.summary() and "turn-0001.jsonl" in turn.summary()
    assert server.requests[-1]["headers"]["authorization"] == f"Bearer {SECRET}"  # the key went upstream
    assert replayed(turn) == live(turn)
    assert SECRET not in turn.record_path.read_text()


def test_the_bytes_are_the_servers_byte_for_byte(server, tmp_path):
    # an echo of the key inside the stream, a CRLF line, a comment, a last line without its newline
    lines = lines_of(ROLE, chunk({"content": "key {AUTH}"})) + [(0.0, ": keep-alive"), (0.0, "")]
    server.play("bytes", Scenario(lines + lines_of(*clean_call(), FINISH_TOOLS), tail=b"data: [DONE]\r\n\r\ndata: x"))
    with ProxyThread(upstream(server), tmp_path) as proxy:
        headers = {"Authorization": f"Bearer {SECRET}", "Content-Type": "application/json"}
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
        direct = httpx.post(f"{upstream(server)}/s/bytes/v1/chat/completions", json=body, headers=headers)
        through = httpx.post(f"{proxy.url}/s/bytes/v1/chat/completions", json=body, headers=headers)
        [turn] = proxy.wait_turns(1)
    assert through.content == direct.content and SECRET.encode() in through.content  # the client's own echo, intact
    assert through.headers["content-type"] == "text/event-stream"
    recorded = turn.record_path.read_text()
    assert SECRET not in recorded and "key ***" in recorded  # ...but never in the recording
    trace = read_trace(turn.record_path)
    assert trace.header.messages == [{"role": "user", "content": "hi"}]
    assert [line.line for line in trace.lines][-3:] == ["data: [DONE]", "", "data: x"]
    assert replayed(turn) == live(turn)


def test_chunks_go_through_as_they_arrive_never_buffered(tmp_path):
    """The upstream sends one event, then waits until the client has it: a proxy that buffered would never
    deliver it (the wait is bounded, so the test fails instead of hanging)."""
    released = threading.Event()
    first = chunk({"role": "assistant", "content": "first"})

    async def handle(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
        for payload in [first + "\n\n"]:
            writer.write(b"%x\r\n%s\r\n" % (len(payload), payload.encode()))
        await writer.drain()
        await asyncio.to_thread(released.wait, 20)
        rest = (chunk(finish="stop") + "\n\n" + DONE + "\n\n").encode()
        writer.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(rest), rest))
        await writer.drain()
        writer.close()

    with _LoopbackServer(handle) as gated, ProxyThread(gated.url, tmp_path) as proxy:
        with httpx.stream("POST", f"{proxy.url}/v1/chat/completions", json={"stream": True, "messages": []},
                          timeout=30) as response:
            lines = response.iter_lines()
            assert next(lines) == first  # arrived while the upstream still holds the rest back
            released.set()
            rest = list(lines)
        [turn] = proxy.wait_turns(1)
    assert DONE in rest and turn.analyses[0].finish_reason == "stop" and not turn.analyses[0].violations


@pytest.mark.parametrize("protocol", ["responses", "anthropic"])
def test_responses_and_anthropic_streams_are_recorded_and_replay_to_the_live_report(server, tmp_path, protocol):
    if protocol == "responses":
        stream, path, key_header = responses_stream(), "/v1/responses", "authorization"
    else:
        stream, path, key_header = anthropic_stream(), "/v1/messages", "x-api-key"
    server.play(f"p-{protocol}", Scenario(lines_of(*stream)))
    with ProxyThread(upstream(server), tmp_path) as proxy:
        headers = {"x-api-key": SECRET, "anthropic-version": "2023-06-01"} if protocol == "anthropic" else \
            {"Authorization": f"Bearer {SECRET}"}
        body = {"model": "canned", "stream": True, "max_tokens": 64,
                **({"input": "weather?"} if protocol == "responses" else {"messages": [{"role": "user",
                                                                                     "content": "weather?"}]})}
        direct = httpx.post(f"{upstream(server)}/s/p-{protocol}{path}", json=body, headers=headers)
        through = httpx.post(f"{proxy.url}/s/p-{protocol}{path}", json=body, headers=headers)
        [turn] = proxy.wait_turns(1)
    assert through.content == direct.content
    assert server.requests[-1]["headers"][key_header].endswith(SECRET)
    assert turn.protocol == protocol and f"{protocol} · 1 call" in turn.summary()
    [analysis] = turn.analyses
    assert analysis.calls[0].name == "get_weather" and analysis.calls[0].reconstructs and not analysis.violations
    assert {c["profile"] for c in analysis.calls[0].clients} >= {"naive"}
    assert replayed(turn) == live(turn)
    assert SECRET not in turn.record_path.read_text()


def test_the_openai_sdk_reads_a_responses_stream_through_the_proxy(server, tmp_path):
    import openai

    server.play("sdk-resp", Scenario(lines_of(*responses_stream())))
    with ProxyThread(upstream(server), tmp_path) as proxy:
        results = []
        for base in (upstream(server), proxy.url):
            client = openai.OpenAI(base_url=f"{base}/s/sdk-resp/v1", api_key=SECRET, max_retries=0)
            with client.responses.stream(model="canned", input="weather?") as stream:
                kinds = [event.type for event in stream]
                results.append((kinds, stream.get_final_response().output[0].model_dump()))
        [turn] = proxy.wait_turns(1)
    assert results[0] == results[1] and results[1][1]["arguments"] == '{"city": "Paris", "days": 3}'
    assert turn.protocol == "responses"
    sdk = next(v for v in turn.analyses[0].calls[0].clients if v["profile"] == "openai-python")
    assert sdk["matches"] and sdk["arguments"] == results[1][1]["arguments"]


# ====================================================================== what passes through, what fails


def test_non_streaming_answers_pass_through_and_are_listed(server, tmp_path):
    server.play("json", Scenario(status=200, content_type="application/json", body=b'{"object": "list", "data": []}'))
    with ProxyThread(upstream(server), tmp_path) as proxy:
        direct = httpx.get(f"{upstream(server)}/s/json/v1/models")
        through = httpx.get(f"{proxy.url}/s/json/v1/models?api_key={SECRET}")
        missing = httpx.post(f"{proxy.url}/nowhere", json={"model": "x"})
        turns = proxy.wait_turns(2)
        index = [json.loads(line) for line in proxy.server.session.index.read_text().splitlines()]
    assert through.content == direct.content and through.status_code == 200 and missing.status_code == 404
    assert [t.streaming for t in turns] == [False, False] and all(t.record_path is None for t in turns)
    assert turns[0].summary().endswith("HTTP 200 application/json, not streamed (passed through)")
    assert SECRET not in turns[0].summary() and "api_key=***" in turns[0].target
    assert sorted(r["turn"] for r in index) == [1, 2] and not any(r["stream"] for r in index)
    assert os.listdir(proxy.server.session.path) == ["turns.jsonl"]  # nothing streamed, nothing recorded


def test_an_unreachable_upstream_is_a_502_with_one_line(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]
    with ProxyThread(f"http://127.0.0.1:{dead}", tmp_path, connect_timeout=5) as proxy:
        answer = httpx.post(f"{proxy.url}/v1/chat/completions", json={"stream": True})
        [turn] = proxy.wait_turns(1)
    assert answer.status_code == 502
    assert answer.text.count("\n") == 1 and "connection refused" in answer.text and "callscope proxy" in answer.text
    assert turn.status is None and "connection refused" in turn.summary()


def test_a_client_that_leaves_cancels_its_upstream_request(tmp_path):
    """The upstream sends one event and then nothing: the client reads it and leaves. The proxy must close the
    upstream connection at once (the upstream sees its EOF), not when the upstream next writes."""
    upstream_closed = threading.Event()

    async def handle(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        payload = (ROLE + "\n\n").encode()
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                     b"%x\r\n%s\r\n" % (len(payload), payload))
        await writer.drain()
        try:
            while await asyncio.wait_for(reader.read(65536), 20):  # the request body, then the proxy's EOF
                pass
            upstream_closed.set()
        finally:
            writer.close()

    with _LoopbackServer(handle) as silent, ProxyThread(silent.url, tmp_path) as proxy:
        with httpx.stream("POST", f"{proxy.url}/v1/chat/completions", json={"stream": True},
                          timeout=30) as response:
            events = response.iter_lines()
            assert next(events).startswith("data: ")
        # the client closed its connection mid-stream
        [turn] = proxy.wait_turns(1)
        assert upstream_closed.wait(20), "the upstream request was not cancelled"
    trace = read_trace(turn.record_path)
    assert trace.end is not None and trace.end.cause == "cancelled" and trace.end.detail == "the client disconnected"
    assert turn.analyses[0].finish_cause == "cancelled" and "the client disconnected" in turn.summary()
    assert turn.analyses[0].violations == []  # the client's doing: no rule against the server


def test_keep_alive_chunked_request_bodies_and_expect_continue(server, tmp_path):
    """One client connection, two requests: the first with a chunked body and Expect: 100-continue."""
    server.play("ka", Scenario(CHAT))
    body = json.dumps({"model": "ka", "stream": True, "messages": [{"role": "user", "content": "x"}]}).encode()
    with ProxyThread(upstream(server), tmp_path) as proxy, socket.create_connection(("127.0.0.1",
                                                                                      proxy.server.port), 10) as sock:
        sock.settimeout(20)
        head = (b"POST /s/ka/v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\n"
                b"transfer-encoding: chunked\r\nexpect: 100-continue\r\n\r\n")
        sock.sendall(head)
        assert _read_until(sock, b"\r\n\r\n").startswith(b"HTTP/1.1 100 ")
        half = len(body) // 2
        sock.sendall(b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (half, body[:half], len(body) - half, body[half:]))
        first = _read_response(sock)
        sock.sendall(b"GET /s/ka/v1/chat/completions HTTP/1.1\r\nHost: x\r\n\r\n")
        second = _read_response(sock)
        turns = proxy.wait_turns(2)
    assert b"[DONE]" in first and b"[DONE]" in second
    assert [t.model for t in turns] == ["ka", "canned"] and server.requests[-2]["body"]["model"] == "ka"
    assert all("1 call" in t.summary() for t in turns)


# ====================================================================== the command line


def test_cli_prints_a_line_per_turn_and_sigterm_ends_open_recordings(server, tmp_path):
    server.play("cli-ok", Scenario(CHAT))
    server.play("cli-hang", Scenario(lines_of(ROLE), end="stall", stall_s=30, max_s=40))
    proc = subprocess.Popen([sys.executable, "-m", "callscope", "proxy", "--listen", "127.0.0.1:0", "--upstream",
                             upstream(server), "--record-dir", str(tmp_path), "--atomic-silence", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        banner = proc.stderr.readline()
        url = banner.split("listening on ")[1].split(" ")[0]
        httpx.post(f"{url}/s/cli-ok/v1/chat/completions", json={"model": "m", "stream": True, "messages": []},
                   headers={"Authorization": f"Bearer {SECRET}"})
        line = proc.stdout.readline()
        with httpx.stream("POST", f"{url}/s/cli-hang/v1/chat/completions", json={"stream": True},
                          timeout=30) as hanging:
            events = hanging.iter_lines()  # held: a dropped iterator would close the connection
            assert next(events).startswith("data: ")  # the turn is open
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert line.startswith("#1 POST /s/cli-ok/v1/chat/completions m: chat · 1 call") and "turn-0001.jsonl" in line
    assert "#2 POST /s/cli-hang/v1/chat/completions" in out and "the proxy was stopped" in out
    assert "stopped after 2 turns (2 streamed)" in err and SECRET not in out + err + banner
    [folder] = tmp_path.iterdir()
    second = read_trace(folder / "turn-0002.jsonl")
    assert second.end is not None and second.end.cause == "cancelled" and second.end.detail == "the proxy was stopped"
    assert second.header.extra["atomic_silence_ms"] == 2000.0
    assert sorted(json.loads(r)["turn"] for r in (folder / "turns.jsonl").read_text().splitlines()) == [1, 2]


@pytest.mark.parametrize(("argv", "wanted"), [
    (["--upstream", "ftp://x"], "http:// or https://"),
    (["--upstream", "http://x?key=1"], "no ?query"),
    (["--upstream", "http://x", "--listen", "localhost"], "HOST:PORT"),
    (["--upstream", "http://x", "--listen", "127.0.0.1:99999"], "0 to 65535"),
    (["--upstream", "http://x", "--client", "nope"], "unknown client profile"),
    (["--upstream", "http://x", "--atomic-silence", "nan"], "finite number"),
])
def test_cli_usage_errors_are_one_line(argv, wanted):
    done = subprocess.run([sys.executable, "-m", "callscope", "proxy", *argv], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and wanted in done.stderr


def test_cli_a_port_in_use_is_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "callscope", "proxy", "--upstream", "http://127.0.0.1:9",
                               "--listen", f"127.0.0.1:{port}"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in done.stderr


# ====================================================================== the parts


def test_listen_addresses_and_upstream_paths():
    assert parse_listen("127.0.0.1:8787") == ("127.0.0.1", 8787)
    assert parse_listen(":0") == ("127.0.0.1", 0) and parse_listen("9000") == ("127.0.0.1", 9000)
    assert parse_listen("[::1]:8080") == ("::1", 8080)
    with pytest.raises(RequestError):
        parse_listen("[::1]")
    assert check_upstream("https://api.openai.com/v1/") == "https://api.openai.com/v1"
    assert upstream_url("https://api.openai.com/v1", "/v1/chat/completions") == "https://api.openai.com/v1/chat/completions"
    assert upstream_url("https://api.openai.com", "/v1/responses?x=1") == "https://api.openai.com/v1/responses?x=1"
    assert upstream_url("http://h/openai", "/v1/messages") == "http://h/openai/v1/messages"
    with pytest.raises(RequestError):
        ProxyConfig("http://x", port=70000)


def test_lines_are_stamped_split_and_masked_like_the_capture_clients():
    stamper = LineStamper(Redactor.of([SECRET]))
    assert stamper.feed(1.0, b"data: a\r") == [(1.0, "data: a")]
    assert stamper.feed(2.0, b"\ndata: " + SECRET.encode()[:5]) == []  # the CR's LF; a line split over reads
    assert stamper.feed(3.0, SECRET.encode()[5:] + b"\n\n") == [(3.0, "data: ***"), (3.0, "")]
    assert stamper.feed(4.0, b"data: cut") == [] and stamper.rest(5.0) == [(5.0, "data: cut")]
    assert stamper.cut_bytes == 9


def test_compressed_bodies_are_decoded_for_the_recording_only():
    import gzip
    import zlib

    data = b"data: {}\n\n" * 50
    packed = gzip.compress(data)
    decoder = BodyDecoder("gzip")
    assert decoder.decode(packed[:7]) + decoder.decode(packed[7:]) == data
    assert BodyDecoder("deflate").decode(zlib.compress(data)) == data
    raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    assert BodyDecoder("deflate").decode(raw.compress(data) + raw.flush()) == data
    assert BodyDecoder("identity").decode(data) == data
    assert "cannot decode" in (BodyDecoder("x-unknown").error or "")


def test_a_gzip_stream_reaches_the_client_compressed_and_the_recording_decoded(tmp_path):
    import gzip

    body = gzip.compress("".join(f"{line}\n" for _, line in CHAT).encode())

    async def handle(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-encoding: gzip\r\n"
                     b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    with _LoopbackServer(handle) as gz, ProxyThread(gz.url, tmp_path) as proxy:
        with httpx.stream("POST", f"{proxy.url}/v1/chat/completions", json={"stream": True},
                          headers={"accept-encoding": "gzip"}) as response:
            raw = b"".join(response.iter_raw())
        [turn] = proxy.wait_turns(1)
    assert raw == body  # as the server sent it
    assert "1 call" in turn.summary() and not turn.analyses[0].violations


# ====================================================================== helpers


class _LoopbackServer:
    """A one-handler asyncio server on 127.0.0.1 in a background thread (for upstreams the canned one cannot play)."""

    def __init__(self, handle) -> None:
        self.handle = handle
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.port = 0

    def __enter__(self) -> _LoopbackServer:
        self.thread.start()

        async def boot():
            self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
            return self.server.sockets[0].getsockname()[1]

        self.port = asyncio.run_coroutine_threadsafe(boot(), self.loop).result(10)
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __exit__(self, *exc_info) -> None:
        async def close():
            self.server.close()
            for task in [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
                task.cancel()

        asyncio.run_coroutine_threadsafe(close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def _read_until(sock: socket.socket, end: bytes) -> bytes:
    data = b""
    while end not in data:
        piece = sock.recv(65536)
        assert piece, f"connection closed before {end!r}: {data!r}"
        data += piece
    return data


def _read_response(sock: socket.socket) -> bytes:
    """One chunked response off a kept-alive connection: its head, then chunks up to the zero-length one."""
    data = _read_until(sock, b"\r\n\r\n")
    head, _, rest = data.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head.lower(), head
    while not rest.endswith(b"0\r\n\r\n"):
        piece = sock.recv(65536)
        assert piece, "connection closed mid-response"
        rest += piece
    return rest
