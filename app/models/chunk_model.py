"""Table model of the wire chunks emitted up to the cursor (a thin adapter over ChunkIndex)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from callscope.engine.inspector.chunks import COLUMNS, ChunkIndex
from callscope.ui import theme

Index = QModelIndex | QPersistentModelIndex


class ChunkTableModel(QAbstractTableModel):
    """Rows are the first :attr:`visible` chunks; moving the cursor inserts or removes rows at the end."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.index_data: ChunkIndex | None = None
        self.visible = 0

    def set_chunks(self, chunks: ChunkIndex | None, visible: int = 0) -> None:
        self.beginResetModel()
        self.index_data = chunks
        self.visible = min(visible, len(chunks)) if chunks is not None else 0
        self.endResetModel()

    def set_visible(self, count: int) -> None:
        if self.index_data is None:
            return
        count = max(0, min(count, len(self.index_data)))
        if count > self.visible:
            self.beginInsertRows(QModelIndex(), self.visible, count - 1)
            self.visible = count
            self.endInsertRows()
        elif count < self.visible:
            self.beginRemoveRows(QModelIndex(), count, self.visible - 1)
            self.visible = count
            self.endRemoveRows()

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else self.visible

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt API
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            if section == 0 and self.index_data is not None:
                return self.index_data.analysis.unit  # "token 13" here as in every other pane
            return COLUMNS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or self.index_data is None or not 0 <= index.row() < self.visible:
            return None
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            row = self.index_data.row(index.row())
            return (row.step, row.time, row.index, row.kind, row.fragment)[column]
        if role == Qt.ItemDataRole.ForegroundRole and column in (3, 4):
            kind = self.index_data.analysis.chunks[index.row()].kind
            return QColor(theme.CHUNK_COLORS.get(kind, theme.TEXT))
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (0, 1, 2):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and column == 4:
            return self.index_data.raw_json(index.row())
        return None
