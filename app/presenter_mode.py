"""Presenter mode: full screen, large fonts, the debugging panes hidden; the client view over the TTFD plot.

It is a second layout of the window's own panes, not copies: entering takes
the client view and the TTFD plot out of the tab stack into a presenter page
(the window's normal page is set aside whole), and leaving puts them back
where they were. So they keep following the one cursor, playback and live
growth as every pane does. ``R`` replays the current trace from the start at
1x (the recording's real timing), ``Space`` pauses, ``F5`` or ``Esc`` leaves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from callscope.engine.inspector.playback import SPEEDS
from callscope.panes.specs import PaneSpec, all_panes
from callscope.ui import theme

if TYPE_CHECKING:
    from callscope.main_window import MainWindow

#: Font scale of the presented panes.
PRESENTER_SCALE = 1.8
#: The TTFD plot's vertical title while presenting (short: a short plot must show all of it).
PRESENTER_LEFT_TITLE = "characters delivered"
HINT = "R  replay at 1×   ·   Space  pause   ·   F5 / Esc  leave"


def presented() -> list[PaneSpec]:
    """The panes presenter mode shows (their spec's ``presenter`` > 0), the largest on top."""
    return sorted((spec for spec in all_panes() if spec.presenter > 0), key=lambda spec: -spec.presenter)


def replay_from_start(window: MainWindow) -> bool:
    """Play the shown trace from its first position at 1x; False when there is nothing to replay (or it is live)."""
    state = window.session.state
    if state is None or state.live or state.last == 0:
        return False
    window.playback.speed.setCurrentIndex(SPEEDS.index(1.0))  # the combo tells the driver
    window.driver.pause()
    state.home()
    window.driver.play()
    return True


class PresenterMode(QObject):
    """Switches ``window`` between its debugging layout and the presenter page."""

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.active = False
        self.page: QWidget | None = None
        self._normal: QWidget | None = None
        self._tab_of: dict[QWidget, tuple[int, str]] = {}
        self._current_tab = 0
        self._was_full_screen = False
        self._axis_fonts: list[tuple[pg.AxisItem, QFont | None, QFont]] = []
        self._left_title: tuple[str, dict] | None = None

    def toggle(self) -> None:
        self.leave() if self.active else self.enter()

    def enter(self, full_screen: bool = True) -> None:
        if self.active:
            return
        w = self.window
        self.active = True
        self._current_tab = w.tabs.currentIndex()
        shown = [w.panes[spec.id] for spec in presented()]
        self._tab_of = {pane: (w.tabs.indexOf(pane), w.tabs.tabText(w.tabs.indexOf(pane))) for pane in shown}
        for pane in shown:
            w.tabs.removeTab(w.tabs.indexOf(pane))
        self.page = self._build_page()
        self._normal = w.takeCentralWidget()
        w.setCentralWidget(self.page)
        w.menuBar().hide()
        w.statusBar().hide()
        w.client_view.set_scale(PRESENTER_SCALE, headline=False)  # the TTFD plot's headline says it
        w.ttfd_view.set_presenting(True)
        self._scale_plot(w.ttfd_view.plot, PRESENTER_SCALE * 0.8)
        w.ttfd_view.setStyleSheet(f"QLabel#Headline {{ font-size: {10 * PRESENTER_SCALE:.0f}pt; }}")
        self._was_full_screen = w.isFullScreen()
        if full_screen:
            w.showFullScreen()
        w.presenter_action.setChecked(True)
        w.leave_presenter_action.setEnabled(True)
        w.client_view.refresh()
        w.focus_timeline()

    def leave(self) -> None:
        if not self.active:
            return
        w = self.window
        self.active = False
        page = w.takeCentralWidget()
        w.client_view.set_scale(1.0)
        w.ttfd_view.set_presenting(False)
        w.ttfd_view.setStyleSheet("")
        self._restore_plot()
        for pane, (index, title) in sorted(self._tab_of.items(), key=lambda item: item[1][0]):
            w.tabs.insertTab(index, pane, title)
        w.tabs.setCurrentIndex(self._current_tab)
        assert self._normal is not None
        w.setCentralWidget(self._normal)
        self._normal = None
        if page is not None:
            page.deleteLater()
        self.page = None
        w.menuBar().show()
        w.statusBar().show()
        if w.isFullScreen() and not self._was_full_screen:
            w.showNormal()
        w.presenter_action.setChecked(False)
        w.leave_presenter_action.setEnabled(False)
        w.focus_timeline()

    def _build_page(self) -> QWidget:
        w = self.window
        page = QWidget()
        page.setObjectName("Presenter")
        title = QLabel(w.session.current.name if w.session.state is not None else "callscope")
        title.setObjectName("PaneTitle")
        title.setStyleSheet(f"font-size: {11 * PRESENTER_SCALE:.0f}pt;")
        hint = QLabel(HINT)
        hint.setObjectName("Caption")
        hint.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.title, self.hint = title, hint
        top = QHBoxLayout()
        top.addWidget(title, 1)
        top.addWidget(hint)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(24, 16, 24, 16)
        layout.setSpacing(12)
        layout.addLayout(top)
        for spec in presented():
            layout.addWidget(w.panes[spec.id], spec.presenter)
            w.panes[spec.id].show()
        page.setStyleSheet(f"QWidget#Presenter {{ background: {theme.BACKGROUND}; }}")
        return page

    def _scale_plot(self, plot: pg.PlotWidget, scale: float) -> None:
        """Axis numbers and titles larger (restored on leave)."""
        self._axis_fonts = []
        item = plot.getPlotItem()
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            tick = QFont(axis.style["tickFont"]) if axis.style["tickFont"] is not None else None
            label = QFont(axis.label.font())
            self._axis_fonts.append((axis, tick, label))
            big = QFont(label)
            big.setPointSizeF(max(8.0, label.pointSizeF()) * scale)
            axis.setTickFont(big)
            title = QFont(label)  # the axis titles grow less: the vertical one must fit a short plot
            title.setPointSizeF(max(8.0, label.pointSizeF()) * min(scale, 1.3))
            axis.label.setFont(title)
        left = item.getAxis("left")
        self._left_title = (left.labelText, dict(left.labelStyle))
        # the desk's "argument characters delivered" is cut at 1024x700, where the plot is ~200 px tall
        left.setLabel(PRESENTER_LEFT_TITLE, **left.labelStyle)

    def _restore_plot(self) -> None:
        if self._left_title is not None:
            text, style = self._left_title
            self.window.ttfd_view.plot.getPlotItem().getAxis("left").setLabel(text, **style)
            self._left_title = None
        for axis, tick, label in self._axis_fonts:
            axis.setTickFont(tick)
            axis.label.setFont(label)
        self._axis_fonts = []
