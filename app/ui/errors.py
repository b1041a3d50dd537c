"""Every failure a user can cause ends here: one dialog, and the window stays usable.

Tests replace :meth:`ErrorReporter.show_error` to capture what would be
shown instead of blocking on a modal dialog.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMessageBox, QWidget

#: The engine words its errors for the CLI; in the window the same advice names the dialogs' fields.
_CLI_TO_GUI = (
    (re.compile(r"\bpass --tools FILE\b"), "fill in the Run dialog's tools box"),
    (re.compile(r"\bpass --model PATH\b"), "choose a model file in the Run dialog (Browse…)"),
    (re.compile(r"\(use --insecure only if you trust this server\)"),
     "(tick 'do not verify the TLS certificate' only if you trust this server)"),
    (re.compile(r"\bwithout --template\b"), "without a chat template"),
    (re.compile(r"--force-tool\b"), "force tool"),
    (re.compile(r"--tool-choice\b"), "the request's tool_choice"),
    (re.compile(r"--tools\b"), "the tools box"),
    (re.compile(r"--model\b"), "the model field"),
    (re.compile(r"--format\b"), "the wire format"),
    (re.compile(r"--max-tokens\b"), "max tokens"),
    (re.compile(r"--listen\b"), "the listen address"),
    (re.compile(r"--upstream\b"), "the upstream URL"),
    (re.compile(r"--record-dir\b"), "the record folder"),
    (re.compile(r"--step\b"), "the step"),
    (re.compile(r"--rate\b"), "the timing"),
    (re.compile(r"--atomic-silence\b"), "the atomic silence"),
)
#: Any other option name left in a message: said as words (``--max-string`` -> ``max string``).
_ANY_OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)\b")


def gui_wording(message: str) -> str:
    """Reword CLI advice (``pass --tools FILE``) as what to do in the window; no option name is left."""
    for pattern, words in _CLI_TO_GUI:
        message = pattern.sub(words, message)
    return _ANY_OPTION.sub(lambda m: m.group(1).replace("-", " "), message)


class ErrorReporter(QObject):
    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.history: list[tuple[str, str]] = []

    def report(self, title: str, message: str) -> None:
        """Record and show an error (the one entry point panes and workers use), in the window's words."""
        message = gui_wording(message)  # the engine words its errors for the command line
        self.history.append((title, message))
        self.show_error(title, message)

    def show_error(self, title: str, message: str) -> None:
        QMessageBox.critical(self.window, title, message)

    def ask(self, title: str, question: str, yes: str) -> bool:
        """A yes/no question before something that loses work (quitting during a run); No is the default.

        Tests replace it (as :meth:`show_error`) to answer without a modal dialog.
        """
        box = QMessageBox(QMessageBox.Icon.Question, title, question, QMessageBox.StandardButton.NoButton, self.window)
        go = box.addButton(yes, QMessageBox.ButtonRole.AcceptRole)
        stay = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(stay)
        box.setEscapeButton(stay)
        box.exec()
        return box.clickedButton() is go
