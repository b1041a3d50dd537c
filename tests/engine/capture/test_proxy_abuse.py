"""The proxy under abuse: what a client can make it hold is bounded, and what it sends reaches no line raw.

Real sockets on 127.0.0.1, bounded in count and time: request bodies over the
per-request limit (413) and over the in-flight limit across connections (503),
each answered with one line; slowloris and idle connections closed by the
header and idle timeouts; a model name full of newlines and escape codes
written escaped in the turn's line. (The whole-process cases, ``kill -9`` and
the CLI's output, are in ``tests/system/test_proxy_process.py``.)
"""

from __future__ import annotations

import contextlib
import socket
import time

import httpx

from callscope.cli import main as cli_main
from callscope.engine.capture.proxy.config import MAX_REQUEST_BYTES
from tests.support.proxy_helpers import ProxyThread

#: A closed port: every exchange is a 502 (no upstream is needed to test what the client side can do).
NOWHERE = "http://127.0.0.1:9"


def connect(proxy: ProxyThread) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", proxy.server.port), timeout=10)
    return sock


def answer(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """Everything the proxy sends until it closes the connection (bounded)."""
    sock.settimeout(timeout)
    data = b""
    while True:
        try:
            part = sock.recv(65536)
        except ConnectionResetError:
            break
        if not part:
            break
        data += part
    return data


def one_line_answer(data: bytes, status: int) -> str:
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 %d " % status), data[:200]
    text = body.decode()
    assert text.count("\n") == 1 and text.endswith("\n"), text
    return text


def send_body(sock: socket.socket, size: int) -> int:
    """Send up to ``size`` bytes of body; how many went before the proxy stopped reading (or closed)."""
    sent, piece = 0, b"x" * 65536
    sock.settimeout(3)
    try:
        while sent < size:
            sent += sock.send(piece[: size - sent])
    except (TimeoutError, OSError):
        pass
    return sent


HEAD = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"


# ------------------------------------------------------------------ request bodies


def test_a_declared_body_over_the_default_limit_is_a_413_before_any_byte_of_it(tmp_path):
    with ProxyThread(NOWHERE) as proxy:
        sock = connect(proxy)
        sock.sendall(HEAD + b"content-length: %d\r\n\r\n" % (MAX_REQUEST_BYTES + 1))
        line = one_line_answer(answer(sock), 413)
        assert "the request body" in line and "64 MiB" in line, line
        assert proxy.server.bodies.held == 0


def test_a_chunked_body_over_the_limit_is_a_413_and_nothing_stays_held():
    with ProxyThread(NOWHERE, max_request_bytes=1 << 20, max_in_flight_bytes=4 << 20) as proxy:
        sock = connect(proxy)
        sock.sendall(HEAD + b"transfer-encoding: chunked\r\n\r\n")
        piece = b"x" * 65536
        sent = 0
        sock.settimeout(3)
        try:
            while sent < 4 << 20:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                sent += len(piece)
        except OSError:
            pass
        assert "over the 1 MiB limit" in one_line_answer(answer(sock), 413)
        released(proxy)


def test_bodies_held_across_connections_are_capped_with_a_503():
    # three uploads of 3 MiB, each under the 4 MiB request limit, held open (the last byte never comes): the
    # first two fit in the 7 MiB in flight, the third would not, and is refused while the others are still held
    with ProxyThread(NOWHERE, max_request_bytes=4 << 20, max_in_flight_bytes=7 << 20) as proxy:
        socks = [connect(proxy) for _ in range(3)]
        for sock in socks[:2]:
            sock.sendall(HEAD + b"content-length: %d\r\n\r\n" % (3 << 20))
            assert send_body(sock, (3 << 20) - 1) == (3 << 20) - 1
        deadline = time.monotonic() + 10
        while proxy.server.bodies.held < (6 << 20) - 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proxy.server.bodies.held == (6 << 20) - 2
        third = socks[2]
        third.sendall(HEAD + b"content-length: %d\r\n\r\n" % (3 << 20))
        send_body(third, 3 << 20)
        line = one_line_answer(answer(third), 503)
        assert "7 MiB of request bodies are in flight" in line, line
        # the held ones end (their clients send the last byte): the upstream is down, a 502 each, and the budget empties
        for sock in socks[:2]:
            sock.sendall(b"x")
            one_line_answer(answer(sock), 502)
        released(proxy)


def test_a_body_within_the_limits_goes_through_and_its_bytes_are_given_back():
    # the limits refuse nothing they should not: a 1 MiB body under a 1 MiB limit is forwarded (the upstream is
    # down: a 502), five times over one 1 MiB budget, so each exchange gives its bytes back when it ends
    with ProxyThread(NOWHERE, max_request_bytes=1 << 20, max_in_flight_bytes=1 << 20) as proxy:
        for _ in range(5):
            response = httpx.post(f"{proxy.url}/v1/chat/completions", content=b"{" + b" " * ((1 << 20) - 2) + b"}")
            assert response.status_code == 502
            released(proxy)


def released(proxy: ProxyThread) -> None:
    """Wait (bounded) until no request body is held: a body is held until its exchange has ended."""
    deadline = time.monotonic() + 10
    while proxy.server.bodies.held and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proxy.server.bodies.held == 0


# ------------------------------------------------------------------ slow and idle clients


def open_count(socks: list[socket.socket], wait: float) -> int:
    """How many of ``socks`` the proxy still keeps open after ``wait`` seconds (a 408 or a close ends one)."""
    time.sleep(wait)
    alive = 0
    for sock in socks:
        sock.setblocking(False)
        try:
            data = sock.recv(4096)
        except BlockingIOError:
            alive += 1
            continue
        except OSError:
            continue
        assert data == b"" or data.startswith(b"HTTP/1.1 408 "), data[:100]
    return alive


def test_slowloris_heads_are_cut_at_the_header_timeout_even_when_bytes_keep_coming():
    with ProxyThread(NOWHERE, header_timeout=1.0, idle_timeout=30.0) as proxy:
        socks = [connect(proxy) for _ in range(40)]
        for sock in socks:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\n")
        began = time.monotonic()
        while time.monotonic() - began < 2.0:  # a header line every 0.25 s: never silent, never complete
            for sock in socks:
                with contextlib.suppress(OSError):
                    sock.sendall(b"x-slow: 1\r\n")
            time.sleep(0.25)
        assert open_count(socks, 0.5) == 0
        data = answer(connect_and_send(proxy, b"POST / HTTP/1.1\r\n"), timeout=5)
        assert "the request head was not complete within 1 s" in one_line_answer(data, 408)


def test_idle_connections_are_closed_at_the_idle_timeout_without_a_word():
    with ProxyThread(NOWHERE, header_timeout=5.0, idle_timeout=1.0) as proxy:
        socks = [connect(proxy) for _ in range(40)]
        kept = connect(proxy)  # a keep-alive connection after one exchange is idle too
        kept.sendall(b"GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n")
        kept.settimeout(5)
        assert kept.recv(4096).startswith(b"HTTP/1.1 502 ")
        assert open_count([*socks, kept], 2.0) == 0
        assert all(answer(s, 1) == b"" for s in socks)  # nothing was said on a connection that never asked


def test_a_body_that_stalls_is_cut_at_the_idle_timeout_with_a_408():
    with ProxyThread(NOWHERE, header_timeout=5.0, idle_timeout=1.0) as proxy:
        sock = connect(proxy)
        sock.sendall(HEAD + b"content-length: 100\r\n\r\n{")
        began = time.monotonic()
        line = one_line_answer(answer(sock, 10), 408)
        assert "the request body stalled for 1 s" in line
        assert time.monotonic() - began < 5
        released(proxy)


def connect_and_send(proxy: ProxyThread, data: bytes) -> socket.socket:
    sock = connect(proxy)
    sock.sendall(data)
    return sock


def test_the_timeouts_and_limits_are_options_and_checked(capsys):
    for argv, wanted in ((["--header-timeout", "0"], "--header-timeout must be"),
                         (["--idle-timeout", "nan"], "--idle-timeout must be"),
                         (["--max-body", "-1"], "--max-body must be"),
                         (["--max-body", "10", "--max-in-flight", "5"], "--max-in-flight (5 MiB) must be at least")):
        assert cli_main(["proxy", "--upstream", NOWHERE, *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and wanted in err, err


# ------------------------------------------------------------------ what reaches the terminal


HOSTILE = "evil\n#99 POST /forged line\x1b]0;pwned\x07\x1b[2J\x9b31m\u202e"


def test_a_hostile_model_name_cannot_forge_a_line_or_reach_the_terminal():
    with ProxyThread(NOWHERE) as proxy:
        httpx.post(f"{proxy.url}/v1/chat/completions", json={"model": HOSTILE, "stream": True, "messages": []})
        (turn,) = proxy.wait_turns(1)
    line = turn.summary()
    assert "\n" not in line and "\x1b" not in line and "\x07" not in line and "\x9b" not in line, line
    assert "\u202e" not in line
    assert "evil\\n#99 POST /forged line\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202e" in line, line
