"""The window's Proxy source: its action, its dialog, its dock of turns, and its controller, made on first use.

File > Proxy… starts a recording proxy from the window (listen address,
upstream, record folder) or attaches to a session folder; the turns are listed
in a dock (:mod:`callscope.panes.proxy_view`) as they happen and open in the
usual panes, live (:mod:`callscope.live.proxy`). Kept out of the main window
so that the window only creates it and lists its controller among the live
sources.

The dock is a strip under the panes, not half the window (the timeline keeps
its room), and it goes when the proxy stops; File > Proxy turns brings the
stopped proxy's turns back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu

from callscope.turns_dock import show_strip, turns_dock

if TYPE_CHECKING:
    from callscope.dialogs.proxy import ProxyValues
    from callscope.live.proxy import ProxyController
    from callscope.panes.proxy_view import ProxyView


class ProxySource(QObject):
    """File > Proxy…: one proxy (or watched folder) per window."""

    def __init__(self, window: QMainWindow, menu: QMenu, loop_of) -> None:
        super().__init__(window)
        self.window = window
        self._loop_of = loop_of  # () -> the running qasync loop, or None
        self.controller: ProxyController | None = None
        self.view: ProxyView | None = None
        self.dock: QDockWidget | None = None
        self.values: ProxyValues | None = None  # what the dialog held last time
        self.menu = menu
        self.action = window._action(menu, "Pro&xy: watch a client's traffic…", self.dialog, (),
                                     "Start a recording proxy (or attach to a session folder) and list its turns")

    def ensure(self) -> ProxyController:
        """The controller and its dock, made on first use."""
        if self.controller is None:
            from callscope.live.proxy import ProxyController
            from callscope.panes.proxy_view import ProxyView

            self.controller = ProxyController(self.window.session, self)
            self.controller.failed.connect(self._failed)
            self.view = ProxyView(self.controller)
            self.dock = turns_dock(self.window, self.view, title="Proxy turns", object_name="ProxyDock",
                                   menu=self.menu, after=self.action, toggle_text="Proxy &turns",
                                   toggle_tip="Show or hide the proxy's list of turns",
                                   stopped=self.controller.stopped)
        return self.controller

    def show_dock(self) -> None:
        """Show the turns as a strip under the panes (never half the window)."""
        assert self.dock is not None
        show_strip(self.window, self.dock)

    def dialog(self) -> None:
        from callscope.dialogs.proxy import ProxyDialog

        dialog = ProxyDialog(self.window, self.values)
        if dialog.exec():
            self.values = dialog.values()
            self.start(self.values)

    def start(self, values: ProxyValues) -> bool:
        """Start the proxy the values describe, or attach to their folder; a mistake is one dialog line."""
        from callscope.dialogs.proxy import ATTACH, config_from_values, folder_from_values

        errors = self.window.errors
        loop = self._loop_of()
        try:
            if values.mode == ATTACH:
                folder = folder_from_values(values)
            else:
                config = config_from_values(values)
                if loop is None:
                    errors.report("Proxy unavailable", "the proxy needs the app's asyncio event loop (qasync); "
                                  "start callscope with `callscope gui`")
                    return False
        except ValueError as exc:
            errors.report("Bad proxy settings", str(exc))
            return False
        controller = self.ensure()
        if controller.active:
            controller.stop()  # one proxy at a time: the new one replaces it
            controller.shutdown()
        controller.loop = loop
        self.show_dock()
        if values.mode == ATTACH:
            try:
                return controller.attach(folder)
            except ValueError as exc:
                errors.report("Cannot attach", str(exc))
                return False
        return controller.start(config)

    def _failed(self, message: str) -> None:
        self.window.errors.report("Proxy", message)
