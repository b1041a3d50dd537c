"""View > Theme: dark, light, or the system's colour scheme (followed when the desktop switches).

The choice is kept in the window's settings (``callscope gui --theme T`` overrides it for one window). Applying a theme switches the
palette and the style sheet (:func:`callscope.ui.theme.apply`), then asks the
panes that build colours once to restyle and every pane to redraw.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QActionGroup, QGuiApplication
from PySide6.QtWidgets import QMenu

from callscope.ui import theme

if TYPE_CHECKING:
    from callscope.main_window import MainWindow

THEME_KEY = "theme"
#: `callscope gui --theme T` (for this window only: the saved choice stays).
THEME_ENV = "CALLSCOPE_THEME"
LABELS = {"dark": "&Dark", "light": "&Light", "system": "Follow the &system"}


class ThemeMenu(QObject):
    def __init__(self, window: MainWindow, view: QMenu) -> None:
        super().__init__(window)
        self.window = window
        menu = view.addMenu("&Theme")
        self.group = QActionGroup(self)
        self.actions = {}
        for name in theme.THEMES:
            action = menu.addAction(LABELS[name])
            action.setCheckable(True)
            action.triggered.connect(lambda _c=False, n=name: self.choose(n))
            self.group.addAction(action)
            self.actions[name] = action
        chosen = os.environ.get(THEME_ENV) or str(window.settings.value(THEME_KEY, "dark") or "dark")
        self.choice = chosen if chosen in theme.THEMES else "dark"
        self.actions[self.choice].setChecked(True)
        hints = QGuiApplication.styleHints()
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._system_changed)
        if theme.resolve(self.choice) != theme.current:
            self.apply()

    def choose(self, name: str) -> None:
        """The user picked a theme: apply and remember it."""
        self.choice = name
        self.actions[name].setChecked(True)
        self.window.settings.setValue(THEME_KEY, name)
        self.apply()

    def apply(self) -> str:
        palette = theme.apply(self.choice)
        w = self.window
        for pane in (w.timeline, w.ttfd_view, w.text_view, w.playback):
            pane.restyle()
        w.session.refresh()
        return palette

    def _system_changed(self, _scheme) -> None:
        if self.choice == "system" and theme.resolve("system") != theme.current:
            self.apply()
