"""Shared set-up for the GUI tests: a real window, offscreen, with errors captured instead of shown."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QSettings

from tests.support.paths import FIXTURES, HEADLINE, PARALLEL, REGRESS, ROOT  # noqa: F401 - re-exported for the GUI tests


def make_window(qtbot, tmp_path, monkeypatch, path: Path | None = None):
    """A shown MainWindow with its own settings file; ``window.shown_errors`` collects dialogs.

    Questions (quit during a run?) are answered yes and collected in ``window.asked``; a test sets
    ``window.answer`` to False to answer no."""
    from callscope.gui_main import make_app
    from callscope.main_window import MainWindow
    from callscope.ui.errors import ErrorReporter

    make_app()
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(ErrorReporter, "show_error", lambda self, title, message: shown.append((title, message)))
    asked: list[tuple[str, str]] = []

    def ask(reporter, title: str, question: str, _yes: str) -> bool:
        asked.append((title, question))
        return getattr(reporter.window, "answer", True)

    monkeypatch.setattr(ErrorReporter, "ask", ask)
    window = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window.shown_errors = shown
    window.asked = asked
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    if path is not None:
        assert window.open_path(str(path)), shown
        window.session.flush()
    return window


#: qasync loops the tests have closed; kept alive for the session (see :func:`retire_qasync_loop`).
_RETIRED_LOOPS: list = []


def retire_qasync_loop(loop) -> None:
    """End a test's ``qasync.QEventLoop(app, already_running=True)`` without quitting the app.

    qasync's ``stop()`` would call ``QApplication.exit()`` and break every later
    pytest-qt wait, so the loop is marked stopped, unregistered and closed here.
    qasync also leaves a Qt timer registered for every ``call_later`` until it
    fires, even a cancelled one (an httpx read timeout, say). If the loop's timer
    object were then garbage-collected on another thread (Python's GC runs
    wherever an allocation triggers it: the SSE server's thread, a resolver
    thread), Qt could not unregister those timers and the next one to fire
    would crash the process. So they are killed now, on the GUI thread, and the
    loop is kept alive for the session.
    """
    timer = loop._timer
    callbacks = timer._SimpleTimer__callbacks
    for timer_id in list(callbacks):
        timer.killTimer(timer_id)
    callbacks.clear()
    loop._QEventLoop__is_running = False
    asyncio.events._set_running_loop(None)
    asyncio.set_event_loop(None)
    loop.close()
    _RETIRED_LOOPS.append(loop)

