"""The Proxy turns dock leaves the timeline its room, and goes when the proxy stops (View brings it back)."""

from __future__ import annotations

import os

import pytest

from callscope.dialogs.proxy import ProxyValues
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


def test_the_proxy_dock_leaves_the_timeline_its_room_and_goes_when_the_proxy_stops(qtbot, server, tmp_path,
                                                                                   monkeypatch, qloop):
    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    upstream = server.play("gui-proxy-dock", Scenario(lines_of(*clean_call(), "data: [DONE]")))
    source = window.proxy
    assert source.start(ProxyValues(listen="127.0.0.1:0", upstream=upstream, record_dir=str(tmp_path)))
    qtbot.waitUntil(lambda: source.controller.server is not None and bool(source.controller.status), timeout=10000)
    _settle(qtbot, window)
    assert source.dock.isVisible()
    shots = os.environ.get("CALLSCOPE_SHOTS")
    if shots:
        window.grab().save(os.path.join(shots, "proxy_dock.png"))
    assert window.timeline.plot.height() >= TIMELINE_ROOM, window.timeline.plot.height()
    source.controller.stop()
    _settle(qtbot, window)
    assert not source.dock.isVisible()
    if shots:
        window.grab().save(os.path.join(shots, "proxy_dock_stopped.png"))
    assert source.dock.toggleViewAction().isEnabled()  # View > Proxy turns brings the stopped proxy's turns back
    source.dock.toggleViewAction().trigger()
    _settle(qtbot, window)
    assert source.dock.isVisible() and window.timeline.plot.height() >= TIMELINE_ROOM
