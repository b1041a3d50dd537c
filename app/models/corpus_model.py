"""The corpus table's Qt models: a thin adapter over :class:`~callscope.engine.corpus.browse.CorpusRows`.

:class:`CorpusModel` shows the rows (cells and sort keys come from the engine's
:data:`~callscope.engine.corpus.browse.COLUMNS`) and grows by whole batches, so a table filling
from the pool costs one insert per batch; :class:`CorpusProxy` sorts by the engine's keys and keeps
the rows the current :class:`~callscope.engine.corpus.browse.CorpusFilter` matches.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor

from callscope.engine.corpus.browse import COLUMNS, CorpusFilter, CorpusRows
from callscope.engine.corpus.verdict import RecordingVerdict
from callscope.ui import theme

Index = QModelIndex | QPersistentModelIndex
#: The engine's sort key of a cell.
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
#: The recording's path (what a double-click opens).
PATH_ROLE = Qt.ItemDataRole.UserRole + 2
VIOLATIONS = next(i for i, c in enumerate(COLUMNS) if c.title == "Violations")


class CorpusModel(QAbstractTableModel):
    def __init__(self, rows: CorpusRows | None = None, parent=None) -> None:
        super().__init__(parent)
        self.rows = rows or CorpusRows()

    def reset(self, rows: CorpusRows) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def append(self, verdicts: list[RecordingVerdict]) -> bool:
        """Add a batch at the end (one insert); True when a filter gained a value."""
        if not verdicts:
            return False
        first = len(self.rows.rows)
        self.beginInsertRows(QModelIndex(), first, first + len(verdicts) - 1)
        grew = self.rows.add(verdicts)
        self.endInsertRows()
        return grew

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(COLUMNS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section].title
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMNS[section].tip or None
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.rows.cell(row, column)
        if role == SORT_ROLE:
            return self.rows.key(row, column)
        if role == PATH_ROLE:
            return self.rows.rows[row].path
        if role == Qt.ItemDataRole.TextAlignmentRole and COLUMNS[column].numeric:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole:
            return self._tone(self.rows.rows[row], column)
        if role == Qt.ItemDataRole.ToolTipRole:
            text = self.rows.cell(row, column)
            return text if len(text) > 30 else None
        return None

    def _tone(self, v: RecordingVerdict, column: int) -> QColor | None:
        if v.error is not None:
            return QColor(theme.DIM)
        if column == VIOLATIONS:
            return QColor(theme.BAD if v.violation_count else theme.OK)
        return None


class CorpusProxy(QSortFilterProxyModel):
    """Sorts by the engine's keys (numbers as numbers, missing values last) and filters by a CorpusFilter."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.filter = CorpusFilter()
        self.setSortRole(SORT_ROLE)

    def set_filter(self, corpus_filter: CorpusFilter) -> None:
        if corpus_filter != self.filter:
            self.beginFilterChange()
            self.filter = corpus_filter
            self.endFilterChange()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        model = self.sourceModel()
        return self.filter.matches(model.rows.rows[source_row])

    def lessThan(self, left: Index, right: Index) -> bool:
        model = self.sourceModel()
        a = model.rows.key(left.row(), left.column())
        b = model.rows.key(right.row(), right.column())
        try:
            return a < b
        except TypeError:
            return str(a) < str(b)

    def shown(self) -> list[RecordingVerdict]:
        """The recordings that pass the filter (in source order)."""
        model = self.sourceModel()
        return [v for v in model.rows.rows if self.filter.matches(v)]
