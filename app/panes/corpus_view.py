"""The corpus dock: a folder's recordings and their verdicts, filterable, sortable, with the TTFD distribution.

Thin: rows, cells, filters and the histogram are the engine's
(:mod:`callscope.engine.corpus.browse`). Batches from the pool are queued and put into the table
at most every :data:`FLUSH_MS` (one insert for many batches, so sorting and filtering stay cheap
while ten thousand rows arrive); the plot follows the rows the filters keep. Double-click or
Enter on a row opens that recording in the panes.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from callscope.engine.analysis.report import format_seconds
from callscope.engine.corpus.browse import CorpusFilter, CorpusRows, Histogram, ttfd_histogram
from callscope.engine.corpus.verdict import RecordingVerdict
from callscope.models.corpus_model import PATH_ROLE, VIOLATIONS, CorpusModel, CorpusProxy
from callscope.ui import theme

#: Longest a batch waits before it is shown (ms); batches arriving meanwhile go in with it.
FLUSH_MS = 150
#: The plot is redrawn at most this often while rows arrive (ms).
PLOT_MS = 600
ALL = "All"


class CorpusView(QWidget):
    openRequested = Signal(str)  # a recording's path
    stopRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rows = CorpusRows()
        self.model = CorpusModel(self.rows, self)
        self.proxy = CorpusProxy(self)
        self.proxy.setSourceModel(self.model)
        self._pending: list[RecordingVerdict] = []
        self._total = 0
        self._done = True
        self._status = ""
        self._build()
        self._flush_timer = QTimer(self, singleShot=True, interval=FLUSH_MS, timeout=self.flush)
        self._plot_timer = QTimer(self, singleShot=True, interval=PLOT_MS, timeout=self.redraw_plot)

    # ------------------------------------------------------------ layout

    def _build(self) -> None:
        self.header = QLabel("No folder")
        self.header.setObjectName("Caption")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.stop_button = QPushButton("Stop")
        self.stop_button.setObjectName("Danger")
        self.stop_button.hide()  # shown while a folder is being checked
        self.stop_button.clicked.connect(self.stopRequested)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.progress)
        top.addWidget(self.stop_button)

        self.rule_box = self._combo("Show only recordings that broke this rule (or: any, clean, unreadable)")
        self.model_box = self._combo("Show only recordings of this model")
        self.client_box = self._combo("Show only recordings this client profile assembled wrong")
        self.search = QLineEdit()
        self.search.setPlaceholderText("path contains…")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._filter_changed)
        self.shown_label = QLabel("")
        filters = QHBoxLayout()
        for label, box in (("Rule", self.rule_box), ("Model", self.model_box), ("Client", self.client_box)):
            filters.addWidget(QLabel(label))
            filters.addWidget(box)
        filters.addWidget(self.search, 1)
        filters.addWidget(self.shown_label)

        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(VIOLATIONS, Qt.SortOrder.DescendingOrder)  # the worst first
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setFont(theme.mono_font(9))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate((250, 70, 230, 65, 85, 190, 130, 60, 45, 130)):
            self.table.setColumnWidth(column, max(width, header.sectionSizeHint(column)))  # whole titles
        self.table.doubleClicked.connect(self._activated)
        self.table.activated.connect(self._activated)  # Enter on a row
        self.table.setToolTip("Double-click (or Enter) opens the recording in the panes")

        self.plot = pg.PlotWidget(background=theme.PANEL, axisItems={"bottom": LogTimeAxis(orientation="bottom")})
        item = self.plot.getPlotItem()
        item.showGrid(x=True, y=True, alpha=0.25)
        item.setLabel("bottom", "time to first delta (log scale)", color=theme.AXIS_TEXT)
        item.setLabel("left", "runs", color=theme.AXIS_TEXT)
        item.setMouseEnabled(x=False, y=False)
        item.hideButtons()
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            axis.setPen(pg.mkPen(theme.BORDER))
            axis.setTextPen(pg.mkPen(theme.AXIS_TEXT))
        self.legend = item.addLegend(offset=(-10, 10), labelTextColor=theme.LEGEND_TEXT,
                                     brush=pg.mkBrush(theme.qcolor(theme.PANEL_ALT, 220)))
        self.incremental_curve = item.plot([], [], stepMode="center", name="incremental (as streamed)",
                                           pen=pg.mkPen(theme.POLICY_COLOR, width=2),
                                           fillLevel=0, brush=pg.mkBrush(theme.qcolor(theme.POLICY_COLOR, 60)))
        self.atomic_curve = item.plot([], [], stepMode="center", name="atomic",
                                      pen=pg.mkPen(theme.ATOMIC_COLOR, width=2),
                                      fillLevel=0, brush=pg.mkBrush(theme.qcolor(theme.ATOMIC_COLOR, 45)))
        self.percentiles = QLabel("")
        self.percentiles.setObjectName("Caption")
        plot_box = QWidget()
        plot_layout = QVBoxLayout(plot_box)
        plot_layout.setContentsMargins(0, 0, 0, 0)
        plot_layout.addWidget(self.plot, 1)
        plot_layout.addWidget(self.percentiles)

        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.split.addWidget(self.table)
        self.split.addWidget(plot_box)
        self.split.setSizes([900, 420])
        self.split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addLayout(top)
        layout.addLayout(filters)
        layout.addWidget(self.split, 1)

    def _combo(self, tip: str) -> QComboBox:
        box = QComboBox()
        box.setToolTip(tip)
        box.setMinimumContentsLength(20)
        box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        box.addItem(ALL)
        box.currentIndexChanged.connect(self._filter_changed)
        return box

    # ------------------------------------------------------------ a run

    def start(self, folder: str) -> None:
        """A new folder: empty table, progress from zero."""
        self._pending.clear()
        self.rows = CorpusRows(folder)
        self.model.reset(self.rows)
        self._total = 0
        self._done = False
        for box in (self.rule_box, self.model_box, self.client_box):
            self._refill(box, [])
        self.header.setText(f"{folder}: looking for recordings…")
        self.progress.setRange(0, 0)
        self.progress.show()
        self.stop_button.show()
        self.redraw_plot()

    def planned(self, total: int) -> None:
        self._total = total
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(0)
        self.progress.setFormat(f"%v / {total:,}")
        self._update_header()

    def add_batch(self, verdicts: list[RecordingVerdict]) -> None:
        """A batch from the pool: shown within :data:`FLUSH_MS`, with whatever else arrives by then."""
        self._pending.extend(verdicts)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def flush(self) -> None:
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        if self.model.append(batch):
            self._refill(self.rule_box, self.rows.rule_choices())
            self._refill(self.model_box, self.rows.model_choices())
            self._refill(self.client_box, self.rows.client_choices())
        self.progress.setValue(len(self.rows.rows))
        self._update_header()
        if not self._plot_timer.isActive():
            self._plot_timer.start()

    def finished(self, seconds: float, stopped: bool) -> None:
        self.flush()
        self._done = True
        self.progress.hide()
        self.stop_button.hide()
        self._status = f"{'stopped after' if stopped else 'in'} {format_seconds(seconds * 1000)}"
        self._update_header()
        self.redraw_plot()

    @property
    def done(self) -> bool:
        return self._done

    def _update_header(self) -> None:
        count, bad, unreadable = self.rows.counts()
        total = f" of {self._total:,}" if not self._done and self._total else ""
        text = f"{self.rows.folder}: {count:,}{total} recordings, {bad:,} with violations, {unreadable:,} unreadable"
        if self._done and self._status:
            text += f" ({self._status})"
        self.header.setText(text)
        self.shown_label.setText(f"{self.proxy.rowCount():,} shown")

    # ------------------------------------------------------------ filters and plot

    def _refill(self, box: QComboBox, values: list[str]) -> None:
        """New values keep the current choice."""
        current = box.currentText()
        box.blockSignals(True)
        box.clear()
        box.addItem(ALL)
        box.addItems(values)
        box.setCurrentIndex(max(box.findText(current), 0))
        box.blockSignals(False)

    def current_filter(self) -> CorpusFilter:
        def chosen(box: QComboBox) -> str | None:
            return None if box.currentIndex() <= 0 else box.currentText()

        return CorpusFilter(chosen(self.rule_box), chosen(self.model_box), chosen(self.client_box),
                            self.search.text().strip())

    def set_filter(self, rule: str | None = None, model: str | None = None, client: str | None = None,
                   text: str = "") -> None:
        """Choose filters by value (tests, and the keyboard-less)."""
        for box, value in ((self.rule_box, rule), (self.model_box, model), (self.client_box, client)):
            box.setCurrentIndex(max(box.findText(value), 0) if value else 0)
        self.search.setText(text)
        self._filter_changed()

    def _filter_changed(self, *_args) -> None:
        self.proxy.set_filter(self.current_filter())
        self._update_header()
        self.redraw_plot()

    def histogram(self) -> Histogram:
        return ttfd_histogram(self.proxy.shown())

    def redraw_plot(self) -> None:
        h = self.histogram()
        if h.empty:
            self.incremental_curve.setData([], [])
            self.atomic_curve.setData([], [])
            self.percentiles.setText("no timed runs shown (fixtures and SSE dumps keep no clock)")
            return
        edges = [math.log10(edge) for edge in h.edges]  # drawn on log10(ms); LogTimeAxis labels it in time
        self.incremental_curve.setData(edges, h.incremental)
        self.atomic_curve.setData(edges, h.atomic)
        self.percentiles.setText(_percentile_text(self.proxy.shown()))

    # ------------------------------------------------------------ opening

    def _activated(self, index: QModelIndex) -> None:
        if index.isValid():
            self.openRequested.emit(str(index.data(PATH_ROLE)))


class LogTimeAxis(pg.AxisItem):
    """An axis over log10(ms), labelled in time (``100 ms``, ``2 s``) at 1, 2 and 5 of each decade: never
    the crowded ``6·10¹ 7·10¹`` pyqtgraph's own log mode writes over less than a decade."""

    #: Least room a label gets on the axis (px): ``200 ms`` and ``500 ms`` never touch.
    LABEL_PX = 64

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float, list[float]]]:
        if not math.isfinite(minVal) or not math.isfinite(maxVal) or maxVal <= minVal:
            return []
        per_decade = size / (maxVal - minVal) / self.LABEL_PX  # labels a decade has room for
        steps = (1, 1.5, 2, 3, 5, 7) if per_decade >= 6 else (1, 2, 5) if per_decade >= 3 else \
            (1, 3) if per_decade >= 2 else (1,)
        every = max(1, math.ceil(1 / per_decade)) if per_decade < 1 else 1  # a label every few decades
        found = []
        for decade in range(math.floor(minVal), math.ceil(maxVal) + 1):
            if decade % every == 0:
                found += [decade + math.log10(step) for step in steps]
        return [(1.0, [v for v in found if minVal <= v <= maxVal])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        return [format_seconds(10 ** v).replace(".00 s", " s") for v in values]


def _percentile_text(verdicts: list[RecordingVerdict]) -> str:
    """``p50 / p90 / p99: incremental 0.41 s / … ; atomic …`` over the runs shown."""
    from callscope.engine.corpus.summary import Summary

    s = Summary.of(verdicts)
    parts = []
    for name, hist in (("incremental", s.ttfd), ("atomic", s.ttfd_atomic)):
        if hist.count:
            parts.append(f"{name} " + " / ".join(format_seconds(hist.percentile(q)) for q in (50, 90, 99)))
    return f"p50 / p90 / p99 of {s.ttfd.count:,} timed runs: " + "; ".join(parts)
