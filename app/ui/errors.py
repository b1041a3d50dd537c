"""Every failure a user can cause ends here: one dialog, and the window stays usable.

Tests replace :meth:`ErrorReporter.show_error` to capture what would be
shown instead of blocking on a modal dialog.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox, QWidget

#: The engine words its errors for the CLI; in the window the same advice names the Run dialog's fields.
_CLI_TO_GUI = (
    (re.compile(r"\bpass --tools FILE\b"), "fill in the Run dialog's tools box"),
    (re.compile(r"\bpass --model PATH\b"), "choose a model file in the Run dialog (Browse…)"),
    (re.compile(r"--force-tool\b"), "force tool"),
    (re.compile(r"--tools\b"), "the tools box"),
    (re.compile(r"--model\b"), "the model field"),
    (re.compile(r"--format\b"), "the wire format"),
    (re.compile(r"--max-tokens\b"), "max tokens"),
)


def gui_wording(message: str) -> str:
    """Reword CLI advice (``pass --tools FILE``) as what to do in the window."""
    for pattern, words in _CLI_TO_GUI:
        message = pattern.sub(words, message)
    return message


class ErrorReporter(QObject):
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
