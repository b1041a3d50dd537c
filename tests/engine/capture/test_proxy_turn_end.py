"""The proxy's verdicts on how a turn ended (#16 §4), with real sockets on 127.0.0.1.

- A turn is complete when its protocol's last event arrived (``[DONE]``,
  ``response.completed``, ``message_stop``), however the client closes
  afterwards: openai-python's raw ``stream=True`` loop closes right after
  ``[DONE]``, racing the upstream's own end. The atomic comparison is kept.
- A client that hangs up mid-stream is the client's doing: the turn is
  cancelled by the client, and no rule is raised against the server.
"""

from __future__ import annotations

import json
import socket

import pytest

from callscope.engine.inspector.ttfd import ttfd_label
from callscope.engine.recordings.trace import read_trace
from tests.support.protocol_streams import anthropic_stream, responses_stream
from tests.support.proxy_helpers import ProxyThread
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, Scenario, clean_call, lines_of

CHAT = lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE)
STREAMS = {  # protocol -> (endpoint, its stream, the bytes its last event holds)
    "chat": ("/v1/chat/completions", CHAT, b"[DONE]"),
    "responses": ("/v1/responses", lines_of(*responses_stream()), b'"response.completed"'),
    "anthropic": ("/v1/messages", lines_of(*anthropic_stream()), b'"message_stop"'),
}
BODY = json.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}).encode()


def root(server) -> str:
    return f"http://127.0.0.1:{server.port}"


def read_until_then_close(port: int, path: str, marker: bytes, reset: bool = False) -> bytes:
    """A raw client: POST, read until ``marker`` arrived, close at once (``reset``: with an RST, no FIN wait)."""
    with socket.create_connection(("127.0.0.1", port), 10) as sock:
        sock.settimeout(20)
        sock.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
                     % (path.encode(), len(BODY), BODY))
        got = b""
        while marker not in got:
            data = sock.recv(65536)
            if not data:
                break
            got += data
        if reset:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    return got


def assert_complete(turn) -> None:
    """Recorded and judged as a whole turn: no error, not cancelled, no violation, the atomic comparison kept."""
    [analysis] = turn.analyses
    assert turn.error is None, turn.summary()
    assert analysis.finish_cause != "cancelled" and not analysis.truncated, turn.summary()
    assert analysis.violations == [], turn.summary()
    assert analysis.ttfd_atomic.ms is not None and "vs never" not in turn.summary(), turn.summary()
    assert read_trace(turn.record_path).end.cause == "stop"


@pytest.mark.parametrize("protocol", list(STREAMS))
def test_a_client_that_closes_after_the_last_event_completes_its_turn(server, tmp_path, protocol):
    """The upstream lingers after its last event (its body not ended yet): the client's close always comes first."""
    path, stream, marker = STREAMS[protocol]
    server.play(f"linger-{protocol}", Scenario(stream, end="stall", stall_s=3.0))
    with ProxyThread(root(server), tmp_path) as proxy:
        got = read_until_then_close(proxy.server.port, f"/s/linger-{protocol}{path}", marker)
        [turn] = proxy.wait_turns(1)
    assert marker in got
    assert turn.protocol == protocol
    assert_complete(turn)


def test_closing_right_after_done_never_races_the_upstream_end(server, tmp_path):
    """The upstream ends its body 0-3 ms after [DONE] (a blank line, then the end); the client closes (with a reset)
    the moment it reads [DONE]. Which the proxy hears of first is a race, both ways round; repeated, the old verdict
    ("cancelled") shows in many of the turns."""
    rounds = 40
    for n in range(rounds):
        server.play(f"race{n}", Scenario([*CHAT, ((n % 4) / 1000, "")]))
    with ProxyThread(root(server), tmp_path) as proxy:
        for n in range(rounds):
            read_until_then_close(proxy.server.port, f"/s/race{n}/v1/chat/completions", b"[DONE]", reset=True)
        turns = proxy.wait_turns(rounds)
    cancelled = [t.number for t in turns if t.analyses and t.analyses[0].finish_cause == "cancelled"]
    assert cancelled == [], f"{len(cancelled)} of {rounds} complete turns recorded as cancelled: {cancelled}"
    for turn in turns:
        assert_complete(turn)


def test_a_client_that_hangs_up_mid_stream_is_not_the_servers_fault(server, tmp_path):
    """Cancelled by the client: said so, and no rule (stream-truncated or any other) is raised against the server."""
    server.play("hangup", Scenario([*lines_of(ROLE, *clean_call()), (3.0, FINISH_TOOLS), (0.0, ""), (0.0, DONE),
                                    (0.0, "")]))
    with ProxyThread(root(server), tmp_path) as proxy:
        got = read_until_then_close(proxy.server.port, "/s/hangup/v1/chat/completions", b"days")
        [turn] = proxy.wait_turns(1)
    assert b"[DONE]" not in got
    [analysis] = turn.analyses
    assert analysis.finish_cause == "cancelled" and turn.error == "the client disconnected"
    assert analysis.violations == [], [v.rule for v in analysis.violations]
    assert "the client disconnected" in turn.summary() and "0 violations" in turn.summary()
    # the atomic baseline never sent the cut call: the turn's line says so as the window's badge does ("-" before)
    assert "vs never atomic" in turn.summary() and "vs never atomic" in ttfd_label(analysis)
    trace = read_trace(turn.record_path)
    assert trace.end.cause == "cancelled" and trace.end.detail == "the client disconnected"
