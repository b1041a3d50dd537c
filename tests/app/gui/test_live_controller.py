"""The one live lifecycle every live source shares (LiveController) and its status-bar driver (LiveStatus).

A scripted source stands in for a decode thread or a server: the test hands it
items, and the shared controller does the rest, exactly as for a run or a
capture. Real parts: a real Qt session (offscreen), the real Analyzer, real
frame throttling.
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QWidget

from callscope.engine.analysis.analyzer import Analyzer, SourceInfo, TokenItem
from callscope.engine.formats import make_parser
from callscope.engine.formats.samples import render
from callscope.engine.inspector.sources import FileSource
from callscope.live.base import LiveController
from callscope.live.status import LiveStatus, LiveStatusWidgets
from callscope.models.session import InspectorSession
from tests.support.gui_helpers import PARALLEL

pytestmark = pytest.mark.gui


class ScriptedSource(LiveController[TokenItem]):
    """A live source whose items come from the test: nothing but the hooks a real source implements."""

    kind = "scripted"
    noun = "scripted source"

    def start(self) -> None:
        self._begin()
        self._show_live(Analyzer("scripted", SourceInfo("model", None, "hermes", "incremental"), "token", True,
                                 make_parser("hermes")))

    def push(self, items: list[TokenItem]) -> None:
        self._received(items)

    def end(self) -> None:
        self.drain()
        assert self.analyzer is not None
        self._conclude(self.analyzer.finish("stop"), "scripted · done")

    def break_off(self, message: str) -> None:
        self._fail(message)

    def stop(self) -> None:
        pass

    def shutdown(self) -> bool:
        return True

    def _progress_text(self) -> str:
        return f"{self.received} items"


def tokens(text: bytes, size: int = 4) -> list[TokenItem]:
    return [(text[i : i + size], float(i), i) for i in range(0, len(text), size)]


@pytest.fixture
def source(qapp):
    session = InspectorSession()
    session.open(FileSource(str(PARALLEL)))  # something on screen before the live stream
    return ScriptedSource(session)


def test_a_live_stream_shows_at_once_grows_by_frames_then_is_replaced_by_its_final(qtbot, source):
    events: list[str] = []
    source.started.connect(lambda: events.append("started"))
    source.ended.connect(lambda _a: events.append("ended"))
    source.start()
    session = source.session
    assert source.running and session.current is source.analysis and session.current.running
    burst = tokens(render("hermes", [("write_file", {"path": "a.txt", "content": "x = 1\n" * 10000})]).encode())
    source.push(burst)
    source._flush()  # one frame's worth: a burst this big is spread over several frames
    assert 0 < len(session.current.steps) < len(burst)
    qtbot.waitUntil(lambda: len(session.current.steps) == len(burst), timeout=20000)
    assert source.analysis.running and session.state.cursor == session.state.last  # the view follows
    source.end()
    final = session.current
    assert final is source.analysis and not final.running and final.step_count == len(burst)
    assert session.source.label == "scripted · done" and not source.running
    assert events == ["started", "ended"]


def test_a_stream_that_breaks_off_keeps_what_arrived_as_an_error_run(qtbot, source):
    order: list[str] = []
    source.ended.connect(lambda a: order.append(f"ended {a.finish_cause}"))
    source.failed.connect(lambda m: order.append(f"failed {m}"))
    source.start()
    source.push(tokens(render("hermes", [("get_weather", {"city": "Paris"})]).encode())[:6])
    source.break_off("connection lost")
    final = source.session.current
    assert final.finish_cause == "error" and final.step_count == 6 and not source.running
    assert source.session.source.label == "failed scripted · scripted"
    assert order == ["ended error", "failed connection lost"]


def test_a_stream_that_breaks_off_before_anything_arrived_puts_the_previous_view_back(qtbot, source):
    before = source.session.current
    source.start()
    assert source.session.current is not before
    with qtbot.waitSignal(source.failed):
        source.break_off("refused")
    assert source.session.current is before and not source.running


def test_the_status_shows_any_live_source_in_the_status_bar(qtbot, source):
    host = QWidget()
    qtbot.addWidget(host)
    widgets = LiveStatusWidgets(QLabel(host), QProgressBar(host), QLabel(host), QPushButton(host))
    reported: list[tuple[str, str]] = []
    settled: list[int] = []

    class Errors:
        def report(self, title: str, message: str) -> None:
            reported.append((title, message))

    status = LiveStatus(source, widgets, Errors(), lambda: settled.append(1))  # type: ignore[arg-type]
    host.show()
    source.start()
    assert widgets.stop.isVisible() and widgets.busy.isVisible() and widgets.phase.text() == "starting…"
    source.push(tokens(b"hello there")[:2])
    source.drain()
    assert widgets.rate.text() == "2 items" and not widgets.busy.isVisible()
    source.end()
    assert widgets.phase.text() == "scripted ended: stop" and not widgets.stop.isVisible() and settled == [1]
    source.start()
    source.break_off("the server hung up")
    assert widgets.phase.text() == "scripted failed" and reported == [("Scripted failed", "the server hung up")]
    assert status.kind == "scripted"
