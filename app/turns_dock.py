"""The dock of turns a live server lists (the proxy's, serve's): one behaviour for both.

The dock is a strip under the panes, never half the window: the timeline keeps its room.
It goes when its server stops, and its File menu entry (``Proxy turns``,
``Served turns``) brings the stopped server's turns back. Each source makes one, with
its own title, when its controller is first made.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QWidget

#: The dock's height when it appears (px): a few turns, the timeline and panes above keep their room.
DOCK_HEIGHT = 170


def turns_dock(window: QMainWindow, view: QWidget, *, title: str, object_name: str, menu: QMenu, after: QAction,
               toggle_text: str, toggle_tip: str, stopped: SignalInstance) -> QDockWidget:
    """A hidden bottom dock holding ``view``, its toggle in ``menu`` right after ``after``, hidden on ``stopped``."""
    dock = QDockWidget(title, window)
    dock.setObjectName(object_name)
    dock.setWidget(view)
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, dock)
    dock.hide()
    toggle = dock.toggleViewAction()
    toggle.setText(toggle_text)
    toggle.setStatusTip(toggle_tip)
    actions = menu.actions()
    following = actions.index(after) + 1 if after in actions else len(actions)
    menu.insertAction(actions[following] if following < len(actions) else None, toggle)
    stopped.connect(dock.hide)
    return dock


def show_strip(window: QMainWindow, dock: QDockWidget) -> None:
    """Show the dock as a strip under the panes (at :data:`DOCK_HEIGHT`), unless it is already on screen."""
    if dock.isVisible():
        return
    dock.show()
    window.resizeDocks([dock], [DOCK_HEIGHT], Qt.Orientation.Vertical)
