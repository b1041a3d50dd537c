"""A live run of the packaged model on the worker thread: the GUI stays responsive, Stop and close end it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer

from tests.support.gui_helpers import ROOT, make_window

pytestmark = [pytest.mark.gui, pytest.mark.model]


def _values(max_tokens: int, seed: int = 7):
    from callscope.dialogs.run import RunValues

    tools = (ROOT / "resources" / "tools" / "default.json").read_text()
    return RunValues(None, "auto", "incremental", "What is the weather in Paris?", tools, "any", max_tokens, seed)


@pytest.fixture
def live_window(qtbot, tmp_path, monkeypatch):
    from callscope.gui_main import live_runs_available

    if not live_runs_available():
        pytest.skip("the packaged model or llama-cpp-python is not installed")
    return make_window(qtbot, tmp_path, monkeypatch)


def test_live_run_keeps_the_event_loop_responsive_and_stop_ends_it(live_window, qtbot, tmp_path):
    window = live_window
    ticks: list[int] = []
    heartbeat = QTimer()
    heartbeat.timeout.connect(lambda: ticks.append(window.runs.tokens_received))
    heartbeat.start(10)

    # 1. a short run to its end: the view grows live, then shows the finished analysis
    grown: list[str] = []
    window.session.grew.connect(grown.append)
    with qtbot.waitSignal(window.runs.ended, timeout=180000) as ended:
        assert window.start_run(_values(48))
    analysis = ended.args[0]
    assert analysis.source.kind == "model" and analysis.step_count > 0
    assert analysis.finish_cause in ("stop", "length")
    assert window.session.current is analysis and not window.session.state.live
    assert grown, "panes saw the run grow before it ended"
    during = [t for t in ticks if 0 < t < analysis.step_count]
    assert len(during) >= 3, f"the GUI timer fired {len(during)} times while tokens arrived"
    assert "tok/s" in window.rate_label.text()
    assert window.text_view.toPlainText() == window.session.state.spans.text
    assert window.shown_errors == []
    assert window.save_trace_to(str(tmp_path / "run.jsonl"))
    from callscope.engine.recordings.replay import load_analyses

    again = load_analyses(tmp_path / "run.jsonl")[0]
    assert [c.text for c in again.chunks] == [c.text for c in analysis.chunks]

    # 2. a long run stopped after a few tokens: ends within a token, cancelled, tokens kept
    with qtbot.waitSignal(window.runs.ended, timeout=180000) as ended:
        assert window.start_run(_values(2000, seed=3))
        qtbot.waitUntil(lambda: window.runs.tokens_received >= 5, timeout=120000)
        # the Client view was hidden while the run grew (it indexes nothing then); shown, it catches up at once
        pane = window.client_view
        assert not pane.isVisible()
        window.tabs.setCurrentWidget(pane)
        assert pane.isVisible() and pane.scene is not None and pane.scene.live
        assert len(pane.view.streaming.steps) == len(window.session.current.chunks) > 1
        window.stop_run()
    stopped = ended.args[0]
    assert stopped.finish_cause == "cancelled" and 5 <= stopped.step_count < 2000
    heartbeat.stop()


def test_closing_the_window_during_a_run_stops_the_worker(live_window, qtbot):
    window = live_window
    assert window.start_run(_values(2000, seed=11))
    qtbot.waitUntil(lambda: window.runs.tokens_received >= 3, timeout=180000)
    thread = window.runs.thread
    window.close()
    assert thread.isFinished()
