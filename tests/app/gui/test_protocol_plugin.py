"""The window's Capture source speaks a protocol registered from the test suite (tests/support/plugin_protocol.py).

The dialog offers it, builds its request (endpoint, body shape, key variable),
and the controller captures and judges it live on the qasync loop against the
canned server on 127.0.0.1. Nothing in callscope is edited for it.
"""

from __future__ import annotations

import json

import pytest

from callscope.dialogs.capture import CaptureDialog, request_from_values
from callscope.engine.streams.protocols import register_protocol, unregister_protocol
from callscope.live.capture import CaptureController
from callscope.models.session import InspectorSession
from tests.support import plugin_protocol as tiny
from tests.support.sse_server import Scenario

pytestmark = pytest.mark.gui


@pytest.fixture
def tinyproto():
    spec = register_protocol(tiny.SPEC)
    try:
        yield spec
    finally:
        unregister_protocol(tiny.PROTOCOL_ID)


def test_the_capture_dialog_and_controller_speak_a_registered_protocol(tinyproto, qtbot, qloop, server):
    dialog = CaptureDialog()
    qtbot.addWidget(dialog)
    offered = [dialog.protocol.itemText(i) for i in range(dialog.protocol.count())]
    assert offered[-1] == tiny.PROTOCOL_ID
    dialog.url.setText(server.play("gui-tiny", Scenario([(0.0, line) for line in tiny.call_stream()])))
    dialog.protocol.setCurrentText(tiny.PROTOCOL_ID)
    dialog.body.setPlainText(json.dumps({"messages": [{"role": "user", "content": "weather?"}]}))
    request = request_from_values(dialog.values())
    assert request.url.endswith(tiny.PATH) and request.api_key_env == tiny.KEY_ENV
    assert request.body["prompt"] == "weather?" and request.body["stream"] is True
    controller = CaptureController(InspectorSession(), loop=qloop)
    try:
        with qtbot.waitSignal(controller.ended, timeout=10000) as ended:
            assert controller.start(request)
        final = ended.args[0]
    finally:
        controller.shutdown()
    assert final.source.extra["protocol"] == tiny.PROTOCOL_ID and final.violations == []
    assert [(c.name, c.reconstructs) for c in final.calls] == [("get_weather", True)]
