"""QApplication set-up and the `callscope gui` entry: open a file, the embedded default, or render a screenshot.

The window is shown first and the source loaded on the next event-loop turn,
so it appears at once whatever the file size. ``--screenshot`` and the
``--export-*`` options render offscreen (:mod:`callscope.headless`: at
1400x900 or ``--size``) and exit; errors then go to stderr instead of a dialog.

The interactive window runs Qt's event loop with asyncio on top of it
(:func:`run_event_loop`, qasync), so the Capture source's async HTTP client
runs on the GUI thread between Qt events. A screenshot never starts an event
loop, so it needs neither.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication

from callscope.engine.core.shipped import fixtures_dir, resource
from callscope.headless import SCREENSHOT_SIZE, HeadlessJob, run_job
from callscope.ui import theme

DEFAULT_FIXTURE = fixtures_dir() / "headline_701_tokens.jsonl"
APP_ICON = resource("icons", "callscope.svg")
#: Set by `callscope bench gui`: print "shown <ms>" once the window is on screen, then quit.
SHOWN_ENV = "CALLSCOPE_QUIT_WHEN_SHOWN"
#: Set by `callscope bench gui`: open the file as usual, print "loaded <ms>" (since launch) once it is on
#: screen (every pane drawn), then quit; "failed" when it could not be opened.
LOADED_ENV = "CALLSCOPE_QUIT_WHEN_LOADED"
_QUIETED = False


def _quiet_offscreen_warnings() -> None:
    """The offscreen platform warns about window hints it cannot honour; that is noise, not news."""
    from PySide6.QtCore import qInstallMessageHandler

    global _QUIETED
    if _QUIETED:
        return
    _QUIETED = True
    previous = None

    def handler(mode, context, message):
        if "propagateSizeHints" in message:
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            sys.stderr.write(message + "\n")

    previous = qInstallMessageHandler(handler)


def make_app(argv: list[str] | None = None) -> QApplication:
    """The QApplication (reused if one exists), styled, with pyqtgraph configured."""
    import pyqtgraph as pg

    _quiet_offscreen_warnings()
    app = QApplication.instance()
    if app is None:
        app = QApplication(argv if argv is not None else [sys.argv[0]])
    app.setApplicationName("callscope")
    app.setOrganizationName("callscope")
    app.setDesktopFileName("callscope")  # matches resources/callscope.desktop (`make desktop`)
    if app.property("callscope_icon") is None:
        from PySide6.QtGui import QIcon

        app.setWindowIcon(QIcon(str(APP_ICON)))
        app.setProperty("callscope_icon", True)
    if app.property("callscope_styled") is None:  # re-applying a style sheet re-polishes every widget
        app.setStyle("Fusion")
        app.setStyleSheet(theme.style_sheet())
        app.setProperty("callscope_styled", True)
    pg.setConfigOptions(antialias=True, foreground="#9aa4b2", background=theme.PANEL)
    return app  # type: ignore[return-value]


def freeze_startup_heap() -> None:
    """Move everything alive after start-up (modules, Qt wrappers, the window) out of the GC's sight.

    Those objects live as long as the app; without this every full collection
    re-scans them, a 30-40 ms pause in the middle of a live run. Objects made
    later (analyses) are collected as usual.
    """
    import gc

    gc.collect()
    gc.freeze()


def live_runs_available() -> bool:
    """True when the decode engine, llama-cpp-python and the packaged model are all present."""
    if importlib.util.find_spec("llama_cpp") is None:
        return False
    try:
        from callscope.engine.core.gguf import default_model_path

        default_model_path()
    except Exception:  # noqa: BLE001 - any failure means "fall back to a fixture"
        return False
    return True


def default_fixture() -> str | None:
    if DEFAULT_FIXTURE.is_file():
        return str(DEFAULT_FIXTURE)
    from callscope.engine.inspector.sources import default_fixture as first_fixture

    return first_fixture()


def start_default_run(window, demo_name: str | None = None) -> bool:
    """The embedded default: a live run of the packaged model, the default demo (`callscope run`'s)."""
    from callscope.dialogs.run import demo_values

    window.fallback_recording = default_fixture()
    return window.start_run(demo_values(demo_name))


def launch(
    file: str | None = None,
    screenshot: str | None = None,
    at: int | None = None,
    policy: str | None = None,
    format_id: str | None = None,
    run_default: bool = True,
    tab: str | None = None,
    job: HeadlessJob | None = None,
    template: str | None = None,
) -> int:
    """The window on ``file`` (or the default); with a ``job`` (or ``screenshot``), render headless and exit.

    ``template``: a chat template (or GGUF) to analyse in the Template pane as well.
    """
    started = time.perf_counter()
    app = make_app()
    from callscope.main_window import MainWindow

    if job is None and screenshot:
        job = HeadlessJob(screenshot=screenshot, at=at, tab=tab)
    headless = job is not None
    scratch = tempfile.TemporaryDirectory(prefix="callscope-shot-") if headless else None
    # A screenshot is a batch job: it must not push its file into the user's recent list.
    settings = QSettings(str(Path(scratch.name) / "settings.ini"), QSettings.Format.IniFormat) if scratch else None
    window = MainWindow(settings)
    freeze_startup_heap()
    failures: list[str] = []
    if headless:
        window.errors.show_error = lambda title, message: failures.append(f"{title}: {message}")  # type: ignore[method-assign]
    window.resize(*(job.size if job is not None else SCREENSHOT_SIZE))
    window.show()
    if os.environ.get(SHOWN_ENV):
        QTimer.singleShot(0, lambda: (print(f"shown {1000 * (time.perf_counter() - started):.0f}", flush=True), app.quit()))
        return run_event_loop(app)

    def load() -> bool:
        if template is not None:
            window.templates.open_path(template)  # analysed off the GUI thread, beside whatever opens next
        if file is not None:
            return window.open_path(file, format_id, policy)
        if not headless and run_default and live_runs_available():
            return start_default_run(window)
        fixture = default_fixture()
        return window.open_path(fixture, None, policy) if fixture else True

    if job is not None:
        ok = load()
        if ok and template is not None and not window.template_view.wait(120000):
            ok = False  # a template that cannot be analysed: the dialog's line is in failures
        if ok and window.corpus.view is not None and not _corpus_checked(app, window.corpus.view):
            ok = False
            failures.append(f"{file}: the folder's check did not end within {CORPUS_WAIT_S:.0f} s")
        if not ok:
            print(f"callscope gui: {failures[-1] if failures else 'cannot open'}", file=sys.stderr)
            window.close()
            return 2
        return run_job(app, window, job)
    if os.environ.get(LOADED_ENV):
        QTimer.singleShot(0, lambda: _report_loaded(app, window, load, started))
        return run_event_loop(app)
    QTimer.singleShot(0, load)
    return run_event_loop(app)


#: How long a headless job (``gui FOLDER --screenshot``) waits for the folder's check to end.
CORPUS_WAIT_S = 600.0


def _corpus_checked(app: QApplication, view, timeout_s: float = CORPUS_WAIT_S) -> bool:
    """Let a folder's check end before a headless job draws it: the pool's batches arrive as queued signals,
    so the GUI thread keeps handling events while it waits (a picture of a half-filled table would lie)."""
    deadline = time.monotonic() + timeout_s
    while not view.done:
        if time.monotonic() > deadline:
            return False
        app.processEvents()
        time.sleep(0.005)
    app.processEvents()
    return True


def _report_loaded(app: QApplication, window, load, started: float) -> None:
    """:data:`LOADED_ENV`: load as the window does, let every pane draw, say how long since launch, quit."""
    ok = load()
    window.session.flush()
    app.processEvents()
    window.repaint()
    print(f"loaded {1000 * (time.perf_counter() - started):.0f}" if ok else "failed", flush=True)
    app.quit()


def run_event_loop(app: QApplication) -> int:
    """``app.exec()`` with a qasync loop as asyncio's running loop, so coroutines run on the GUI thread."""
    import asyncio

    import qasync

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    try:
        return int(loop.run_forever())
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def render_screenshot(app: QApplication, window, path: str) -> int:
    """Let layouts and plots settle, grab the window, save it, close (``--screenshot`` alone)."""
    return run_job(app, window, HeadlessJob(screenshot=path))
