"""The window's corpus source: File > Open folder… checks every recording in a folder and lists them in a dock.

A :class:`CorpusRunner` walks the folder and runs the local process pool
(:func:`callscope.engine.corpus.executors.run_pool`, the one ``callscope check`` uses) in a
thread of its own, so the window never waits for it; each batch of verdicts comes back as a
signal, received by methods of GUI-thread objects (queued), and the table
(:mod:`callscope.panes.corpus_view`) fills as the pool reports. Double-clicking a row opens that
recording in the panes. Kept out of the main window, which only creates it.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSettings, Qt, QTimer, Signal
from PySide6.QtWidgets import QDockWidget, QFileDialog, QMainWindow, QMenu

if TYPE_CHECKING:
    from callscope.panes.corpus_view import CorpusView

#: Recordings per batch the window's pool sends back: small, so the table fills steadily.
WINDOW_BATCH = 8
#: The window's workers run this much nicer than the window, so its event loop never waits for them.
WORKER_NICE = 5
FOLDER_KEY = "corpus/last_folder"


class CorpusRunner(QObject):
    """Checks one folder off the GUI thread; stops between batches when asked."""

    planned = Signal(int)  # recordings found (the walk is done)
    batch = Signal(object)  # list[RecordingVerdict]
    finished = Signal(float, bool)  # seconds, whether it was stopped
    failed = Signal(str)

    def __init__(self, folder: str, jobs: int | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.folder = folder
        self.jobs = jobs
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="callscope-corpus", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Join the thread (tests, and closing the window); True when it ended."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    def _run(self) -> None:
        from callscope.engine.corpus.executors import CheckOptions, run_pool
        from callscope.engine.corpus.paths import Missing, expand
        from callscope.engine.corpus.verdict import RecordingVerdict

        started = time.perf_counter()
        try:
            found = list(expand([self.folder]))
            paths = [p for p in found if isinstance(p, str)]
            self.planned.emit(len(found))
            missing = [RecordingVerdict(m.path, None, error=m.reason) for m in found if isinstance(m, Missing)]
            if missing:
                self.batch.emit(missing)
            batches = run_pool(paths, CheckOptions(jobs=self.jobs, batch=WINDOW_BATCH, nice=WORKER_NICE))
            try:
                for done in batches:
                    if self._stop.is_set():
                        break
                    self.batch.emit(done.verdicts)
            finally:
                batches.close()  # stops the pool at once when stopped early
        except Exception as exc:  # noqa: BLE001 - reported in the window, never a dead thread's traceback
            self.failed.emit(f"{type(exc).__name__}: {exc}")
        self.finished.emit(time.perf_counter() - started, self._stop.is_set())


class CorpusSource(QObject):
    """File > Open folder…: one corpus dock per window; opening another folder replaces its rows."""

    def __init__(self, window: QMainWindow, menu: QMenu, settings: QSettings | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings
        self.view: CorpusView | None = None
        self.dock: QDockWidget | None = None
        self.runner: CorpusRunner | None = None
        self.action = window._action(menu, "Open fo&lder…", self.dialog, ["Ctrl+Shift+O"],
                                     "Check every recording in a folder (or a proxy session folder) and list them")

    def dialog(self) -> None:
        start = self.settings.value(FOLDER_KEY, str(Path.cwd())) if self.settings is not None else str(Path.cwd())
        folder = QFileDialog.getExistingDirectory(self.window, "Open a folder of recordings", str(start))
        if folder:
            self.open_folder(folder)

    def ensure(self) -> CorpusView:
        if self.view is None:
            from callscope.panes.corpus_view import CorpusView

            self.view = CorpusView()
            self.view.openRequested.connect(self._open_recording)
            self.view.stopRequested.connect(self.stop)
            self.dock = QDockWidget("Corpus", self.window)
            self.dock.setObjectName("CorpusDock")
            self.dock.setWidget(self.view)
            self.window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        return self.view

    def open_folder(self, folder: str, jobs: int | None = None) -> CorpusRunner:
        """Check ``folder`` and show its recordings as the pool reports them."""
        self.stop()
        first = self.view is None
        view = self.ensure()
        assert self.dock is not None
        self.dock.show()
        self.dock.raise_()
        if first:  # a table of recordings wants rows: half the window, once laid out (the handle moves it)
            QTimer.singleShot(0, self._give_room)
        if self.settings is not None:
            self.settings.setValue(FOLDER_KEY, folder)
        runner = CorpusRunner(folder, jobs, self)
        view.start(folder)
        runner.planned.connect(view.planned)  # bound methods of GUI-thread objects: queued from the runner's thread
        runner.batch.connect(view.add_batch)
        runner.finished.connect(view.finished)
        runner.failed.connect(self._failed)
        self.runner = runner
        runner.start()
        return runner

    def _give_room(self) -> None:
        if self.dock is not None:
            self.window.resizeDocks([self.dock], [self.window.height() // 2], Qt.Orientation.Vertical)

    def stop(self) -> None:
        if self.runner is not None and self.runner.running:
            self.runner.stop()

    def shutdown(self, timeout: float = 5.0) -> None:
        """Stop and wait (the window is closing)."""
        if self.runner is not None:
            self.runner.stop()
            self.runner.wait(timeout)

    def _open_recording(self, path: str) -> None:
        self.window.open_path(path)

    def _failed(self, message: str) -> None:
        self.window.errors.report("Cannot check the folder", message)
