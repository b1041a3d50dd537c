"""Shared set-up for the GUI tests: a real window, offscreen, with errors captured instead of shown."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
HEADLINE = FIXTURES / "headline_701_tokens.jsonl"
PARALLEL = FIXTURES / "formats" / "hermes_parallel.jsonl"
REGRESS = FIXTURES / "prefix" / "arguments_regress.txt"


def make_window(qtbot, tmp_path, monkeypatch, path: Path | None = None):
    """A shown MainWindow with its own settings file; ``window.shown_errors`` collects dialogs."""
    from app.gui_main import make_app
    from app.main_window import MainWindow
    from app.widgets.errors import ErrorPresenter

    make_app()
    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(ErrorPresenter, "show_error", lambda self, title, message: shown.append((title, message)))
    window = MainWindow(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window.shown_errors = shown
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    if path is not None:
        assert window.open_path(str(path)), shown
        window.session.flush()
    return window
