"""The window's Template source: File > Open template, the Template tab, and what its buttons do.

The pane (:mod:`callscope.panes.template_view`) shows a template's analysis;
this object opens files into it (the menu entry, the pane's button, a dropped
``.jinja``/``.gguf``) and acts on its two requests: run the template live on
the packaged model with a forced call (a :class:`~callscope.live.run_worker.RunRequest`
with the template and ``--format auto``, through the window's one run
controller), or open the Paste dialog with the template's parser chosen (the
window's ordinary paste path). Kept out of the main window, which only creates
it and gives it the pane's tab.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMenu

from callscope.engine.inspector.template_state import TemplateState
from callscope.panes.template_view import TEMPLATE_FILTERS, TEMPLATE_SUFFIXES, TemplateView

if TYPE_CHECKING:
    from callscope.main_window import MainWindow

#: A forced call of the round trip's two tools needs far fewer tokens than a demo.
RUN_MAX_TOKENS = 160


class TemplateTab(QObject):
    """File > Open template… (``Ctrl+T``) into the Template tab (View > Template, ``Alt+6``)."""

    def __init__(self, window: MainWindow, view: TemplateView, file_menu: QMenu) -> None:
        super().__init__(window)
        self.window = window
        self.view = view
        self.action = window._action(file_menu, "Open te&mplate…", self.open_dialog, ["Ctrl+T"],
                                     "Analyse a chat template (.jinja, tokenizer_config.json) or a GGUF's own template")
        view.openRequested.connect(self.open_dialog)
        view.runRequested.connect(self.run)
        view.pasteRequested.connect(self.paste)
        view.analysed.connect(self._analysed)
        view.failed.connect(self._failed)

    @staticmethod
    def accepts(path: str) -> bool:
        """A file the Template pane opens (a drop on the window), not a recording."""
        return Path(path).suffix.lower() in TEMPLATE_SUFFIXES

    def show(self) -> None:
        self.window.tabs.setCurrentWidget(self.view)

    def open_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open a chat template or a GGUF model", str(Path.cwd()),
                                              TEMPLATE_FILTERS)
        if path:
            self.open_path(path)

    def open_path(self, path: str) -> None:
        """Show the Template tab and analyse ``path`` there (off the GUI thread)."""
        self.show()
        self.window.statusBar().showMessage(f"analysing the template in {Path(path).name}…")
        self.view.open_path(path)

    def run(self, state: TemplateState) -> bool:
        """Run ``state``'s template live on the packaged model, forcing a call in the syntax it teaches."""
        from callscope.live.run_worker import RunRequest

        window = self.window
        if window._refuse_while_live():
            return False
        window.driver.pause()
        request = RunRequest(
            messages=[{"role": "user", "content": state.prompt}], tools=state.tools, format_id="auto",
            template=state.template, force_tool="any", max_tokens=RUN_MAX_TOKENS,
            name=f"template {Path(state.path).name}",
        )
        started = window.runs.start(request)
        if started:
            window.statusBar().showMessage(f"running {Path(state.path).name} live: a forced call in {state.format_id}", 8000)
            window.focus_timeline()
        return started

    def paste(self, state: TemplateState) -> None:
        """The Paste dialog with the template's parser chosen; thinking ``auto`` reads the reasoning state from the
        text when the template's prompt may open a reasoning block."""
        from callscope.dialogs.paste import PasteDialog

        self.window.paste_with(PasteDialog(self.window, state.format_id, "auto", may_open=state.may_open_reasoning))

    def _analysed(self, state: TemplateState) -> None:
        self.window.statusBar().showMessage(f"{Path(state.path).name}: parser {state.format_id}; {state.check_line}")

    def _failed(self, message: str) -> None:
        self.window.statusBar().clearMessage()
        self.window.errors.report("Cannot analyse the template", message)


__all__ = ["TemplateTab"]
