"""The keyboard-shortcut list (``?``), read from the window's own actions so it is never out of date."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget


class ShortcutsDialog(QDialog):
    """``?``: every keyboard shortcut, read from the window's actions (never out of date)."""

    def __init__(self, rows: list[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(460, 520)
        table = QTableWidget(len(rows), 2)
        table.setHorizontalHeaderLabels(["keys", "action"])
        table.verticalHeader().hide()
        table.horizontalHeader().setStretchLastSection(True)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for i, (keys, what) in enumerate(rows):
            table.setItem(i, 0, QTableWidgetItem(keys))
            table.setItem(i, 1, QTableWidgetItem(what))
        table.resizeColumnToContents(0)
        self.table = table
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout.addWidget(buttons)
        self._fit_to_table()

    def _fit_to_table(self) -> None:
        """Tall enough for every row (no scrolling a list of a dozen shortcuts), within the screen."""
        table = self.table
        table.resizeRowsToContents()
        table.resizeColumnsToContents()
        table.horizontalHeader().setStretchLastSection(True)
        rows = sum(table.rowHeight(i) for i in range(table.rowCount()))
        height = rows + table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth() + 2
        width = sum(table.columnWidth(i) for i in range(table.columnCount())) + 2 * table.frameWidth() + 40
        table.setMinimumHeight(height)
        table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        limit = screen.height() - 100 if screen is not None else height  # room for the Close button and margins
        if height > limit:  # a very long list on a small screen scrolls after all
            table.setMinimumHeight(max(200, limit))
        self.resize(max(460, width), self.sizeHint().height())


def describe_shortcuts(actions) -> list[tuple[str, str]]:
    rows = []
    for action in actions:
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
        keys = [k for k in keys if k]
        if keys:
            rows.append((" / ".join(keys), action.text().replace("&", "").rstrip(".…")))
    return rows
