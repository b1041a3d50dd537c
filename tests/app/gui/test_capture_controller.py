"""The GUI Capture source: a live capture on the Qt event loop (qasync), panes growing, stop, failures.

Real parts: a real Qt session (offscreen), the real qasync loop driving the
async client, and the canned SSE server on 127.0.0.1.
"""

from __future__ import annotations

import json

import pytest

from callscope.dialogs.capture import DEFAULT_BODY, CaptureDialog, CaptureValues, request_from_values
from callscope.engine.analysis.analyzer import RUNNING
from callscope.engine.capture import CaptureRequest, endpoint_url
from callscope.engine.capture.request import RequestError
from callscope.engine.recordings.replay import load_analyses
from callscope.live.capture import CaptureController
from callscope.models.session import InspectorSession
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, RULE_STREAMS, Scenario, chunk, tool

pytestmark = pytest.mark.gui
BODY = {"messages": [{"role": "user", "content": "weather?"}], "stream": True}




@pytest.fixture
def controller(qapp, qloop):
    session = InspectorSession()
    ctl = CaptureController(session, loop=qloop)
    yield ctl
    ctl.shutdown()


def start(ctl: CaptureController, url: str, **kw) -> None:
    assert ctl.start(CaptureRequest(endpoint_url(url), dict(BODY), read_timeout=kw.pop("read_timeout", 5.0), **kw))


@pytest.mark.usefixtures("legacy_profiles")  # the rules pinned are those of the profiles written for
def test_live_capture_grows_then_shows_the_final_analysis(qtbot, server, controller):
    paced = [(0.0 if i < 2 else 0.05, line) for i, (_, line) in enumerate(RULE_STREAMS["name-repeated"])]
    url = server.play("gui-live", Scenario(paced))
    growth: list[int] = []
    controller.session.grew.connect(lambda _t: growth.append(len(controller.session.current.steps)))
    with qtbot.waitSignal(controller.ended, timeout=10000) as ended:
        start(controller, url)
        assert controller.session.current.finish_cause == RUNNING  # the panes switched to the live capture
    final = ended.args[0]
    assert growth and min(growth) < len(final.steps)  # the panes saw it grow before it ended
    assert controller.session.current is final and final.finish_cause == "stop"
    # a repeated name: the stream meant get_weather, the client profiles build it twice (not reconstructed)
    assert [v.rule for v in final.violations] == ["name-repeated", "client-mismatch", "client-mismatch"]
    assert final.calls[0].name == "get_weather" and not final.calls[0].reconstructs
    assert controller.session.state.cursor == controller.session.state.last
    [replayed] = load_analyses(controller.record_path)
    assert [v.to_json() for v in replayed.violations] == [v.to_json() for v in final.violations]


def test_stop_keeps_what_was_received(qtbot, server, controller):
    url = server.play("gui-stall", Scenario([(0.0, ROLE), (0.0, chunk(tool(0, "call_a", "get_weather", '{"a"'))),
                                             (3.0, FINISH_TOOLS), (0.0, DONE)]))
    start(controller, url)
    qtbot.waitUntil(lambda: len(controller.session.current.steps) == 2, timeout=5000)
    with qtbot.waitSignal(controller.ended, timeout=5000) as ended:
        controller.stop()
    final = ended.args[0]
    assert final.finish_cause == "cancelled" and final.truncated and len(final.steps) == 2
    assert not controller.running


def test_refused_connection_is_reported_and_the_window_stays_usable(qtbot, controller):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with qtbot.waitSignal(controller.failed, timeout=10000) as failed:
        start(controller, f"http://127.0.0.1:{port}")
    assert "refused" in failed.args[0]
    assert controller.session.current.steps == [] and not controller.running
    assert controller.start(CaptureRequest(endpoint_url(f"http://127.0.0.1:{port}"), dict(BODY)))  # can go again


def test_dialog_values_become_a_request(qtbot):
    dialog = CaptureDialog()
    qtbot.addWidget(dialog)
    dialog.url.setText("http://127.0.0.1:8080/v1")
    dialog.key.setText("MY_KEY")
    request = request_from_values(dialog.values())
    assert request.url == "http://127.0.0.1:8080/v1/chat/completions" and request.api_key_env == "MY_KEY"
    assert request.body["tools"] == DEFAULT_BODY["tools"] and request.body["stream"] is True
    with pytest.raises(RequestError, match="not valid JSON"):
        request_from_values(CaptureValues("http://h", "{nope", "", False, 5.0))
    with pytest.raises(RequestError, match="messages"):
        request_from_values(CaptureValues("http://h", json.dumps({"tools": []}), "", False, 5.0))
