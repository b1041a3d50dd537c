"""TTFD: characters of tool-call arguments delivered over time, the policy's ramp against the atomic step.

Both first-delta times are marked and the gap is labelled as in the CLI
report. A second view plots TTFD against call length for every run shown in
this session (each stream of each file opened, each live run and capture),
or for every recording in a folder: streaming stays flat, atomic grows with
the call.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QButtonGroup, QHBoxLayout, QLabel, QPushButton, QStackedWidget, QVBoxLayout, QWidget

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.analysis.units import step_noun
from callscope.engine.inspector.ttfd import (
    TtfdCurves,
    TtfdPoint,
    describe_first,
    gain_text,
    ttfd_curves,
    ttfd_point,
)
from callscope.models.session import InspectorSession
from callscope.panes.axes import count_axes
from callscope.ui import theme

#: Runs remembered for the across-runs plot (oldest dropped first).
MAX_SESSION_RUNS = 500
#: The across-runs button: always this short (what it plots is said above the plot, not in the button).
ACROSS_TITLE = "TTFD vs call length"


def _stairs(xs: list[float], ys: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Step-function polyline: hold each value until the next x."""
    if not xs:
        return np.zeros(0), np.zeros(0)
    sx = np.repeat(np.asarray(xs, dtype=float), 2)[1:]
    sy = np.repeat(np.asarray(ys, dtype=float), 2)[:-1]
    return sx, sy


def _label(text: str, color: str, anchor: tuple[float, float]) -> pg.TextItem:
    """A plot label on a panel-coloured plate, so a curve passing behind it never crosses the words."""
    return pg.TextItem(text, color=color, anchor=anchor, fill=pg.mkBrush(theme.qcolor(theme.PANEL, 225)))


def _style_plot(plot: pg.PlotWidget) -> None:
    item = plot.getPlotItem()
    item.setMenuEnabled(False)
    item.hideButtons()
    item.showGrid(x=True, y=True, alpha=0.12)
    for name in ("left", "bottom"):
        axis = item.getAxis(name)
        axis.setPen(pg.mkPen(theme.BORDER))
        axis.setTextPen(pg.mkPen(theme.AXIS_TEXT))
        axis.enableAutoSIPrefix(False)  # "time (ms)", never "(x0.001)"
    plot.setBackground(theme.PANEL)


