import os
import sys
import tempfile

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Every QSettings a test (or a `callscope gui` subprocess) opens lives in a throw-away directory:
# a test run must never touch the user's ~/.config/callscope (recent files pointing into /tmp).
_SETTINGS_HOME = tempfile.mkdtemp(prefix="callscope-test-config-")
os.environ["XDG_CONFIG_HOME"] = _SETTINGS_HOME


@pytest.fixture(autouse=True)
def _close_stray_windows():
    """A window or dialog one GUI test leaves open must not sit over the next test's window
    (it would swallow that test's mouse events). Non-GUI tests never import Qt for this."""
    yield
    if "PySide6.QtWidgets" not in sys.modules:
        return
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        return
    for widget in app.topLevelWidgets():
        if widget.isVisible():
            widget.close()
    app.processEvents()


# -------------------------------------------- capture fixtures (Qt and the server imported only when used)


@pytest.fixture(scope="module")
def server():
    """A canned SSE server on 127.0.0.1 (tests/support/sse_server.py), one per test module."""
    from tests.support.sse_server import CannedServer

    srv = CannedServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def qloop(qapp):
    """The app's asyncio loop is Qt's own (qasync), as `callscope gui` runs it; pytest-qt drives Qt.

    qasync's stop() would also call QApplication.exit(), which breaks every later nested event loop
    (pytest-qt's waits); retire_qasync_loop stops, unregisters and closes it and kills its Qt timers.
    """
    import asyncio

    import qasync

    from tests.support.gui_helpers import retire_qasync_loop

    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    yield loop
    assert loop.is_running()
    retire_qasync_loop(loop)


@pytest.fixture
def forget_derived():
    """Formats derived from templates during a test are unregistered after it (other tests list every format)."""
    yield
    from callscope.engine.formats import FORMAT_IDS, unregister_format
    from callscope.engine.formats.derived import PREFIX

    for format_id in list(FORMAT_IDS):
        if format_id.startswith(PREFIX):
            unregister_format(format_id)


@pytest.fixture
def legacy_profiles(monkeypatch):
    """The client profiles the rule-by-rule capture tests were written for (openai-python and naive): they pin
    exactly which rules a stream raises. Every default profile is judged against the real libraries in
    tests/system/test_differential.py, and the quirks library states what each of them makes of the streams real servers send."""
    from callscope.engine.streams import conformance

    monkeypatch.setattr(conformance, "default_profiles", lambda: ("openai-python", "naive"))
