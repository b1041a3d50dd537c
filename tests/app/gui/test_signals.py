"""Thousands of per-token signals across threads (the PySide6 <6.12 pin) feed the live view without a crash."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from callscope.benchmarks.workload import big_arguments
from callscope.engine.analysis.analyzer import SourceInfo
from callscope.engine.formats.samples import render
from tests.support.gui_helpers import make_window

pytestmark = pytest.mark.gui
TOKENS = 5000


class TokenEmitter(QObject):
    """Stands in for the decode worker: emits one signal per token from its own thread."""

    token = Signal(object, float, int)
    done = Signal()

    def __init__(self, pieces: list[bytes]) -> None:
        super().__init__()
        self.pieces = pieces

    @Slot()
    def run(self) -> None:
        for i, piece in enumerate(self.pieces):
            self.token.emit(piece, float(i) * 2.0, i)
        self.done.emit()


def test_five_thousand_cross_thread_token_signals(qtbot, tmp_path, monkeypatch):
    from callscope.live.run_worker import RunPlan

    window = make_window(qtbot, tmp_path, monkeypatch)
    controller = window.runs
    text = render("hermes", [("write_file", big_arguments(TOKENS * 3))]).encode()
    size = len(text) // TOKENS
    pieces = [text[i * size : (i + 1) * size] for i in range(TOKENS - 1)] + [text[(TOKENS - 1) * size :]]
    controller._on_prepared(RunPlan(SourceInfo("model", None, "hermes", "incremental"), "hermes", None, "burst", 12, "test"))
    assert window.session.state.live

    ticks = []
    heartbeat = QTimer()
    heartbeat.timeout.connect(lambda: ticks.append(1))
    heartbeat.start(5)
    thread = QThread()
    emitter = TokenEmitter(pieces)
    emitter.moveToThread(thread)
    emitter.token.connect(controller.on_token)  # a method of a GUI-thread QObject: runs on the GUI thread
    thread.started.connect(emitter.run)
    with qtbot.waitSignal(emitter.done, timeout=60000):
        thread.start()
    qtbot.waitUntil(lambda: controller.tokens_received == len(pieces), timeout=60000)
    controller.drain()
    window.session.flush()
    heartbeat.stop()
    thread.quit()
    assert thread.wait(5000)

    state = window.session.state
    assert len(state.analysis.steps) == len(pieces) == TOKENS
    assert state.cursor == state.last  # the view follows the newest token
    shown = window.text_view.toPlainText()
    assert text.decode().endswith(shown) and window.text_view.shown_from + len(shown) == len(text.decode())
    assert len(shown) <= 16000  # a live pane keeps the tail of a long generation
    assert window.chunks_view.model.rowCount() == len(state.analysis.chunks) > 100
    assert window.timeline.drawn()[("tokens", "token")] == TOKENS
    assert ticks, "the event loop kept turning during the burst"
    assert window.session.redraws < len(pieces) / 10  # repainted per frame, not per token
