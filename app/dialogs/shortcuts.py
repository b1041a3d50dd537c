"""The keyboard-shortcut list (``?``), read from the window's own actions so it is never out of date.

Next/previous pairs share a row, and the rows are laid out in two columns of
key/action pairs, so the whole list fits on a small screen without scrolling.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget


class ShortcutsDialog(QDialog):
    """``?``: every keyboard shortcut, read from the window's actions (never out of date)."""

    def __init__(self, rows: list[tuple[str, str]], parent: QWidget | None = None, columns: int = 2) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(460, 520)
        self.rows = rows
        per_column = -(-len(rows) // columns) if rows else 0
        table = QTableWidget(per_column, 2 * columns)
        table.setHorizontalHeaderLabels(["keys", "action"] * columns)
        table.verticalHeader().hide()
        table.verticalHeader().setDefaultSectionSize(22)
        table.horizontalHeader().setStretchLastSection(True)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setWordWrap(False)
        for n, (keys, what) in enumerate(rows):
            row, column = n % per_column, 2 * (n // per_column)
            table.setItem(row, column, QTableWidgetItem(keys))
            table.setItem(row, column + 1, QTableWidgetItem(what))
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
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        limit = screen.height() - 100 if screen is not None else height  # room for the Close button and margins
        if height > limit:  # too tall with the style's row padding: the compact default row height first
            compact = table.verticalHeader().defaultSectionSize()
            for i in range(table.rowCount()):
                table.setRowHeight(i, min(table.rowHeight(i), compact))
            height -= rows - sum(table.rowHeight(i) for i in range(table.rowCount()))
        table.setMinimumHeight(height)
        table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        if height > limit:  # a very long list on a small screen scrolls after all
            table.setMinimumHeight(max(200, limit))
        self.resize(max(460, width), self.sizeHint().height())


def describe_shortcuts(actions) -> list[tuple[str, str]]:
    """(keys, what) of every action with a shortcut; "Next X" and "Previous X" share one row."""
    rows: list[tuple[str, str]] = []
    for action in actions:
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
        keys = [k for k in keys if k]
        if keys:
            rows.append((" / ".join(keys), action.text().replace("&", "").rstrip(".…")))
    return _pair(rows)


def _pair(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    nexts = {what.removeprefix("Next ") for _, what in rows if what.startswith("Next ")}
    previous = {what.removeprefix("Previous "): keys for keys, what in rows
                if what.startswith("Previous ") and what.removeprefix("Previous ") in nexts}
    out = []
    for keys, what in rows:
        rest = what.removeprefix("Next ")
        if what.startswith("Next ") and rest in previous:
            out.append((f"{keys}  ·  {previous[rest]}", f"Next / previous {rest}"))
        elif not (what.startswith("Previous ") and what.removeprefix("Previous ") in previous):
            out.append((keys, what))
    return out
