"""Small read-only table models over lists of engine rows (calls, violations, compare rows, runs).

:class:`RowTableModel` maps each row object to cells through column
functions; the concrete models only name their columns and colours.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from callscope.engine.core.wire import Violation
from callscope.engine.inspector.chunks import time_text
from callscope.engine.inspector.compare import CompareRow, summarize
from callscope.engine.inspector.reconcile import CallVerdict
from callscope.ui import theme

T = TypeVar("T")
Index = QModelIndex | QPersistentModelIndex


class RowTableModel(QAbstractTableModel):
    columns: Sequence[tuple[str, Callable[[T], Any]]] = ()
    #: What a step counts (``token``, ``byte``, ``char``): a column titled ``{unit}`` is shown with it.
    unit = "step"

    def set_unit(self, unit: str) -> None:
        if unit != self.unit:
            self.unit = unit
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, max(0, len(self.columns) - 1))

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[T] = []

    def set_rows(self, rows: list[T]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.columns):
            return self.columns[section][0].replace("{unit}", self.unit)
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows) or not 0 <= index.column() < len(self.columns):
            return None
        row = self.rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            value = self.columns[index.column()][1](row)
            return "" if value is None else str(value)
        if role == Qt.ItemDataRole.ForegroundRole:
            return self.foreground(row, index.column())
        if role == Qt.ItemDataRole.BackgroundRole:
            return self.background(row, index.column())
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.tooltip(row, index.column())
        return None

    def foreground(self, row: T, column: int) -> QColor | None:
        return None

    def background(self, row: T, column: int) -> QColor | None:
        return None

    def tooltip(self, row: T, column: int) -> str | None:
        value = self.columns[column][1](row)
        text = "" if value is None else str(value)
        return text if len(text) > 40 else None


class CallVerdictModel(RowTableModel):
    columns = (
        ("index", lambda c: c.index),
        ("name", lambda c: c.name),
        ("verdict", lambda c: ("✗ " if not c.reconstructs else "⚠ " if c.cut else "✓ ") + c.verdict),
        ("first delta", lambda c: "–" if c.first_delta_step is None else f"{c.unit} {c.first_delta_step}"),
        ("streamed", lambda c: f"{len(c.streamed):,} chars"),
        ("final", lambda c: "–" if c.final is None else f"{len(c.final):,} chars"),
        ("id", lambda c: c.id or "–"),
        ("clients", lambda c: c.clients_summary or "–"),  # what each real client assembled (captures)
    )

    def foreground(self, row: CallVerdict, column: int) -> QColor | None:
        if column == 2:
            return QColor(theme.BAD if not row.reconstructs else theme.WARN if row.cut else theme.OK)
        if column == 1:
            return QColor(theme.call_color(row.index))
        return None


class ViolationModel(RowTableModel):
    columns = (
        ("rule", lambda v: v.rule),
        ("{unit}", lambda v: "–" if v.step is None else v.step),
        ("call", lambda v: "–" if v.call_index is None else v.call_index),
        ("detail", lambda v: v.detail),
    )

    def foreground(self, row: Violation, column: int) -> QColor | None:
        return QColor(theme.VIOLATION_COLOR) if column == 0 else None


class CompareModel(RowTableModel):
    left_title = "left"
    right_title = "right"

    def set_titles(self, left: str, right: str) -> None:
        self.left_title, self.right_title = left, right
        self.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, len(self.columns) - 1)

    columns = (
        ("{unit}", lambda r: r.step),
        ("time", lambda r: time_text(r.ms)),
        ("left", lambda r: summarize(r.left)),
        ("right", lambda r: summarize(r.right)),
        ("chars left", lambda r: r.left_chars),
        ("chars right", lambda r: r.right_chars),
    )

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            if section == 2:
                return self.left_title
            if section == 3:
                return self.right_title
            if section == 4:
                return "chars ◀"
            if section == 5:
                return "chars ▶"
        return super().headerData(section, orientation, role)

    def background(self, row: CompareRow, column: int) -> QColor | None:
        return theme.qcolor(theme.DIFFERS_BG, 150) if row.differs else None

    def foreground(self, row: CompareRow, column: int) -> QColor | None:
        if column == 4 and row.left_chars > row.right_chars:
            return QColor(theme.OK)
        if column == 5 and row.right_chars > row.left_chars:
            return QColor(theme.OK)
        return None
