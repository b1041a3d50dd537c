"""A captured chunk's SSE event as bytes: the parsed fields beside a hex dump, linked both ways (as Wireshark does).

Picking a field in the parsed form highlights its bytes in the dump (hex and
text columns); clicking a byte in the dump picks the innermost field holding
it. The spans and the dump come from :mod:`callscope.engine.inspector.event_bytes`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from callscope.engine.inspector.event_bytes import (
    ROW_BYTES,
    SHOWN_BYTES,
    EventBytes,
    ascii_column,
    field_at,
    hex_column,
    hex_dump,
    offset_at,
    row_chars,
)
from callscope.ui import theme

FIELD_ROLE = Qt.ItemDataRole.UserRole


class BytesView(QWidget):
    """The parsed event on the left, its bytes on the right; a pick on either side shows on both."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.current: EventBytes | None = None
        self.caption = QLabel("")
        self.caption.setObjectName("Caption")
        self.tree = QTreeWidget()
        self.tree.setHeaderHidden(True)
        self.tree.setFont(theme.mono_font(9))
        self.tree.setToolTip("Pick a field to see the bytes it was read from")
        self.dump = QPlainTextEdit()
        self.dump.setReadOnly(True)
        self.dump.setFont(theme.mono_font(9))
        self.dump.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.dump.setPlaceholderText("Select a chunk to see the bytes of the event the server sent.")
        self.dump.setToolTip("Click a byte to find the field it belongs to")
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.tree)
        split.addWidget(self.dump)
        split.setSizes([220, 420])
        split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(self.caption)
        layout.addWidget(split, 1)
        self._items: list[QTreeWidgetItem] = []
        self._linking = False
        self.row_bytes = ROW_BYTES  # bytes per dump row: 16, or 8 when the dump has no room for 16
        self.highlighted: tuple[int, int] | None = None
        #: Called when the view comes on screen (its owner fills it then, not while it is hidden).
        self.on_show: Callable[[], None] | None = None
        self.tree.currentItemChanged.connect(self._field_picked)
        self.dump.cursorPositionChanged.connect(self._byte_picked)

    # ------------------------------------------------------------ content

    def show_event(self, event: EventBytes | None) -> None:
        self.current = event
        self.tree.clear()
        self._items = []
        self._linking = True
        try:
            if event is None:
                self.caption.setText("")
                self.dump.clear()
                return
            more = f" (the first {SHOWN_BYTES // 1024} KiB shown)" if len(event.data) > SHOWN_BYTES else ""
            self.caption.setText(f"event {event.step}: {len(event.data):,} bytes as received{more}")
            self.row_bytes = self._row_width()
            self.dump.setPlainText(hex_dump(event.shown, self.row_bytes))
            self._build_tree(event)
        finally:
            self._linking = False
        self.highlight(None)

    def _build_tree(self, event: EventBytes) -> None:
        parents: list[QTreeWidgetItem] = []
        for index, field in enumerate(event.fields):
            del parents[field.depth:]
            parent = parents[-1] if parents else None
            item = QTreeWidgetItem([field.label])
            item.setData(0, FIELD_ROLE, index)
            item.setToolTip(0, f"{field.path}: bytes {field.start:,}-{field.end - 1:,}")
            if parent is None:
                self.tree.addTopLevelItem(item)
            else:
                parent.addChild(item)
            parents.append(item)
            self._items.append(item)
        self.tree.expandToDepth(3)

    def _row_width(self) -> int:
        """16 bytes a row when the dump shows a whole row of them, else 8 (a narrow pane)."""
        room = self.dump.viewport().width() // max(1, self.dump.fontMetrics().horizontalAdvance("0"))
        return ROW_BYTES if room >= row_chars(ROW_BYTES) or not self.dump.isVisible() else ROW_BYTES // 2

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.on_show is not None:
            self.on_show()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.current is not None and self._row_width() != self.row_bytes:
            span = self.highlighted
            self._linking = True
            try:
                self.row_bytes = self._row_width()
                self.dump.setPlainText(hex_dump(self.current.shown, self.row_bytes))
            finally:
                self._linking = False
            self.highlight(span)

    # ------------------------------------------------------------ linking

    def pick_field(self, index: int) -> None:
        """Select field ``index`` in the parsed form (tests, and a byte clicked in the dump)."""
        if 0 <= index < len(self._items):
            self.tree.setCurrentItem(self._items[index])

    def pick_byte(self, offset: int) -> None:
        """Put the dump's cursor on byte ``offset`` (as a click there does)."""
        row, in_row = divmod(offset, self.row_bytes)
        block = self.dump.document().findBlockByNumber(row)
        if block.isValid():
            cursor = QTextCursor(block)
            cursor.setPosition(block.position() + hex_column(in_row, self.row_bytes))
            self.dump.setTextCursor(cursor)

    def selected_field(self) -> int | None:
        item = self.tree.currentItem()
        return None if item is None else int(item.data(0, FIELD_ROLE))

    def _field_picked(self, current: QTreeWidgetItem | None, _previous) -> None:
        if self.current is None or current is None:
            self.highlight(None)
            return
        field = self.current.fields[int(current.data(0, FIELD_ROLE))]
        self.highlight((field.start, field.end))

    def _byte_picked(self) -> None:
        if self._linking or self.current is None:
            return
        cursor = self.dump.textCursor()
        offset = offset_at(cursor.blockNumber(), cursor.positionInBlock(), len(self.current.shown), self.row_bytes)
        if offset is None:
            return
        index = field_at(self.current.fields, offset)
        if index is not None:
            self._linking = True
            try:
                self.pick_field(index)
            finally:
                self._linking = False

    def highlight(self, span: tuple[int, int] | None) -> None:
        """Mark bytes ``[start, end)`` in both columns of the dump (None: clear)."""
        self.highlighted = span
        selections: list[QTextEdit.ExtraSelection] = []
        if span is not None and self.current is not None:
            start, end = span[0], min(span[1], len(self.current.shown))
            fmt = QTextCharFormat()
            fmt.setBackground(QColor(theme.qcolor(theme.ACCENT, 110)))
            fmt.setForeground(QColor(theme.TEXT))
            document = self.dump.document()
            w = self.row_bytes
            for row in range(start // w, (end - 1) // w + 1 if end > start else 0):
                block = document.findBlockByNumber(row)
                first, last = max(start, row * w) % w, (min(end, (row + 1) * w) - 1) % w
                for begin, stop in ((hex_column(first, w), hex_column(last, w) + 2),
                                    (ascii_column(first, w), ascii_column(last, w) + 1)):
                    cursor = QTextCursor(block)
                    cursor.setPosition(block.position() + begin)
                    cursor.setPosition(block.position() + stop, QTextCursor.MoveMode.KeepAnchor)
                    selection = QTextEdit.ExtraSelection()
                    selection.cursor, selection.format = cursor, fmt
                    selections.append(selection)
            if not self._linking and selections:
                self.dump.blockSignals(True)
                try:
                    self.dump.setTextCursor(QTextCursor(document.findBlockByNumber(start // self.row_bytes)))
                    self.dump.ensureCursorVisible()
                finally:
                    self.dump.blockSignals(False)
        self.dump.setExtraSelections(selections)

    def highlighted_text(self) -> list[str]:
        """The dump text each highlight covers (tests read what a user sees marked)."""
        return [s.cursor.selectedText() for s in self.dump.extraSelections()]
