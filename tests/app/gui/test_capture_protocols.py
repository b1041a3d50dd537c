"""The window's Capture source on all three protocols, and the reconciliation pane's verdicts by client.

Real parts: the Capture dialog and controller on the qasync loop, the async
client, the canned SSE server on 127.0.0.1, the real reconciliation pane
offscreen. Waits are on signals, never sleeps.
"""

from __future__ import annotations

import json

import pytest

from callscope.dialogs.capture import DEFAULT_BODY, CaptureDialog, CaptureValues, request_from_values
from callscope.engine.capture import CaptureRequest, endpoint_url
from callscope.engine.capture.request import RequestError
from callscope.engine.recordings.replay import load_analyses
from callscope.live.capture import CaptureController
from callscope.models.session import InspectorSession
from callscope.panes.reconcile_view import ReconcileView
from tests.support.protocol_streams import anthropic_stream, responses_stream
from tests.support.sse_server import RULE_STREAMS, Scenario, lines_of

pytestmark = pytest.mark.gui
BODY = {"messages": [{"role": "user", "content": "weather?"}], "stream": True}


@pytest.fixture
def controller(qapp, qloop):
    ctl = CaptureController(InspectorSession(), loop=qloop)
    yield ctl
    ctl.shutdown()


def test_the_dialog_detects_the_protocol_from_the_url_and_converts_the_body(qtbot, monkeypatch):
    dialog = CaptureDialog()
    qtbot.addWidget(dialog)
    assert [dialog.protocol.itemText(i) for i in range(dialog.protocol.count())] == [
        "auto", "chat", "responses", "anthropic"]
    dialog.url.setText("http://127.0.0.1:8080/v1/messages")
    request = request_from_values(dialog.values())
    assert (request.protocol, request.url) == ("anthropic", "http://127.0.0.1:8080/v1/messages")
    assert request.api_key_env == "ANTHROPIC_API_KEY"  # the key variable follows the protocol
    assert request.body["tools"][0]["input_schema"] == DEFAULT_BODY["tools"][0]["function"]["parameters"]
    assert "max_tokens" in request.body
    dialog.url.setText("http://127.0.0.1:8080")
    dialog.protocol.setCurrentText("responses")
    request = request_from_values(dialog.values())
    assert (request.protocol, request.url) == ("responses", "http://127.0.0.1:8080/v1/responses")
    assert request.body["tools"][0]["name"] == "get_weather" and "input" in request.body
    assert request.api_key_env == "OPENAI_API_KEY"
    with pytest.raises(RequestError, match="the URL is the anthropic endpoint"):
        request_from_values(CaptureValues("http://h/v1/messages", json.dumps(BODY), "", False, 5.0, "chat"))


@pytest.mark.parametrize("protocol, lines, path", [
    ("responses", responses_stream(), "/v1/responses"),
    ("anthropic", anthropic_stream(), "/v1/messages"),
])
def test_responses_and_anthropic_streams_capture_and_show_live(qtbot, server, controller, protocol, lines, path):
    paced = [(0.05 if i > 6 and line else 0.0, line) for i, (_, line) in enumerate(lines_of(*lines))]
    url = server.play(f"gui-{protocol}", Scenario(paced)) + path
    values = CaptureValues(url, json.dumps(BODY), "", False, 5.0)
    request = request_from_values(values)
    assert request.protocol == protocol
    with qtbot.waitSignal(controller.ended, timeout=10000) as ended:
        assert controller.start(request)
        assert controller.analyzer.hint == protocol  # judged as the request's protocol from the first event
    final = ended.args[0]
    assert final.source.extra["protocol"] == protocol and final.violations == []
    assert [(c.name, c.reconstructs) for c in final.calls] == [("get_weather", True)]
    [replayed] = load_analyses(controller.record_path)
    assert replayed.source.extra["protocol"] == protocol and replayed.calls[0].clients == final.calls[0].clients


def test_the_chosen_client_profiles_judge_the_live_capture_and_its_replay(qtbot, server, controller):
    url = server.play("gui-clients", Scenario(RULE_STREAMS["name-repeated"]))
    controller.clients = ("naive",)
    with qtbot.waitSignal(controller.ended, timeout=10000) as ended:
        assert controller.start(CaptureRequest(endpoint_url(url), dict(BODY), read_timeout=5.0))
    final = ended.args[0]
    assert [c["profile"] for c in final.calls[0].clients] == ["naive"]
    assert [v.rule for v in final.violations] == ["name-repeated", "client-mismatch"]
    [replayed] = load_analyses(controller.record_path)  # the recording keeps the profiles
    assert [v.to_json() for v in replayed.violations] == [v.to_json() for v in final.violations]


def test_the_reconciliation_pane_shows_what_each_client_assembled(qtbot, server, controller):
    pane = ReconcileView(controller.session)
    qtbot.addWidget(pane)
    url = server.play("gui-reconcile-clients", Scenario(RULE_STREAMS["name-repeated"]))
    with qtbot.waitSignal(controller.ended, timeout=10000):
        assert controller.start(CaptureRequest(endpoint_url(url), dict(BODY), read_timeout=5.0))
    [call] = pane.result.calls
    # every default profile that reads Chat Completions, side by side: the ones that concatenate the repeated
    # name get it wrong, the ones that overwrite it are right
    assert [(c.profile, c.matches) for c in call.clients] == [
        ("openai-python", False), ("openai-node", True), ("ai-sdk", True), ("langchain-python", False),
        ("langchain-js", True), ("naive", False)]
    assert call.clients[0].name == "get_weatherget_weather" and call.clients[0].outcome == "assembled another call"
    summary = "3/6 ✓ · openai-python ✗ · langchain-python ✗ · naive ✗"
    assert call.clients_summary == summary
    shown = pane.diff.toPlainText()
    assert "what each client assembled" in shown and "get_weatherget_weather" in shown
    assert all(profile in shown for profile in ("openai-node", "ai-sdk", "langchain-js"))
    column = [pane.calls.headerData(i, pane_horizontal()) for i in range(pane.calls.columnCount())].index("clients")
    assert pane.calls.index(0, column).data() == summary


def pane_horizontal():
    from PySide6.QtCore import Qt

    return Qt.Orientation.Horizontal


def test_the_window_capture_takes_the_dialogs_client_profiles(qtbot, server, tmp_path, monkeypatch, qloop):
    from callscope.dialogs.capture import clients_from_values
    from tests.support.gui_helpers import PARALLEL, make_window

    with pytest.raises(RequestError, match="client profiles"):
        clients_from_values(CaptureValues("http://h", "{}", "", False, 5.0, clients="curl"))
    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    url = server.play("gui-window-clients", Scenario(RULE_STREAMS["name-repeated"]))
    values = CaptureValues(url, json.dumps(BODY), "", False, 5.0, clients="openai-python")
    assert window.start_capture(values)
    with qtbot.waitSignal(window.captures.ended, timeout=10000) as ended:
        pass
    assert [c["profile"] for c in ended.args[0].calls[0].clients] == ["openai-python"]
