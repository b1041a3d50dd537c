"""Every failure a user can cause ends here: one dialog, and the window stays usable.

Tests replace :meth:`ErrorPresenter.show_error` to capture what would be
shown instead of blocking on a modal dialog.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox, QWidget


class ErrorPresenter(QObject):
    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.history: list[tuple[str, str]] = []

    def report(self, title: str, message: str) -> None:
        """Record and show an error (the one entry point panes and workers use)."""
        self.history.append((title, message))
        self.show_error(title, message)

    def show_error(self, title: str, message: str) -> None:
        QMessageBox.critical(self.window, title, message)
