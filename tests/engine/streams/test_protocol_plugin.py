"""Adding a protocol touches nothing else: a test-only protocol registered from the test suite.

``tests/support/plugin_protocol.py`` is one module (reader + spec) for
``tinyproto``. Registering its spec must make it work everywhere a built-in
protocol does: recognised in a recording, read by the naive client, captured by
the CLI (endpoint, body shape, key header, end event), relayed, recorded and
judged by the proxy (its key masked), and replayed. Nothing outside the test
suite is edited for it.
"""

from __future__ import annotations

import json

import httpx
import pytest

from callscope.cli import main as cli_main
from callscope.engine.capture.request import RequestError, resolve_endpoint
from callscope.engine.recordings.trace import read_trace
from callscope.engine.streams.conformance import analyze_capture_lines
from callscope.engine.streams.protocols import (
    PROTOCOLS,
    detect,
    get_protocol,
    protocol_for_path,
    register_protocol,
    unregister_protocol,
)
from callscope.engine.streams.spec import ProtocolSpec
from callscope.engine.streams.sse import SseEvent
from tests.support import plugin_protocol as tiny
from tests.support.proxy_helpers import ProxyThread
from tests.support.sse_server import Scenario

SECRET = "tiny-very-secret-77"


@pytest.fixture
def tinyproto():
    """The test-only protocol, registered for one test and removed after it (other tests list PROTOCOLS)."""
    spec = register_protocol(tiny.SPEC)
    try:
        yield spec
    finally:
        unregister_protocol(tiny.PROTOCOL_ID)


def test_registration_is_scoped_and_checked(tinyproto):
    assert tiny.PROTOCOL_ID in PROTOCOLS and get_protocol(tiny.PROTOCOL_ID) is tinyproto
    with pytest.raises(ValueError, match="already registered"):
        register_protocol(tiny.SPEC)
    builtin = PROTOCOLS[0]
    with pytest.raises(ValueError, match="built-in"):
        register_protocol(tiny.SPEC.__class__(**{**_fields(tiny.SPEC), "id": builtin}))
    with pytest.raises(ValueError, match="ambiguous"):  # a path names one protocol
        register_protocol(ProtocolSpec(**{**_fields(tiny.SPEC), "id": "other", "path": get_protocol(builtin).path}))
    with pytest.raises(ValueError, match="built-in protocols cannot be removed"):
        unregister_protocol(builtin)
    with pytest.raises(ValueError, match="protocol id"):
        ProtocolSpec(**{**_fields(tiny.SPEC), "id": "Not-An-Id"})


def _fields(spec: ProtocolSpec) -> dict:
    return {name: getattr(spec, name) for name in spec.__dataclass_fields__}


def _received(events: list[str]) -> list[tuple[float, str]]:
    """Events as a client receives them: each line, then the blank line that ends its event, 10 ms apart."""
    return [(float(i * 10), line) for i, line in enumerate(x for event in events for x in (event, ""))]


def test_unregistered_it_is_unknown():
    assert tiny.PROTOCOL_ID not in PROTOCOLS and protocol_for_path(tiny.PATH) is None
    with pytest.raises(ValueError, match="unknown protocol 'tinyproto'"):
        get_protocol(tiny.PROTOCOL_ID)
    with pytest.raises(RequestError, match="unknown protocol"):
        resolve_endpoint("http://127.0.0.1:1", tiny.PROTOCOL_ID)
    analysis = analyze_capture_lines(_received(tiny.call_stream()))
    assert {v.rule for v in analysis.violations} == {"protocol-unknown"}


def test_a_recording_is_recognised_and_judged_with_its_clients(tinyproto):
    assert detect(SseEvent(tiny.call_stream()[1][6:])) == tiny.PROTOCOL_ID
    lines = _received(tiny.call_stream())
    analysis = analyze_capture_lines(lines)
    assert analysis.source.extra["protocol"] == tiny.PROTOCOL_ID and analysis.violations == []
    [call] = analysis.calls
    assert (call.name, call.streamed_arguments, call.reconstructs) == ("get_weather", '{"city": "Paris"}', True)
    assert "naive" in analysis.source.extra["clients"]  # the naive client reads every protocol, this one too
    cut = analyze_capture_lines(lines[:-2])
    truncated = [v for v in cut.violations if v.rule == "stream-truncated"]
    assert truncated and "no tiny.end" in truncated[0].detail


