"""The Proxy pane: the proxy's (or the server's) turns as they happen, one line each; activating one opens it.

Thin: the rows are :class:`~callscope.engine.inspector.proxy_turns.TurnRow` from the
:class:`~callscope.live.proxy.ProxyController`; the line is the one
``callscope proxy`` prints. A turn still streaming is dimmed, one that broke a
rule or failed is marked.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout, QWidget

from callscope.engine.inspector.proxy_turns import TurnRow
from callscope.live.proxy import ProxyController
from callscope.ui import theme

NUMBER_ROLE = Qt.ItemDataRole.UserRole


class ProxyView(QWidget):
    def __init__(self, controller: ProxyController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.header = QLabel(f"No {controller.noun}")
        self.header.setWordWrap(True)
        self.header.setObjectName("Caption")
        self.stop_button = QPushButton(f"Stop {controller.noun}")
        self.stop_button.setObjectName("Danger")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(controller.stop)
        self.list = QListWidget()
        self.list.setFont(theme.mono_font(9))
        self.list.setToolTip("Click (or Enter) to open a turn in the panes; a turn still streaming grows there")
        self.list.itemActivated.connect(self._activated)
        self.list.itemClicked.connect(self._activated)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.stop_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.list, 1)
        controller.turnsChanged.connect(self._changed)
        controller.listening.connect(self._listening)
        controller.stopped.connect(self._stopped)

    def _listening(self, status: str) -> None:
        self.header.setText(status)
        self.stop_button.setEnabled(True)
        self.stop_button.setText(f"Stop {self.controller.noun}" if self.controller.server is not None else "Stop watching")
        self.list.clear()
        for row in self.controller.turns.rows:
            self._put(row)

    def _stopped(self) -> None:
        self.header.setText(self.controller.status or "stopped")
        self.stop_button.setEnabled(False)

    def _changed(self, number: int) -> None:
        row = self.controller.turns.get(number)
        if row is not None:
            self._put(row)

    def _put(self, row: TurnRow) -> None:
        item = self.item(row.number)
        if item is None:
            item = QListWidgetItem()
            item.setData(NUMBER_ROLE, row.number)
            at = self.controller.turns.rows.index(row) if row in self.controller.turns.rows else self.list.count()
            self.list.insertItem(min(at, self.list.count()), item)
        item.setText(row.summary)
        item.setToolTip(row.summary + (f"\n{row.file}" if row.file is not None else ""))
        tone = theme.DIM if not row.done else theme.BAD if row.failed else theme.OK if row.streaming else theme.TEXT
        item.setForeground(QColor(tone))
        if not row.openable:
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsSelectable)

    def item(self, number: int) -> QListWidgetItem | None:
        for i in range(self.list.count() - 1, -1, -1):
            item = self.list.item(i)
            if item.data(NUMBER_ROLE) == number:
                return item
        return None

    def summaries(self) -> list[str]:
        return [self.list.item(i).text() for i in range(self.list.count())]

    def _activated(self, item: QListWidgetItem) -> None:
        self.controller.open_turn(int(item.data(NUMBER_ROLE)))
