"""The Capture source in the real main window: a live stream from a real SSE server on 127.0.0.1.

Real parts: the MainWindow (offscreen), the qasync loop the app runs on, the
async httpx client, and the canned SSE server of ``tests/support/sse_server.py``.
Waits are on signals and conditions, never sleeps.
"""

from __future__ import annotations

import json
import socket

import pytest
from PySide6.QtCore import QTimer

from callscope.engine.analysis.analyzer import RUNNING
from callscope.engine.recordings.replay import load_analyses
from tests.support.gui_helpers import PARALLEL, REGRESS, make_window
from tests.support.sse_server import DONE, FINISH_TOOLS, RULE_STREAMS, Scenario, clean_call

pytestmark = pytest.mark.gui
BODY = {"messages": [{"role": "user", "content": "weather?"}], "stream": True}




@pytest.fixture
def window(qtbot, tmp_path, monkeypatch, qloop):
    return make_window(qtbot, tmp_path, monkeypatch, PARALLEL)


def values(url: str, read_timeout: float = 5.0):
    from callscope.dialogs.capture import CaptureValues

    return CaptureValues(url, json.dumps(BODY), "", False, read_timeout)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.usefixtures("legacy_profiles")  # the rules pinned are those of the profiles written for
def test_a_capture_fills_the_panes_live_and_shows_its_violation(window, server, qtbot, monkeypatch):
    from callscope.dialogs.capture import CaptureDialog

    paced = [(0.0 if i < 2 else 0.05, line) for i, (_, line) in enumerate(RULE_STREAMS["name-repeated"])]
    url = server.play("window-live", Scenario(paced))

    def accept(dialog):  # the real dialog, filled in as a user would, then accepted
        dialog.url.setText(url)
        dialog.body.setPlainText(json.dumps(BODY))
        return 1

    monkeypatch.setattr(CaptureDialog, "exec", accept)
    grown: list[int] = []
    window.session.grew.connect(lambda _t: grown.append(len(window.session.current.steps)))
    ticks: list[int] = []
    heartbeat = QTimer()
    heartbeat.timeout.connect(lambda: ticks.append(1))
    heartbeat.start(10)
    button = window.source_buttons.button_for(window.capture_action)
    assert button.isVisible() and button.text() == "Capture"
    with qtbot.waitSignal(window.captures.ended, timeout=10000) as ended:
        button.click()
        assert window.session.current.finish_cause == RUNNING  # the panes switched to the live stream
        assert window.stop_button.isVisible()
    heartbeat.stop()
    final = ended.args[0]
    window.session.flush()

    assert grown and min(grown) < len(final.steps), "the panes grew while the stream arrived"
    assert len(ticks) >= 3, "the event loop kept turning during the capture"
    assert window.session.current is final and final.source.kind == "capture"
    assert window.shown_errors == []
    # every pane shows the capture
    assert window.chunks_view.model.rowCount() == len(final.chunks) > 3
    assert window.timeline.drawn()[("wire", "arguments")] == sum(c.kind == "arguments" for c in final.chunks)
    assert "get_weather" in window.parse_view.toPlainText()
    assert window.reconcile_view.calls.rowCount() == 1
    # the violation, in the reconciliation pane and the source bar
    # (a repeated name: what the stream meant is clear, but the official SDK and a naive client build it twice)
    assert [v.rule for v in window.reconcile_view.violations.rows] == ["name-repeated", "client-mismatch",
                                                                       "client-mismatch"]
    assert window.source_bar.violations.text() == "3 violations"
    assert not window.source_bar.policy.isEnabled() and window.source_bar.policy.currentText() == "server"
    assert not window.stop_button.isVisible() and "capture ended" in window.phase_label.text()
    # the capture is saved as its own recording, which replays to the same findings
    saved = window.settings.fileName().replace("settings.ini", "capture.jsonl")
    assert window.save_trace_to(saved)
    [again] = load_analyses(saved)
    assert [v.to_json() for v in again.violations] == [v.to_json() for v in final.violations]


def test_a_refused_connection_shows_a_dialog_and_keeps_the_window_usable(window, qtbot):
    before = window.session.current
    with qtbot.waitSignal(window.captures.failed, timeout=10000):
        assert window.start_capture(values(f"http://127.0.0.1:{free_port()}"))
    title, message = window.shown_errors[-1]
    assert title == "Capture failed" and "refused" in message
    assert window.session.current is before  # nothing arrived: the previous view is back
    assert not window.captures.running and not window.stop_button.isVisible()
    assert window.open_path(str(REGRESS)) and window.session.current.name != before.name
    window.session.state.home()
    assert window.session.state.cursor == 0
    bad = values("http://127.0.0.1:1")
    bad.body_text = "{nope"
    assert not window.start_capture(bad)
    assert window.shown_errors[-1][0] == "Bad capture request" and "not valid JSON" in window.shown_errors[-1][1]


def test_closing_the_window_during_a_capture_stops_it_cleanly(window, server, qtbot):
    # two chunks, then the server goes quiet for 5 s: the window is closed during the silence
    stalled = Scenario([(0.0, line) for line in clean_call()[:2]] + [(5.0, FINISH_TOOLS), (0.0, DONE)])
    url = server.play("window-close", stalled)
    assert window.start_capture(values(url))
    qtbot.waitUntil(lambda: len(window.session.current.steps) == 2, timeout=5000)
    assert not window.open_path(str(REGRESS))  # one live source at a time
    assert window.shown_errors[-1][0] == "A capture is in progress"
    captures = window.captures
    window.close()
    assert not captures.running
    final = captures.analysis
    assert final.finish_cause == "cancelled" and final.truncated and len(final.steps) == 2
    [replayed] = load_analyses(captures.record_path)
    assert len(replayed.steps) == 2


def test_without_the_qasync_loop_capture_says_so(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)  # no qloop fixture: a plain Qt event loop
    before = window.session.current
    assert not window.start_capture(values("http://127.0.0.1:9"))
    assert window.shown_errors[-1][0] == "Capture unavailable" and window.session.current is before
