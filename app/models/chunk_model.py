"""Table model of every wire chunk of the stream, those after the cursor dimmed (a thin adapter over ChunkIndex).

Every chunk is a row whatever the cursor: moving the cursor only re-colours the
rows whose sent/unsent state changed (no row is inserted or removed), so a row
the user clicks stays under the mouse, and a frame of playback costs one
``dataChanged``, not a table re-layout. A live stream's new chunks are appended.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QFont

from callscope.engine.analysis.units import step_noun
from callscope.engine.inspector.chunks import COLUMNS, ChunkIndex
from callscope.ui import theme

Index = QModelIndex | QPersistentModelIndex
_ROLES = frozenset({Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.FontRole,
                    Qt.ItemDataRole.TextAlignmentRole, Qt.ItemDataRole.ToolTipRole})


class ChunkTableModel(QAbstractTableModel):
    """Rows are all chunks; the first :attr:`sent` of them had reached the client by the cursor's step."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.index_data: ChunkIndex | None = None
        self.rows = 0
        self.sent = 0
        self._future_font = QFont()
        self._future_font.setItalic(True)

    def set_chunks(self, chunks: ChunkIndex | None, sent: int = 0) -> None:
        self.beginResetModel()
        self.index_data = chunks
        self.rows = len(chunks) if chunks is not None else 0
        self.sent = min(sent, self.rows)
        self.endResetModel()

    def sync_rows(self) -> None:
        """A live stream emitted more chunks: append their rows."""
        if self.index_data is None:
            return
        count = len(self.index_data)
        if count > self.rows:
            self.beginInsertRows(QModelIndex(), self.rows, count - 1)
            self.rows = count
            self.endInsertRows()

    def set_sent(self, count: int) -> None:
        """The cursor moved: the first ``count`` chunks are the client's, the rest are still to come."""
        count = max(0, min(count, self.rows))
        if count == self.sent:
            return
        lo, hi = sorted((self.sent, count))
        self.sent = count
        self.dataChanged.emit(self.index(lo, 0), self.index(hi - 1, len(COLUMNS) - 1),
                              [Qt.ItemDataRole.ForegroundRole, Qt.ItemDataRole.FontRole])

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else self.rows

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            if section == 0 and self.index_data is not None:
                return step_noun(self.index_data.analysis)  # "token 13" here as in every other pane
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role not in _ROLES or not index.isValid() or self.index_data is None or not 0 <= index.row() < self.rows:
            return None  # a view asks for a dozen roles per cell per paint: most are answered here
        column = index.column()
        row = index.row()
        if role == Qt.ItemDataRole.DisplayRole:
            cells = self.index_data.row(row)
            return (cells.step, cells.time, cells.index, cells.kind, cells.fragment)[column]
        if role == Qt.ItemDataRole.ForegroundRole:
            if row >= self.sent:
                return QColor(theme.FAINT)  # not sent yet at the cursor
            if column in (3, 4):
                return QColor(theme.CHUNK_COLORS.get(self.index_data.analysis.chunks[row].kind, theme.TEXT))
            return None
        if role == Qt.ItemDataRole.FontRole and row >= self.sent:
            return self._future_font
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (0, 1, 2):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            if row >= self.sent:
                return "not sent yet at the cursor: the client receives it later"
            if column == 4:
                return self.index_data.raw_json(row)
        return None
