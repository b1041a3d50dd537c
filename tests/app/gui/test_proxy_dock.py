"""The Proxy turns and Served turns docks leave the timeline its room, and go when their server stops
(File > Proxy turns / Served turns brings them back)."""

from __future__ import annotations

import os

import pytest

from callscope.dialogs.proxy import ProxyValues
from callscope.dialogs.serve import ServeValues
from tests.support.gui_helpers import PARALLEL, make_window
from tests.support.sse_server import Scenario, clean_call, lines_of

pytestmark = pytest.mark.gui

#: The timeline's plot keeps at least this height beside the dock (it was squeezed to about 40 px).
TIMELINE_ROOM = 130


def _settle(qtbot, window):
    from PySide6.QtWidgets import QApplication

    for _ in range(3):
        QApplication.processEvents()
        qtbot.wait(20)


def _start_proxy(window, server, tmp_path):
    upstream = server.play("gui-proxy-dock", Scenario(lines_of(*clean_call(), "data: [DONE]")))
    assert window.proxy.start(ProxyValues(listen="127.0.0.1:0", upstream=upstream, record_dir=str(tmp_path)))
    return window.proxy, "Proxy &turns"


def _start_serve(window, server, tmp_path):
    assert window.serve.start(ServeValues(source="headline_701_tokens", listen="127.0.0.1:0", speed="max"))
    return window.serve, "Served t&urns"


@pytest.mark.parametrize("start", [_start_proxy, _start_serve], ids=["proxy", "serve"])
def test_the_turns_dock_leaves_the_timeline_its_room_and_goes_when_its_server_stops(qtbot, server, tmp_path,
                                                                                    monkeypatch, qloop, start):
    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    source, toggle_text = start(window, server, tmp_path)
    qtbot.waitUntil(lambda: source.controller.server is not None and bool(source.controller.status), timeout=10000)
    _settle(qtbot, window)
    assert source.dock.isVisible()
    shots = os.environ.get("CALLSCOPE_SHOTS")
    if shots:
        window.grab().save(os.path.join(shots, f"{start.__name__}_dock.png"))
    assert window.timeline.plot.height() >= TIMELINE_ROOM, window.timeline.plot.height()
    source.controller.stop()
    qtbot.waitUntil(lambda: not source.dock.isVisible(), timeout=10000)
    if shots:
        window.grab().save(os.path.join(shots, f"{start.__name__}_dock_stopped.png"))
    toggle = source.dock.toggleViewAction()  # File > ... turns brings the stopped server's turns back
    assert toggle.isEnabled() and toggle.text() == toggle_text and toggle in window.menuBar().actions()[0].menu().actions()
    toggle.trigger()
    _settle(qtbot, window)
    assert source.dock.isVisible() and window.timeline.plot.height() >= TIMELINE_ROOM
