"""What panes are built from: the card every pane sits in (a title, a live subtitle, optional header
widgets, then the body), an eliding label, and the row table every tabular pane shows."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)


class Pane(QFrame):
    def __init__(self, title: str, body: QWidget | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Pane")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 8)
        layout.setSpacing(5)
        header = QHBoxLayout()
        header.setSpacing(8)
        self.title = QLabel(title)
        self.title.setObjectName("PaneTitle")
        self.subtitle = ElidedLabel("")
        self.subtitle.setObjectName("PaneSubtitle")
        header.addWidget(self.title)
        header.addWidget(self.subtitle, 1)
        self.header = header
        layout.addLayout(header)
        self.body_layout = layout
        if body is not None:
            layout.addWidget(body, 1)

    def add_header_widget(self, widget: QWidget) -> None:
        self.header.addWidget(widget)

    def set_body(self, widget: QWidget) -> None:
        self.body_layout.addWidget(widget, 1)

    def add_footer(self, widget: QWidget) -> None:
        """A line under the body, as tall as it needs (the body keeps the rest)."""
        self.body_layout.addWidget(widget, 0)

    def set_subtitle(self, text: str) -> None:
        self.subtitle.setText(text)


class ElidedLabel(QLabel):
    """A label that shrinks by eliding its text (…) instead of widening the window."""

    def __init__(self, text: str = "", minimum: int = 40, parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self._minimum = minimum
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(hint.width(), self._minimum), hint.height())

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def paintEvent(self, event) -> None:
        rect = self.contentsRect()
        metrics = self.fontMetrics()
        text = self.text()
        if metrics.horizontalAdvance(text) <= rect.width():
            super().paintEvent(event)
            return
        QFrame.paintEvent(self, event)  # stylesheet background and border
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        painter.setFont(self.font())
        elided = metrics.elidedText(text, Qt.TextElideMode.ElideRight, rect.width())
        painter.drawText(rect, int(self.alignment()), elided)
        painter.end()


def row_table(model: QAbstractItemModel, alternating: bool = True) -> QTableView:
    """A table of whole rows, one selected at a time: the look every tabular pane shares.

    No row numbers, 22 px rows, cells on one line, the last column filling the width;
    each pane adds its own column sizing and font.
    """
    table = QTableView()
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.verticalHeader().hide()
    table.verticalHeader().setDefaultSectionSize(22)
    table.setAlternatingRowColors(alternating)
    table.setWordWrap(False)
    header = table.horizontalHeader()
    header.setStretchLastSection(True)
    header.setHighlightSections(False)
    return table
