"""The card every pane sits in: a title, a live subtitle, optional header widgets, then the body."""

from __future__ import annotations

from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QVBoxLayout, QWidget


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
        self.subtitle = QLabel("")
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

    def set_subtitle(self, text: str) -> None:
        self.subtitle.setText(text)
