"""A live source in the status bar: busy while it starts, its progress, how it ended, its failure.

One status driver per :class:`~.base.LiveController`, whatever the source, so the
window shows a run and a capture the same way and a new source needs no new
window code. The widgets belong to the window's layout; the driver only
drives them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton

from callscope.engine.analysis.analyzer import Analysis
from callscope.live.base import LiveController
from callscope.ui.errors import ErrorReporter


@dataclass(frozen=True, slots=True)
class LiveStatusWidgets:
    """The status-bar widgets every live source shares (built by the window's layout)."""

    phase: QLabel  # what the source is doing, then how it ended
    busy: QProgressBar  # an indeterminate bar until the first item arrives
    rate: QLabel  # how much arrived, how fast
    stop: QPushButton  # shown while the source runs


class LiveStatus(QObject):
    """Connects one live controller's signals to the status bar and the error reporter."""

    def __init__(
        self,
        controller: LiveController,
        widgets: LiveStatusWidgets,
        errors: ErrorReporter,
        settled: Callable[[], None],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.kind = controller.kind
        self.widgets = widgets
        self.errors = errors
        self._settled = settled  # the window takes the keyboard back (the Stop button it had is hidden)
        controller.started.connect(self._started)
        controller.phaseChanged.connect(self._phase)
        controller.progress.connect(self._progress)
        controller.ended.connect(self._ended)
        controller.failed.connect(self._failed)
        self.controller = controller
        controller.session.analysisChanged.connect(self._shown)
        self._owns_line = False  # the status line describes this controller's stream

    def _shown(self) -> None:
        """Another source is on screen: the line about this one's last stream no longer applies."""
        state = self.controller.session.state
        if not self._owns_line or self.controller.running:
            return
        if state is None or state.analysis is not self.controller.analysis:
            self._owns_line = False
            self.widgets.phase.setText("")
            self.widgets.rate.setText("")

    def _started(self) -> None:
        self._owns_line = True
        w = self.widgets
        w.busy.show()
        w.stop.show()
        w.rate.setText("")
        w.phase.setText("starting…")

    def _phase(self, text: str) -> None:
        self.widgets.phase.setText(text)

    def _progress(self, text: str) -> None:
        self.widgets.busy.hide()
        self.widgets.rate.setText(text)

    def _idle(self, phase: str) -> None:
        self.widgets.busy.hide()
        self.widgets.stop.hide()
        self.widgets.phase.setText(phase)

    def _ended(self, analysis: Analysis) -> None:
        self._idle(f"{self.kind} ended: {analysis.finish_cause}")
        self._settled()

    def _failed(self, message: str) -> None:
        self._idle(f"{self.kind} failed")
        self.errors.report(f"{self.kind.capitalize()} failed", message)