def test_the_capture_cli_speaks_it(tinyproto, server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(tiny.KEY_ENV, SECRET)
    url = server.play("tiny", Scenario([(0.0, line) for line in tiny.call_stream()]))
    out = tmp_path / "tiny.jsonl"
    code = cli_main(["capture", url, "--protocol", tiny.PROTOCOL_ID, "--prompt", "weather?", "--record", str(out),
                     "--json", "--strict"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    request = server.requests[-1]
    assert request["path"].endswith(tiny.PATH)  # the base URL got the protocol's endpoint
    assert request["headers"]["x-tiny-key"] == SECRET and "authorization" not in request["headers"]
    assert request["body"]["prompt"] == "weather?" and "messages" not in request["body"]
    run = json.loads(captured.out)["runs"][0]
    assert run["source"]["protocol"] == tiny.PROTOCOL_ID and run["violations"] == []
    assert [c["name"] for c in run["calls"]] == ["get_weather"]
    assert cli_main(["replay", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["calls"] == run["calls"]


def test_a_capture_cut_before_its_end_event_says_so(tinyproto, server, capsys):
    url = server.play("tiny-cut", Scenario([(0.0, line) for line in tiny.call_stream()[:-1]]))
    code = cli_main(["capture", url + tiny.PATH, "--prompt", "x"])  # the path names the protocol
    err = capsys.readouterr().err
    assert code == 2 and "closed the stream before tiny.end" in err


def test_the_proxy_relays_records_and_judges_it(tinyproto, server, tmp_path):
    server.play("tiny-proxy", Scenario([(0.0, line) for line in tiny.call_stream()]))
    root = server.url("tiny-proxy").rsplit("/s/", 1)[0]
    with ProxyThread(root, tmp_path) as proxy:
        answer = httpx.post(f"{proxy.url}/s/tiny-proxy{tiny.PATH}", json={"prompt": "x", "key": SECRET},
                            headers={"x-tiny-key": SECRET}, timeout=30)
        [turn] = proxy.wait_turns(1)
    assert answer.status_code == 200 and "tiny.end" in answer.text
    assert turn.protocol == tiny.PROTOCOL_ID and turn.error is None
    assert f"{tiny.PROTOCOL_ID} · 1 call" in turn.summary() and "0 violations" in turn.summary()
    recorded = turn.record_path.read_text()
    assert SECRET not in recorded  # the spec's key header is a secret the proxy masks
    assert read_trace(turn.record_path).header.extra["protocol"] == tiny.PROTOCOL_ID


def test_serve_speaks_it_to_its_clients(tinyproto, tmp_path):
    """A chat recording served to a tinyproto client: written by its writer, judged as tinyproto, final message too."""
    from tests.support.serve_helpers import ServeThread
    from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, clean_call

    dump = tmp_path / "chat.sse"
    dump.write_text("".join(f"{line}\n\n" for line in (ROLE, *clean_call(), FINISH_TOOLS, DONE)))
    with ServeThread.of(str(dump)) as serve:
        streamed = httpx.post(serve.url + tiny.PATH, json={"prompt": "weather?", "stream": True}, timeout=30)
        final = httpx.post(serve.url + tiny.PATH, json={"prompt": "weather?"}, timeout=30)
        empty = httpx.post(serve.url + tiny.PATH, json={"stream": True}, timeout=30)
        turns = serve.wait_turns(3)
    analysis = analyze_capture_lines(_received([line for line in streamed.text.split("\n") if line]))
    assert analysis.source.extra["protocol"] == tiny.PROTOCOL_ID and analysis.violations == []
    assert [(c.name, c.streamed_arguments) for c in analysis.calls] == [("get_weather", '{"city": "Paris", "days": 3}')]
    assert final.json()["calls"][0]["name"] == "get_weather"
    assert empty.status_code == 400  # its own input check: a prompt or messages
    assert turns[0].protocol == tiny.PROTOCOL_ID and f"{tiny.PROTOCOL_ID} · 1 call" in turns[0].summary()
