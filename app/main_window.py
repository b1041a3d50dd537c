"""The inspector window: wires the panes to one session. No analysis is computed here.

Layout: source bar; timeline with playback controls; below, generated text,
partial parse, and a tab stack (emitted deltas, reconciliation, TTFD, compare).
Every user-caused failure goes through :class:`ErrorReporter` and leaves the
previous view in place.

Three sources feed the same panes: Open (a recording), Run (a live model on a
worker thread, :mod:`callscope.live.run`) and Capture (a live server's stream,
read by an async client on the Qt event loop through qasync,
:mod:`callscope.live.capture`). Both live sources share one lifecycle
(:class:`~callscope.live.base.LiveController`) and one status-bar driver
(:class:`~callscope.live.status.LiveStatus`); this window only lays them
out and offers the actions. Both live controllers are created on first use, so
their imports (llama-cpp-python, httpx) never slow the window's start.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from callscope.dialogs.common import choose_folder
from callscope.dialogs.paste import AUTO as PASTE_AUTO
from callscope.dialogs.paste import PasteDialog
from callscope.dialogs.run import RunDialog, RunValues
from callscope.dialogs.shortcuts import ShortcutsDialog, describe_shortcuts
from callscope.engine.analysis.units import step_noun, steps_text
from callscope.engine.inspector.sources import FileSource, Source, SourceError, TextSource, parse_tools_text
from callscope.live.status import LiveStatus, LiveStatusWidgets
from callscope.models.session import InspectorSession
from callscope.navigation import DebuggerActions
from callscope.panes.chunks_view import ChunksView
from callscope.panes.client_view import ClientViewPane
from callscope.panes.compare_view import CompareView
from callscope.panes.pane import Pane
from callscope.panes.parse_view import ParseView
from callscope.panes.playback_bar import PlaybackBar, PlaybackDriver
from callscope.panes.reconcile_view import ReconcileView
from callscope.panes.source_bar import SourceBar, SourceButtons
from callscope.panes.specs import all_panes, pane_exports
from callscope.panes.template_view import TemplateView
from callscope.panes.text_view import GeneratedTextView
from callscope.panes.timeline import TimelineView
from callscope.panes.ttfd_view import TtfdView
from callscope.presenter_mode import PresenterMode, replay_from_start
from callscope.ui.errors import ErrorReporter
from callscope.ui.exports import ExportError, export_plot, save_png, save_trace, write_report, write_sse
from callscope.ui.theme_menu import ThemeMenu

if TYPE_CHECKING:
    from callscope.live.base import LiveController
    from callscope.live.capture import CaptureController
    from callscope.live.run import RunController

MAX_RECENT = 10
ANIMATION_FILTERS = "GIF (*.gif);;Animated PNG (*.png *.apng);;MP4 video, needs ffmpeg (*.mp4)"
#: Width of the generated-text pane while the source has no text (a byte-prefix fixture carries parses).
NARROW_TEXT_PANE = 320  # still wide enough to read the placeholder that says why it is empty
RECENT_KEY = "recent_files"
#: The most the tab stack insists on: with the text pane's and the parse pane's minimums, a 1024-pixel window.
TABS_PANE_MAX_MINIMUM = 570
#: Rows the shortcut list adds to the actions' keys: what the mouse and Tab do.
MOUSE_GESTURES = [
    ("Click / drag on the timeline", "Move the cursor there (scrub)"),
    ("Shift+drag, middle drag", "Pan the timeline (never past the stream)"),
    ("Wheel on the timeline", "Zoom"),
    ("Right-click the timeline", "Fit, zoom to the cursor, bookmark, run to the next violation"),
    ("Click a delta or violation row", "Move the cursor to its step"),
    ("Tab / Shift+Tab", "Move the keyboard focus between controls"),
]


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None) -> None:
        super().__init__()
        self.setWindowTitle("callscope")
        self.resize(1400, 900)
        self.setAcceptDrops(True)
        self.settings = settings or QSettings("callscope", "callscope")
        self.session = InspectorSession(self)
        self.errors = ErrorReporter(self)
        self.driver = PlaybackDriver(self.session, self)
        self._runs: RunController | None = None  # created on the first live run (it owns a thread)
        self._captures: CaptureController | None = None  # created on the first capture
        self._capture_values = None  # what the Capture dialog held last time
        self._statuses: list[LiveStatus] = []  # one per live controller, for the status bar
        self._build_panes()
        self._build_actions()
        self._build_status()
        self.session.analysisChanged.connect(self._analysis_changed)
        self.session.cursorChanged.connect(self._cursor_changed)
        self.session.grew.connect(self._grew)
        self.focus_timeline()

    # ================================================================ layout

    def _build_panes(self) -> None:
        s = self.session
        self.source_bar = SourceBar(s)
        self.timeline = TimelineView(s)
        self.playback = PlaybackBar(s, self.driver)
        timeline_box = QWidget()
        tl = QVBoxLayout(timeline_box)
        tl.setContentsMargins(0, 0, 0, 0)
        tl.setSpacing(2)
        tl.addWidget(self.timeline, 1)
        tl.addWidget(self.playback)
        self.timeline_pane = Pane("Timeline", timeline_box)
        self.text_view = GeneratedTextView(s)
        self.text_pane = Pane("Generated text", self.text_view)
        self.text_pane.add_footer(self.text_view.held_label)  # what the parser holds back at the cursor, and why
        self.text_pane.add_footer(self.text_view.window_label)  # a long text: which part is shown
        self.text_pane.setMinimumWidth(NARROW_TEXT_PANE - 60)  # the splitter never squeezes it to a sliver
        self.parse_view = ParseView(s)
        self.parse_pane = Pane("Partial parse", self.parse_view)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        # A narrow pane elides tab titles instead of scrolling them behind two cramped arrow buttons.
        self.tabs.tabBar().setUsesScrollButtons(False)
        self.tabs.tabBar().setObjectName("PaneTabs")  # the style sheet pads these titles a little tighter
        self.tabs.tabBar().setElideMode(Qt.TextElideMode.ElideRight)
        self.tabs.tabBar().setExpanding(False)
        #: The tabbed panes by id, made and ordered by their declarations (callscope.panes.specs).
        self.panes: dict[str, QWidget] = {}
        for spec in all_panes():
            self.panes[spec.id] = spec.make(s)
            self.tabs.addTab(self.panes[spec.id], spec.title)
        # the built-in panes by name, for the code that drives one of them
        self.chunks_view: ChunksView = self.panes["deltas"]  # type: ignore[assignment]
        self.reconcile_view: ReconcileView = self.panes["reconciliation"]  # type: ignore[assignment]
        self.ttfd_view: TtfdView = self.panes["ttfd"]  # type: ignore[assignment]
        self.compare_view: CompareView = self.panes["compare"]  # type: ignore[assignment]
        self.client_view: ClientViewPane = self.panes["client"]  # type: ignore[assignment]  # streaming vs atomic
        self.template_view: TemplateView = self.panes["template"]  # type: ignore[assignment]
        self.tabs_pane = Pane("", self.tabs)
        self.tabs_pane.title.hide()
        self.tabs_pane.subtitle.hide()
        self.tabs.tabBar().ensurePolished()  # the style sheet's bold tab font decides the width
        # every tab title whole, as long as the window still fits a 1024-pixel screen (then the titles elide a little)
        self.tabs_pane.setMinimumWidth(min(self.tabs.tabBar().sizeHint().width() + 24, TABS_PANE_MAX_MINIMUM))

        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.text_pane)
        bottom.addWidget(self.parse_pane)
        bottom.addWidget(self.tabs_pane)
        bottom.setSizes([470, 380, 530])
        bottom.setChildrenCollapsible(False)
        main = QSplitter(Qt.Orientation.Vertical)
        main.addWidget(self.timeline_pane)
        main.addWidget(bottom)
        main.setSizes([330, 500])
        main.setChildrenCollapsible(False)
        self.bottom_split, self.main_split = bottom, main
        self._text_sizes: list[int] | None = None  # the splitter sizes to restore once a source has text again

        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(8, 8, 8, 4)
        layout.setSpacing(6)
        layout.addWidget(self.source_bar)
        layout.addWidget(main, 1)
        self.setCentralWidget(central)

        self.source_bar.policyChosen.connect(self.set_policy)
        self.source_bar.runChosen.connect(self.session.select_run)
        self.ttfd_view.foldersRequested.connect(self.plot_folder)
        self.text_view.placeholder = "No generated text: this source carries parses (a byte-prefix fixture), not text."

    def _build_status(self) -> None:
        bar = self.statusBar()
        self.phase_label = QLabel("")
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setMaximumWidth(140)
        self.progress.hide()
        self.rate_label = QLabel("")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("Danger")
        self.stop_button.hide()
        self.stop_button.clicked.connect(self.stop_run)
        self.cursor_label = QLabel("")
        bar.addPermanentWidget(self.phase_label)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.rate_label)
        bar.addPermanentWidget(self.stop_button)
        bar.addPermanentWidget(self.cursor_label)
        self.live_status = LiveStatusWidgets(self.phase_label, self.progress, self.rate_label, self.stop_button)

    def _action(self, menu, text: str, slot, keys=(), tip: str = "") -> QAction:
        action = QAction(text, self)
        if keys:
            action.setShortcuts([QKeySequence(k) for k in keys])
        if tip:
            action.setStatusTip(tip)
        action.triggered.connect(slot)
        self.addAction(action)
        if menu is not None:
            menu.addAction(action)
        return action

    def _build_actions(self) -> None:
        mb = self.menuBar()
        file = mb.addMenu("&File")
        file.setToolTipsVisible(True)  # a disabled entry says why
        self.open_action = self._action(file, "&Open…", self.open_dialog, ["Ctrl+O"], "Open a recording: a trace, a byte-prefix fixture, an SSE dump, a HAR file or mitmproxy flows")
        self.recent_menu = file.addMenu("Open rece&nt")
        from callscope.corpus_source import CorpusSource

        self.corpus = CorpusSource(self, file, self.settings)  # File > Open folder…: a folder's recordings, checked
        from callscope.fixtures_menu import FixturesMenu

        self.fixtures_menu = FixturesMenu(self, file)  # File > Fixtures: the shipped library, by folder
        self.quirks_menu = file.addMenu("Quir&ks library")  # streams real servers send, one entry each
        self.quirks_menu.setToolTipsVisible(True)
        self.quirks_menu.aboutToShow.connect(self._fill_quirks_menu)  # read when first opened, not at start-up
        self.paste_action = self._action(file, "&Paste text…", self.paste_dialog, ["Ctrl+Shift+V"],
                                         "Replay a raw generation")
        self.run_action = self._action(file, "&Run a model…", self.run_dialog, ["Ctrl+R"], "Decode live with a local GGUF model")
        self.capture_action = self._action(file, "&Capture a server…", self.capture_dialog, ["Ctrl+Shift+C"],
                                           "Inspect the stream of a live OpenAI-compatible server")
        from callscope.proxy_source import ProxySource

        self.proxy = ProxySource(self, file, _qasync_loop)  # File > Proxy…: a recording proxy's turns, live
        from callscope.serve_source import ServeSource

        self.serve = ServeSource(self, file, _qasync_loop)  # File > Serve…: callscope serve's answers, live
        from callscope.template_tab import TemplateTab

        self.templates = TemplateTab(self, self.template_view, file)  # File > Open template…
        self.stop_action = self._action(file, "Stop run or c&apture", self.stop_run, ["Ctrl+."])
        self.save_trace_action = self._action(file, "&Save run as trace…", self.save_trace_dialog, ["Ctrl+S"])
        self.save_trace_action.setEnabled(False)
        file.addSeparator()
        export = file.addMenu("&Export")
        self._action(export, "Report &JSON…", lambda: self._export("report"), ["Ctrl+E"])
        self._action(export, "&SSE transcript…", lambda: self._export("sse"))
        self._action(export, "&Timeline PNG…", lambda: self._export("timeline"))
        self._action(export, "Timeline SVG…", lambda: self._export("timeline-svg"))
        for _spec, pane_export in pane_exports().values():
            self._action(export, pane_export.label, lambda _c=False, what=pane_export.what: self._export(what))
        self._action(export, "Replay &animation (client view)…", lambda: self._export("animation"))
        self._action(export, "&Window PNG…", lambda: self._export("window"))
        file.addSeparator()
        self._action(file, "&Quit", self.close, ["Ctrl+Q"])
        play = mb.addMenu("&Playback")
        self.nav_actions = [
            self._action(play, "Play / pause", self.driver.toggle, ["Space"]),
            self._action(play, "Next token", lambda: self._nav("token", 1), [".", "Right"]),
            self._action(play, "Previous token", lambda: self._nav("token", -1), [",", "Left"]),
            self._action(play, "Next emitted delta", lambda: self._nav("delta", 1), ["Shift+Right", ">"]),
            self._action(play, "Previous emitted delta", lambda: self._nav("delta", -1), ["Shift+Left", "<"]),
            self._action(play, "Start", lambda: self._nav("home", 0), ["Home"]),
            self._action(play, "End", lambda: self._nav("end", 0), ["End"]),
            self._action(play, "Faster", lambda: self.playback.step_speed(1), ["]"]),
            self._action(play, "Slower", lambda: self.playback.step_speed(-1), ["["]),
            self._action(play, "Toggle loop", lambda: self.playback.loop.toggle(), ["L"]),
            self._action(play, "Replay from the start at 1×", lambda: replay_from_start(self), ["R"]),
        ]
        view = mb.addMenu("&View")
        for i, spec in enumerate(all_panes()):  # Alt+1 to Alt+9, in tab order
            keys = [f"Alt+{i + 1}"] if i < 9 else []
            self._action(view, spec.title, lambda _c=False, pane_id=spec.id: self.show_tab(pane_id), keys)
        self._action(view, "TTFD vs call length, folder…", self.plot_folder)
        view.addSeparator()
        self.presenter = PresenterMode(self)
        self.presenter_action = self._action(view, "&Presenter mode", self.presenter.toggle, ["F5"],
                                             "Full screen: the client view and the TTFD plot, large")
        self.presenter_action.setCheckable(True)
        self.leave_presenter_action = self._action(None, "Leave presenter mode", self.presenter.leave, ["Esc"])
        self.leave_presenter_action.setEnabled(False)  # Esc belongs to presenter mode only
        help_menu = mb.addMenu("&Help")
        self._action(help_menu, "Keyboard shortcuts", self.show_shortcuts, ["?", "F1"])
        self.debugger = DebuggerActions(self, play, view, help_menu.menuAction())
        self.theme_menu = ThemeMenu(self, view)
        self.playback.connect_navigation(
            lambda: self._nav("home", 0), lambda: self._nav("delta", -1), lambda: self._nav("token", -1),
            lambda: self._nav("token", 1), lambda: self._nav("delta", 1), lambda: self._nav("end", 0),
        )
        self._refresh_recent()
        sources = ((self.open_action, "Open"), (self.paste_action, "Paste"), (self.run_action, "Run"),
                   (self.capture_action, "Capture"), (self.proxy.action, "Proxy"), (self.serve.action, "Serve"))
        for action, short in sources:
            action.setIconText(short)
        self.source_buttons = SourceButtons([action for action, _ in sources])
        self.menuBar().setCornerWidget(self.source_buttons, Qt.Corner.TopRightCorner)

    # ================================================================ navigation

    def _nav(self, how: str, direction: int) -> None:
        state = self.session.state
        if state is None:
            return
        if how == "token":
            state.step_token(direction)
        elif how == "delta":
            state.next_delta() if direction > 0 else state.previous_delta()
        elif how == "home":
            state.home()
        else:
            state.end()

    def show_shortcuts(self) -> ShortcutsDialog:
        """``?``: the shortcut list (one window, brought forward when asked for again)."""
        dialog = getattr(self, "_shortcuts", None)
        if dialog is None:
            dialog = self._shortcuts = ShortcutsDialog(describe_shortcuts(self.actions()) + MOUSE_GESTURES, self)
        dialog.show()
        dialog.raise_()
        return dialog

    # ================================================================ sources

    def open_source(self, source: Source, policy: str | None = None) -> bool:
        """Show ``source``; on failure report it and keep what was on screen."""
        if self._refuse_while_live():
            return False
        self.driver.pause()
        try:
            self.session.open(source, policy)
        except SourceError as exc:
            self.errors.report("Cannot open", str(exc))
            return False
        except Exception as exc:  # noqa: BLE001 - any parser bug must not take the window down
            self.errors.report("Cannot open", f"{source.label}: analysis failed: {type(exc).__name__}: {exc}")
            return False
        self.focus_timeline()
        return True

    def focus_timeline(self) -> None:
        """Give the keyboard to the timeline: arrows step the cursor, never a combo box's value."""
        self.timeline.plot.setFocus(Qt.FocusReason.OtherFocusReason)

    def _fill_quirks_menu(self) -> None:
        """File > Quirks library: every shipped quirk by name, its description as the tooltip."""
        from callscope.engine.recordings.quirks import library

        if self.quirks_menu.actions():
            return
        for quirk in library():
            action = self.quirks_menu.addAction(quirk.id)
            action.setToolTip(quirk.what)
            action.triggered.connect(lambda _=False, path=str(quirk.trace.path): self.open_path(path))

    def open_path(self, path: str, format_id: str | None = None, policy: str | None = None) -> bool:
        from callscope.engine.core.shipped import resolve_recording

        if Path(path).is_dir():  # a folder (or a proxy session folder) is a corpus: File > Open folder's table
            self.corpus.open_folder(str(path))
            self._remember(str(path))
            return True
        path = resolve_recording(str(path))  # a shipped name (headline_701_tokens) opens as the command line's does
        ok = self.open_source(FileSource(path, format_id), policy)
        if ok:
            self._remember(str(path))
        return ok

    def open_dialog(self) -> None:
        from callscope.fixtures_menu import chosen_path, open_dialog

        dialog = open_dialog(self)  # every kind replay reads; a shipped name typed in opens too
        if dialog.exec() and (path := chosen_path(dialog)):
            self.open_path(path)

    def replay_text(self, text: str, format_id: str, tools_text: str = "", unit: str = "char", size: int = 1,
                    rate: float | None = None, thinking: bool | str = False) -> bool:
        try:
            tools = parse_tools_text(tools_text)
        except SourceError as exc:
            self.errors.report("Bad tools JSON", str(exc))
            return False
        detected = None
        if format_id == PASTE_AUTO and text:
            from callscope.engine.inspector.paste_format import detect_format

            detected = detect_format(text, tools, thinking)  # every parser tried: the one with complete calls wins
            format_id = detected.format_id
        opened = self.open_source(TextSource(text, format_id, tools, unit, size, rate, thinking=thinking))
        if opened and detected is not None:
            self.statusBar().showMessage(f"pasted text read as {format_id}: {detected.reason}", 30000)
        return opened

    def paste_dialog(self) -> None:
        self.paste_with(PasteDialog(self))

    def paste_with(self, dialog: PasteDialog) -> bool:
        """Run the Paste dialog and replay what it holds (``auto``: the format that finds complete calls).

        A replay that fails (bad tools JSON, a parser error) leaves the dialog open again with
        the text as it was, so fixing it is one edit, not a second paste."""
        while dialog.exec():
            v = dialog.values()
            if self.replay_text(v.text, v.format_id, v.tools_text, v.unit, v.size, v.rate, v.thinking):
                return True
        return False

    def _refuse_while_live(self) -> bool:
        """True (and a dialog) while a run or a capture is filling the panes: one live source at a time."""
        for live in self._live_sources():
            if live.running:
                self.errors.report(f"A {live.kind} is in progress", f"Stop the {live.noun} before opening another source.")
                return True
        return False

    def _live_sources(self) -> list[LiveController]:
        """The live controllers created so far (each is made on first use)."""
        return [live for live in (self._runs, self._captures, self.proxy.controller, self.serve.controller)
                if live is not None]

    def _present(self, controller: LiveController) -> None:
        """Show a new live controller in the status bar, its failures as dialogs."""
        self._statuses.append(LiveStatus(controller, self.live_status, self.errors, self.focus_timeline, self))

    def set_policy(self, policy: str) -> None:
        if self.session.state is None or policy == self.session.policy:
            return
        try:
            self.session.set_policy(policy)
        except SourceError as exc:
            self.errors.report("Cannot re-analyse", str(exc))
            self.source_bar.refresh()
        self.focus_timeline()

    # ================================================================ live runs

    @property
    def runs(self) -> RunController:
        if self._runs is None:
            from callscope.live.run import RunController

            self._runs = RunController(self.session, self)
            self._present(self._runs)
            self._runs.failed.connect(self._open_fallback)  # after the status driver's error dialog
        return self._runs

    def run_dialog(self) -> None:
        dialog = self.make_run_dialog()
        if dialog.exec():
            self._run_values = dialog.values()
            self.start_run(self._run_values)

    def make_run_dialog(self) -> RunDialog:
        """The Run dialog, holding what was entered last time this session (prompt, force tool, max tokens…)."""
        return RunDialog(self, getattr(self, "_run_values", None))

    def start_run(self, values: RunValues) -> bool:
        from callscope.live.run_worker import RunRequest

        try:
            tools = parse_tools_text(values.tools_text)
        except SourceError as exc:
            self.errors.report("Bad tools JSON", str(exc))
            return False
        if values.model_path and not Path(values.model_path).is_file():
            self.errors.report("Bad model", f"model {values.model_path}: no such file")
            return False
        if self._refuse_while_live():
            return False
        self.driver.pause()
        request = RunRequest(
            messages=[{"role": "user", "content": values.prompt}], tools=tools, model_path=values.model_path,
            format_id=values.format_id, policy=values.policy, force_tool=values.force_tool,
            max_tokens=values.max_tokens, seed=values.seed, demo=values.demo, thinking=values.thinking,
        )
        return self.runs.start(request)

    def stop_run(self) -> None:
        """Stop whatever is live (the Stop button, Ctrl+.): a model run or a capture."""
        for live in self._live_sources():
            if live not in (self.proxy.controller, self.serve.controller):  # these stop from their own panes
                live.stop()

    def _open_fallback(self, _message: str) -> None:
        fallback, self.fallback_recording = self.fallback_recording, None
        if fallback and (self.session.state is None or not self.session.current.steps):
            self.open_path(fallback)  # the start-up demo could not run: show a recording instead of nothing

    #: A recording to open if the start-up live run fails (a broken llama.cpp build): set by gui_main.
    fallback_recording: str | None = None

    # ================================================================ captures

    @property
    def captures(self) -> CaptureController:
        if self._captures is None:
            from callscope.live.capture import CaptureController

            self._captures = CaptureController(self.session, self)
            self._present(self._captures)
        return self._captures

    def capture_dialog(self) -> None:
        from callscope.dialogs.capture import CaptureDialog

        dialog = CaptureDialog(self, self._capture_values)
        if dialog.exec():
            self._capture_values = dialog.values()
            self.start_capture(self._capture_values)

    def start_capture(self, values) -> bool:
        """Validate the dialog's values and start capturing; the panes switch to the live stream at once."""
        from callscope.dialogs.capture import clients_from_values, request_from_values
        from callscope.engine.capture.request import RequestError

        try:
            request = request_from_values(values)
            clients = clients_from_values(values)
        except RequestError as exc:
            self.errors.report("Bad capture request", str(exc))
            return False
        loop = _qasync_loop()
        if loop is None:
            self.errors.report("Capture unavailable", "capturing needs the app's asyncio event loop (qasync); "
                               "start callscope with `callscope gui`")
            return False
        if self._refuse_while_live():
            return False
        self.driver.pause()
        captures = self.captures
        captures.loop = loop
        captures.clients = clients
        return captures.start(request)

    # ================================================================ export

    def _export(self, what: str) -> None:
        if self.session.state is None:
            self.errors.report("Nothing to export", "Open a source first.")
            return
        name = self.session.current.name
        filters = {
            "report": ("Report JSON (*.json)", f"{name}.report.json"),
            "sse": ("SSE transcript (*.sse *.txt)", f"{name}.sse"),
            "timeline": ("PNG image (*.png)", f"{name}.timeline.png"),
            "timeline-svg": ("SVG image (*.svg)", f"{name}.timeline.svg"),
            **{what: (export.pattern, f"{name}{export.suffix}") for what, (_spec, export) in pane_exports().items()},
            "animation": (ANIMATION_FILTERS, f"{name}.replay.gif"),
            "window": ("PNG image (*.png)", f"{name}.png"),
        }
        pattern, default = filters[what]
        path, _ = QFileDialog.getSaveFileName(self, "Export", default, pattern)
        if path:
            self.export_to(what, path)

    def export_to(self, what: str, path: str) -> bool:
        """File > Export: write ``what`` to ``path``; a failure is reported (a dialog) and returns False."""
        if self.session.state is None:
            return False
        try:
            self.write_export(what, path)
        except ExportError as exc:
            self.errors.report("Export failed", str(exc))
            return False
        self.statusBar().showMessage(f"wrote {path}", 5000)
        return True

    def write_export(self, what: str, path: str, width: int | None = None) -> None:
        """Write one export (report, sse, timeline[-svg], animation, window, or a pane's); raises ExportError.

        ``width``: the pixel width of a PNG plot (default :data:`~callscope.ui.exports.PLOT_EXPORT_WIDTH`).
        """
        state = self.session.state
        if state is None:
            raise ExportError("nothing to export: open a source first")
        self.session.flush()
        plot_width = {} if width is None else {"width": width}
        if what == "report":
            write_report(path, [state.analysis])
        elif what == "sse":
            write_sse(path, state.analysis)
        elif what in ("timeline", "timeline-svg"):
            t = self.timeline
            export_plot(path, t.plot.getPlotItem(), (t.cursor_line, t.hover_line, t.hover_label), **plot_width)
        elif what in pane_exports():
            spec, pane_export = pane_exports()[what]
            self._show_pane(self.panes[spec.id])  # laid out at its real size, not a hidden tab's default
            pane_export.write(self.panes[spec.id], path, width)
        elif what == "animation":
            self.export_animation(path)
        else:
            save_png(path, self)

    def show_tab(self, pane_id: str) -> None:
        """Bring the tabbed pane ``pane_id`` forward (View > its title, ``gui --tab``)."""
        self.tabs.setCurrentWidget(self.panes[pane_id])

    def _show_pane(self, pane: QWidget) -> None:
        """Bring a tab's pane on screen (laid out at its real size) before grabbing it."""
        if self.tabs.indexOf(pane) >= 0:
            self.tabs.setCurrentWidget(pane)
        self.session.flush()
        QApplication.processEvents()

    def export_animation(self, path: str, view: str = "client", fps: float = 10.0, speed: float = 1.0,
                         progress=None) -> int:
        """The replay from the start as an animation of ``view`` (client | presenter | window); frames written.

        ``progress``: ``(done, total) -> go on?`` per frame; None shows a progress dialog with Cancel."""
        from callscope.ui.animation import dialog_progress, export_replay

        if progress is not None:
            return export_replay(self, path, view, fps, speed, progress)
        progress, dialog = dialog_progress(self, path)
        try:
            return export_replay(self, path, view, fps, speed, progress)
        finally:
            dialog.close()
            dialog.deleteLater()

    def save_trace_dialog(self) -> None:
        if self.session.state is None:
            self.errors.report("Nothing to save", "Open a source or run a model first.")
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save run as trace", f"{self.session.current.name}.jsonl", "Trace (*.jsonl)")
        if path:
            self.save_trace_to(path)

    def save_trace_to(self, path: str) -> bool:
        state = self.session.state
        if state is None:
            return False
        recorded = None
        tools = None
        for live in self._live_sources():
            if live.analysis is state.analysis:  # a live stream: save the bytes it recorded as they came
                recorded, tools = live.record_path, live.tools
        try:
            save_trace(path, state.analysis, recorded, tools)
        except ExportError as exc:
            self.errors.report("Cannot save trace", str(exc))
            return False
        self.statusBar().showMessage(f"saved {path}", 5000)
        return True

    def plot_folder(self, folder: str | None = None) -> None:
        folder = folder or choose_folder(self, "Plot TTFD for every recording in…")
        if not folder:
            return
        analyses = self.ttfd_view.folder_runs(folder, self.session.policy)
        if not analyses:
            self.errors.report("Nothing to plot", f"{folder}: no readable recording")
            return
        self.ttfd_view.set_runs(analyses, f"runs in {Path(folder).name}")
        self.tabs.setCurrentWidget(self.ttfd_view)

    # ================================================================ recent files, drag and drop

    def _remember(self, path: str) -> None:
        """Store the absolute path: a relative one means another file (or none) from another directory."""
        path = _absolute(path)
        recent = [p for p in dict.fromkeys(_absolute(p) for p in self.recent_files()) if p != path]
        recent.insert(0, path)
        self.settings.setValue(RECENT_KEY, recent[:MAX_RECENT])
        self._refresh_recent()

    def recent_files(self) -> list[str]:
        value = self.settings.value(RECENT_KEY, [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def _refresh_recent(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for path in files:
            action = self.recent_menu.addAction(path)
            action.triggered.connect(lambda _c=False, p=path: self.open_path(p))
        self.recent_menu.setEnabled(bool(files))

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        for url in event.mimeData().urls():
            if url.isLocalFile():
                path = url.toLocalFile()
                if self.templates.accepts(path):  # a chat template or a model: the Template pane
                    self.templates.open_path(path)
                else:
                    self.open_path(path)
                break

    # ================================================================ reactions

    def _analysis_changed(self) -> None:
        a = self.session.current
        self.setWindowTitle(f"callscope — {a.name}")
        self._update_save_trace(a)
        state = self.session.state
        has_text = state is None or state.spans.has_text or state.live
        if not has_text:
            self.text_pane.set_subtitle("none")  # the pane's placeholder says why
        else:
            self.text_pane.set_subtitle(f"{steps_text(a)}, boundaries shaded")
        self._fit_text_pane(has_text)
        self.parse_pane.set_subtitle("the server's parse at the cursor")
        self.timeline_pane.set_subtitle("click or drag to move the cursor · Shift+drag pans · wheel zooms · "
                                        "F fits · right-click for more")

    def _update_save_trace(self, a) -> None:
        """A trace records generated bytes: a parse-carrying source (byte-prefix fixture) has none to save."""
        savable = a.source.format is not None
        self.save_trace_action.setEnabled(savable)
        tip = "" if savable else "This source carries parses, not generated bytes: there is nothing to record as a trace"
        self.save_trace_action.setToolTip(tip or "Save the shown run as a callscope trace")
        self.save_trace_action.setStatusTip(tip)

    def _fit_text_pane(self, has_text: bool) -> None:
        """A source without text gives most of the text pane's width to the tabs, and takes it back after."""
        sizes = self.bottom_split.sizes()
        if not has_text and self._text_sizes is None and sizes[0] > NARROW_TEXT_PANE:
            self._text_sizes = sizes
            self.bottom_split.setSizes([NARROW_TEXT_PANE, sizes[1], sizes[2] + sizes[0] - NARROW_TEXT_PANE])
        elif has_text and self._text_sizes is not None:
            self.bottom_split.setSizes(self._text_sizes)
            self._text_sizes = None

    def _grew(self, _text: str) -> None:
        a = self.session.current
        self.text_pane.set_subtitle(f"{steps_text(a)} so far")

    def _cursor_changed(self, index: int) -> None:
        state = self.session.state
        if state is not None:
            self.cursor_label.setText(f"{step_noun(state.analysis)} {state.timebase.step(index)}")

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._quit_allowed():
            event.ignore()
            return
        self.driver.pause()
        for live in reversed(self._live_sources()):  # a capture cancels its request and waits (bounded) to close
            live.shutdown()
        self.template_view.shutdown()
        self.corpus.shutdown()
        super().closeEvent(event)

    def _quit_allowed(self) -> bool:
        """Closing during a run, a capture or a proxy stops it: ask first (Ctrl+Q was one key from losing a run)."""
        busy = [live.noun for live in self._live_sources()
                if live.running or (live is self.proxy.controller and self.proxy.controller.active)]
        if not busy:
            return True
        what = " and ".join(dict.fromkeys(busy))
        return self.errors.ask(f"Quit during a {what}?",
                               f"A {what} is in progress. Quitting stops it; what it recorded so far is kept.",
                               "Quit")

    def settle(self) -> None:
        """Deliver pending redraws now (screenshots, tests)."""
        self.session.flush()
        QTimer.singleShot(0, lambda: None)


def _absolute(path: str) -> str:
    return str(Path(path).expanduser().resolve())


def _qasync_loop():
    """The running qasync loop (set up by :func:`callscope.gui_main.run_event_loop`), or None."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    import qasync

    return loop if isinstance(loop, qasync.QEventLoop) and not loop.is_closed() else None