class TtfdView(QWidget):
    foldersRequested = Signal()

    def __init__(self, session: InspectorSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.curves: TtfdCurves | None = None
        self.no_calls = False  # the shown run delivered no argument characters (the plot says so)
        self.points: list[TtfdPoint] = []
        #: (policy, point) of every finished run shown this session, oldest first (a dict: ordered, no duplicates).
        self.session_points: dict[tuple[str, TtfdPoint], None] = {}
        self.label = QLabel("")
        self.label.setObjectName("Headline")
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        self.this_run = QPushButton("This run")
        self.across = QPushButton(ACROSS_TITLE)
        self.across.setToolTip("Every run shown in this session, under the current policy")
        self.folder = QPushButton("Folder…")
        self.folder.setToolTip("Plot every recording in a folder (all fixtures, all traces)")
        group = QButtonGroup(self)
        for button in (self.this_run, self.across):
            button.setCheckable(True)
            group.addButton(button)
        self.this_run.setChecked(True)
        bar = QHBoxLayout()
        bar.setSpacing(4)
        bar.addWidget(self.this_run)
        bar.addWidget(self.across)
        bar.addWidget(self.folder)
        bar.addStretch(1)
        self._key = ""  # the curves' legend: in the headline, never over the plot (it hid a label there)
        self._keyed: list[tuple[pg.PlotDataItem, str]] = []  # (curve, its name): the legend of an exported plot
        self.plot = pg.PlotWidget(background=theme.PANEL, axisItems=count_axes("bottom", "left"))
        _style_plot(self.plot)
        self.plot.getPlotItem().setLabel("left", "argument characters delivered", color=theme.AXIS_TEXT)
        self.plot.getPlotItem().setMouseEnabled(x=True, y=False)
        self.cursor_line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(theme.CURSOR, width=1.5))
        self.cursor_line.setZValue(50)  # above the labels' plates
        self.scatter_plot = pg.PlotWidget(background=theme.PANEL, axisItems=count_axes("bottom", "left"))
        _style_plot(self.scatter_plot)
        self.scatter_plot.getPlotItem().setLabel("bottom", "call length (chars of arguments)", color=theme.AXIS_TEXT)
        self.scatter_legend = self.scatter_plot.getPlotItem().addLegend(
            offset=(10, 10), labelTextColor=theme.LEGEND_TEXT, brush=pg.mkBrush(theme.qcolor(theme.PANEL_ALT, 220)))
        self.across_caption = QLabel("")  # what the across-runs plot shows (the button stays short)
        self.across_caption.setObjectName("Caption")
        across_box = QWidget()
        across_layout = QVBoxLayout(across_box)
        across_layout.setContentsMargins(0, 0, 0, 0)
        across_layout.setSpacing(2)
        across_layout.addWidget(self.across_caption)
        across_layout.addWidget(self.scatter_plot, 1)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.plot)
        self.stack.addWidget(across_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.label)
        layout.addLayout(bar)
        layout.addWidget(self.stack, 1)
        self.this_run.clicked.connect(lambda: self.stack.setCurrentIndex(0))
        self.across.clicked.connect(self._show_across)
        self.folder.clicked.connect(self.foldersRequested)
        session.analysisChanged.connect(self.rebuild)
        session.analysisChanged.connect(self._remember)
        session.cursorChanged.connect(self.show_cursor)
        session.grew.connect(self._grew)
        self._stale = False
        self._across_what = ""  # "session" when the across plot shows this session's runs

    # ------------------------------------------------------------ this run

    def rebuild(self) -> None:
        state = self.session.state
        item = self.plot.getPlotItem()
        item.clear()
        self._key = ""
        self._keyed = []
        if state is None:
            return
        curves = ttfd_curves(state.analysis, state.timebase)
        self.curves = curves
        running = state.analysis.running
        text = "generating…" if running else curves.label
        self.label.setText(
            f'<span style="color:{theme.POLICY_COLOR};font-weight:600">{html.escape(text)}</span>'
            + ("" if running else f'<span style="color:{theme.DIM}"> · {curves.policy.total:,} characters of arguments</span>')
        )
        item.setLabel("bottom", curves.x_label, color=theme.AXIS_TEXT)
        keys = []
        for curve, color, style in (
            (curves.atomic, theme.ATOMIC_COLOR, Qt.PenStyle.DashLine),
            (curves.policy, theme.POLICY_COLOR, Qt.PenStyle.SolidLine),
        ):
            if curve is curves.atomic and state.analysis.source.policy == "atomic":
                continue
            sx, sy = _stairs(curve.xs, curve.chars)
            self._keyed.insert(0, (item.plot(sx, sy, pen=pg.mkPen(color, width=2.2, style=style)), curve.label))
            keys.append(f'<span style="color:{color}">{"━━" if style == Qt.PenStyle.SolidLine else "┅┅"}</span>&nbsp;'
                        f"{html.escape(curve.label)}")
            if curve.first.step is not None:
                x = state.timebase.x_of_step(curve.first.step)
                marker = pg.InfiniteLine(x, angle=90, pen=pg.mkPen(theme.qcolor(color, 140), width=1, style=Qt.PenStyle.DotLine))
                item.addItem(marker, ignoreBounds=True)
                lo, hi = state.timebase.span
                right = x > (lo + hi) / 2
                text = f"first delta {describe_first(curve.first, step_noun(state.analysis))}"  # the colour names the curve
                # Bytes climb from bottom left to top right: the policy's label hangs from the top, the
                # atomic one sits on the floor (its step is at the far right), the legend is top left.
                top = max(curves.policy.total, curves.atomic.total, 1)
                low = curve is curves.atomic
                label = _label(text, color, (1.02 if right else -0.02, 1.0 if low else 0.0))
                label.setPos(x, top * (0.04 if low else 1.0))
                item.addItem(label, ignoreBounds=True)
        self._key = "&nbsp;&nbsp;&nbsp;".join(reversed(keys))
        if self._key:
            self.label.setText(self.label.text() + f'<br><span style="font-weight:400">{self._key}</span>')
        self._annotate_gap(curves, state)
        item.addItem(self.cursor_line, ignoreBounds=True)
        self.show_cursor(state.cursor)
        item.enableAutoRange()
        item.getViewBox().setLimits(yMin=0)  # characters delivered are never negative
        self.no_calls = curves.policy.total == 0 and curves.atomic.total == 0
        if self.no_calls:  # flat lines at 0 auto-range to ±30: give the axis a floor and say why it is empty
            item.setYRange(0, 1, padding=0.05)
            lo, hi = state.timebase.span
            note = _label("no tool calls" if not state.analysis.calls else "no argument characters",
                          theme.DIM, (0.5, 0.5))
            note.setPos((lo + hi) / 2, 0.5)
            item.addItem(note, ignoreBounds=True)

    @contextlib.contextmanager
    def export_legend(self) -> Iterator[None]:
        """The curves' key drawn in the plot while it is exported (on screen it is in the headline, above).

        Bottom right, left of the atomic jump and above its floor label: the ramp climbs from bottom left to top right,
        so that corner is empty; the first-delta and gain labels are top left.
        """
        if not self._keyed:
            yield
            return
        item = self.plot.getPlotItem()
        legend = pg.LegendItem(offset=(-40, -44), labelTextColor=theme.LEGEND_TEXT,
                               brush=pg.mkBrush(theme.qcolor(theme.PANEL_ALT, 230)), pen=pg.mkPen(theme.BORDER))
        legend.setParentItem(item.getViewBox())
        for curve, name in self._keyed:
            legend.addItem(curve, name)
        try:
            yield
        finally:
            scene = legend.scene()
            if scene is not None:
                scene.removeItem(legend)

    def legend_entries(self) -> list[str]:
        """The names an exported plot's legend lists (tests)."""
        return [name for _curve, name in self._keyed]

    def _annotate_gap(self, curves: TtfdCurves, state) -> None:
        """A bracket between the two first deltas, labelled with the gain (the point of the plot)."""
        a = state.analysis
        if a.source.policy == "atomic" or curves.policy.first.step is None or curves.atomic.first.step is None:
            return
        x0 = state.timebase.x_of_step(curves.policy.first.step)
        x1 = state.timebase.x_of_step(curves.atomic.first.step)
        if x1 <= x0:
            return
        # Above the ramp: at 60% of the height a steady ramp is still far right of the bracket's start, where the
        # label sits (left-aligned over it), and below the first-delta label hanging from the top.
        y = max(curves.policy.total, 1) * 0.6
        item = self.plot.getPlotItem()
        item.addItem(pg.PlotDataItem([x0, x1], [y, y], pen=pg.mkPen(theme.qcolor(theme.TEXT, 170), width=1.5,
                                                                     style=Qt.PenStyle.DashLine)), ignoreBounds=True)
        for x, angle in ((x0, 0), (x1, 180)):
            item.addItem(pg.ArrowItem(pos=(x, y), angle=angle, headLen=9, tailLen=0, brush=theme.TEXT, pen=None), ignoreBounds=True)
        label = _label(gain_text(a) or "", theme.TEXT, (-0.05, 1.15))  # over the bracket's start, worded as everywhere
        label.setPos(x0, y)
        item.addItem(label, ignoreBounds=True)

    def _grew(self, _text: str) -> None:
        """A live run grew: redraw now if the plot is on screen, else when it is shown."""
        if self.isVisible():
            self.rebuild()
        else:
            self._stale = True

    def showEvent(self, event) -> None:
        if self._stale:
            self._stale = False
            self.rebuild()
        super().showEvent(event)

    def show_cursor(self, index: int) -> None:
        state = self.session.state
        if state is not None:
            self.cursor_line.setPos(state.timebase.x(index))

    def restyle(self) -> None:
        """The theme changed: recolour both plots and draw this run again."""
        for plot in (self.plot, self.scatter_plot):
            _style_plot(plot)
        self.cursor_line.setPen(pg.mkPen(theme.CURSOR, width=1.5))
        self.rebuild()
        if self.stack.currentIndex() == 1:
            if self._across_what == "session":
                self._show_across()
            else:
                self._plot_points(self.points, self._across_what)

    def set_presenting(self, on: bool) -> None:
        """Presenter mode: this run's plot alone, without the buttons (they are for the desk, not the room)."""
        for button in (self.this_run, self.across, self.folder):
            button.setVisible(not on)
        if on:
            self.this_run.setChecked(True)
            self.stack.setCurrentIndex(0)

    # ------------------------------------------------------------ across runs

    def _remember(self) -> None:
        """A finished source is shown: its runs join the session's across-runs plot."""
        state = self.session.state
        if state is None or state.analysis.running:
            return
        for a in self.session.analyses:
            point = ttfd_point(a)
            if point is not None:
                key = (a.source.policy, point)
                self.session_points.pop(key, None)
                self.session_points[key] = None
        while len(self.session_points) > MAX_SESSION_RUNS:
            del self.session_points[next(iter(self.session_points))]
        if self.stack.currentIndex() == 1 and self._across_what == "session":
            self._show_across()

    def _show_across(self) -> None:
        """Plot every run shown this session under the current policy (a folder plot is one click away)."""
        policy = self.session.policy
        points = [p for (p_policy, p) in self.session_points if p_policy == policy]
        self._plot_points(points, f"this session · {policy}")
        self._across_what = "session"

    def set_runs(self, analyses: list[Analysis], what: str) -> None:
        """Plot TTFD against call length for ``analyses`` (each a dot for streaming and for atomic)."""
        self._plot_points([p for p in (ttfd_point(a) for a in analyses) if p is not None], what)
        self._across_what = what

    def _plot_points(self, points: list[TtfdPoint], what: str) -> None:
        self.points = points
        item = self.scatter_plot.getPlotItem()
        item.clear()
        self.scatter_legend.clear()
        timed = any(p.timed for p in self.points)
        item.setLabel("left", "time to first delta (ms)" if timed else "steps to first delta", color=theme.AXIS_TEXT)
        top = 0.0
        for attr, color, symbol, label in (("atomic", theme.ATOMIC_COLOR, "s", "atomic"), ("streaming", theme.POLICY_COLOR, "o", "streaming")):
            pts = [(p.call_chars, getattr(p, attr)) for p in self.points if getattr(p, attr) is not None]
            if pts:
                xs, ys = zip(*sorted(pts))
                top = max(top, *ys)
                item.plot(list(xs), list(ys), pen=pg.mkPen(theme.qcolor(color, 90), width=1), symbol=symbol, symbolSize=9,
                          symbolBrush=color, symbolPen=pg.mkPen(theme.MARK_EDGE), name=label)
        # From zero, with room for the marks: one run alone would auto-range to a sliver (2055.6-2056.4).
        longest = max((p.call_chars for p in self.points), default=0)
        item.setXRange(0, max(1.0, longest * 1.15), padding=0)
        item.setYRange(0, max(1.0, top * 1.15), padding=0)
        n = len(self.points)
        self.across_caption.setText(f"{n} run{'s' if n != 1 else ''} {what.removeprefix('runs ')}: "
                                    "streaming stays flat, atomic grows with the call")
        self.across.setToolTip(f"TTFD against call length: {self.across_caption.text()}")
        self.stack.setCurrentIndex(1)
        self.across.setChecked(True)

    def folder_runs(self, folder: str, policy: str) -> list[Analysis]:
        """Every analysis of every recording in ``folder`` (unreadable files are skipped)."""
        from callscope.engine.inspector.sources import FileSource, SourceError

        found: list[Analysis] = []
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file() and not path.name.startswith("."):
                try:
                    found.extend(FileSource(str(path)).analyses(policy))
                except SourceError:
                    continue
        return found
