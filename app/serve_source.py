"""The window's Serve source: its action, its dialog, its dock of served turns, and its controller, made on first use.

File > Serve… starts ``callscope serve`` from the window (a recording or
session folder, the quirks library, or the model live); point any client at
it, and each answer it sends is listed in the Served turns dock as it goes
out and opens in the usual panes, growing live (:mod:`callscope.live.serve`).
The dock is the proxy's (:mod:`callscope.panes.proxy_view`, :mod:`callscope.turns_dock`): a served turn
is a turn like a proxied one, listed in a strip under the panes that goes when the server stops
(File > Served turns brings it back).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu

from callscope.turns_dock import show_strip, turns_dock

if TYPE_CHECKING:
    from callscope.dialogs.serve import ServeValues
    from callscope.live.serve import ServeController
    from callscope.panes.proxy_view import ProxyView


class ServeSource(QObject):
    """File > Serve…: one server per window."""

    def __init__(self, window: QMainWindow, menu: QMenu, loop_of) -> None:
        super().__init__(window)
        self.window = window
        self._loop_of = loop_of  # () -> the running qasync loop, or None
        self.controller: ServeController | None = None
        self.view: ProxyView | None = None
        self.dock: QDockWidget | None = None
        self.values: ServeValues | None = None  # what the dialog held last time
        self.menu = menu
        self.action = window._action(menu, "Ser&ve: play a stream to clients…", self.dialog, (),
                                     "Serve a recording, a quirk or the model to real clients, and list each answer")

    def ensure(self) -> ServeController:
        """The controller and its dock, made on first use."""
        if self.controller is None:
            from callscope.live.serve import ServeController
            from callscope.panes.proxy_view import ProxyView

            self.controller = ServeController(self.window.session, self)
            self.controller.failed.connect(self._failed)
            self.view = ProxyView(self.controller)
            self.dock = turns_dock(self.window, self.view, title="Served turns", object_name="ServeDock",
                                   menu=self.menu, after=self.action, toggle_text="Served t&urns",
                                   toggle_tip="Show or hide the list of served turns",
                                   stopped=self.controller.stopped)
        return self.controller

    def dialog(self) -> None:
        from callscope.dialogs.serve import ServeDialog

        dialog = ServeDialog(self.window, self.values)
        if dialog.exec():
            self.values = dialog.values()
            self.start(self.values)

    def start(self, values: ServeValues) -> bool:
        """Serve what the values describe; a mistake is one dialog line."""
        from callscope.dialogs.serve import config_from_values, replier_from_values

        errors = self.window.errors
        loop = self._loop_of()
        if loop is None:
            errors.report("Serve unavailable", "serving needs the app's asyncio event loop (qasync); start callscope "
                          "with `callscope gui`")
            return False
        try:
            config = config_from_values(values)
            replier = replier_from_values(values)
        except ValueError as exc:
            errors.report("Cannot serve", str(exc))
            return False
        controller = self.ensure()
        if controller.active:
            controller.stop()  # one server at a time: the new one replaces it
            controller.shutdown()
        controller.loop = loop
        assert self.dock is not None
        show_strip(self.window, self.dock)
        return controller.start(config, replier)

    def _failed(self, message: str) -> None:
        self.window.errors.report("Serve", message)
