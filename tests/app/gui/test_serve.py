"""The window's Serve source: ``callscope serve`` started from the window, each answer a turn that grows in the panes.

Real parts: the server on the app's qasync loop, real clients (httpx, the
official openai SDK) on a thread of their own, the real main window offscreen.
Waits are on conditions (bounded), never sleeps.
"""

from __future__ import annotations

import pytest

from callscope.dialogs.serve import MODEL, QUIRKS, ServeDialog, ServeValues, config_from_values, replier_from_values
from callscope.engine.analysis.analyzer import RUNNING
from callscope.engine.recordings.replay import load_analyses
from callscope.engine.serve import ServeConfig, serve_recording
from callscope.engine.serve.model import ModelSource
from callscope.live.serve import ServeController
from callscope.models.session import InspectorSession
from callscope.panes.proxy_view import ProxyView
from tests.app.gui.test_proxy import CHAT, Client, post
from tests.support.gui_helpers import make_window

pytestmark = pytest.mark.gui


@pytest.fixture
def controller(qapp, qloop):
    ctl = ServeController(InspectorSession(), loop=qloop)
    yield ctl
    ctl.shutdown()


def start(qtbot, ctl: ServeController, replier, **options) -> str:
    with qtbot.waitSignal(ctl.listening, timeout=10000):
        assert ctl.start(ServeConfig(port=0, **options), replier)
    return ctl.server.url


def test_a_served_turn_grows_in_the_panes_and_is_listed(qtbot, controller, tmp_path):
    view = ProxyView(controller)
    qtbot.addWidget(view)
    url = start(qtbot, controller, serve_recording("headline_701_tokens"), speed=8.0, record_dir=tmp_path)
    assert view.stop_button.text() == "Stop server" and "serving" in view.header.text()
    growth: list[int] = []
    controller.session.grew.connect(lambda _t: growth.append(len(controller.session.current.steps)))
    client = post(url, "/v1/messages", {**CHAT, "max_tokens": 100})  # a chat generation, said in Anthropic's events
    qtbot.waitUntil(lambda: controller.showing_live, timeout=10000)
    assert controller.session.current.finish_cause == RUNNING and "in progress" in view.summaries()[0]
    qtbot.waitUntil(lambda: client.done() and controller.turns.get(1) and controller.turns.get(1).done,
                    timeout=30000)
    final = controller.session.current
    assert growth and min(growth) < len(final.steps)  # it grew in the panes before it ended
    assert final.source.extra["protocol"] == "anthropic" and final.violations == []
    assert [c.name for c in final.calls] == ["write_file"] and final.calls[0].reconstructs
    [line] = view.summaries()
    assert line.startswith("#1 POST /v1/messages") and "anthropic · 1 call" in line
    assert line.endswith("served headline_701_tokens")
    [replayed] = load_analyses(controller.turns.get(1).file)
    assert [c.to_json() for c in replayed.calls] == [c.to_json() for c in final.calls]


def test_the_window_serves_from_file_serve(qtbot, qloop, tmp_path, monkeypatch):
    import openai

    window = make_window(qtbot, tmp_path, monkeypatch)
    assert window.serve.action.text().startswith("Ser&ve")
    assert window.serve.start(ServeValues(source="headline_701_tokens", listen="127.0.0.1:0", speed="max",
                                          policy="atomic"))
    controller = window.serve.controller
    qtbot.waitUntil(lambda: controller.server is not None and controller.server.port != 0 and bool(controller.status),
                    timeout=10000)

    def stream():
        sdk = openai.OpenAI(base_url=controller.server.url + "/v1", api_key="x", max_retries=0)
        with sdk.chat.completions.stream(model="m", messages=CHAT["messages"]) as s:
            deltas = sum(1 for e in s if e.type == "tool_calls.function.arguments.delta")
            return deltas, s.get_final_completion().choices[0].message.tool_calls[0].function.name

    client = Client(stream)
    qtbot.waitUntil(lambda: client.done() and controller.turns.get(1) and controller.turns.get(1).done,
                    timeout=30000)
    assert client.error is None and client.result == (1, "write_file")  # atomic: the call in one delta
    assert window.serve.dock.isVisible() and window.serve.dock.windowTitle() == "Served turns"
    assert controller in window._live_sources()
    shown = window.session.current  # the newest served turn took the panes
    assert shown.calls[0].name == "write_file" and shown.source.extra["protocol"] == "chat"
    window.grab().save(str(tmp_path / "serve.png"))
    controller.stop()
    qtbot.waitUntil(lambda: "stopped" in controller.status, timeout=10000)
    assert window.shown_errors == []


def test_dialog_values_become_a_server(qtbot, tmp_path):
    dialog = ServeDialog()
    qtbot.addWidget(dialog)
    dialog.listen.setText("127.0.0.1:0")
    dialog.speed.setText("max")
    dialog.record_dir.setText(str(tmp_path))
    values = dialog.values()
    config = config_from_values(values)
    assert (config.port, config.speed, config.record_dir) == (0, None, tmp_path)
    assert replier_from_values(values).names() == ["headline_701_tokens"]
    assert isinstance(replier_from_values(ServeValues(mode=MODEL)), ModelSource)  # loaded when it starts
    with pytest.raises(ValueError, match="loopback only"):
        config_from_values(ServeValues(listen="192.0.2.1:0"))
    with pytest.raises(ValueError, match="speed"):
        config_from_values(ServeValues(speed="0"))
    with pytest.raises(ValueError, match="missing.jsonl"):
        replier_from_values(ServeValues(source=str(tmp_path / "missing.jsonl")))
    dialog.quirks_mode.setChecked(True)
    assert dialog.values().mode == QUIRKS and not dialog.source.isEnabled()
