"""Emitted deltas: every chunk, those the client has by the cursor in full colour, the raw JSON of the
selected one, arguments so far per call.

For a capture the JSON is callscope's normalised chunk; what the server sent is
the SSE event it came from, shown as bytes beside its parsed form ("Event
bytes", :mod:`callscope.panes.bytes_view`).

Selecting a chunk moves the cursor to its step and highlights, in the text
pane, the tokens that produced it; the table does not move under the mouse
(no row is removed: the ones after the cursor are dimmed). Otherwise the
table follows the cursor, keeping the newest chunk sent by then in view.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from callscope.engine.inspector.event_bytes import event_of_chunk
from callscope.models.chunk_model import ChunkTableModel
from callscope.models.session import InspectorSession
from callscope.panes.bytes_view import BytesView
from callscope.panes.pane import row_table
from callscope.ui import theme

RAW_TITLE = "Raw chunk JSON"
#: A capture's chunk JSON is rebuilt by callscope: the tab says so (the bytes tab has what was sent).
NORMALISED_TITLE = "Chunk JSON (normalised)"
BYTES_TITLE = "Event bytes"


class ChunksView(QWidget):
    def __init__(self, session: InspectorSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.model = ChunkTableModel(self)
        self.table = row_table(self.model)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.setFont(theme.mono_font(9))
        header = self.table.horizontalHeader()
        for column, width in enumerate((60, 82, 50, 92)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, width)
        self.raw = QPlainTextEdit()
        self.raw.setReadOnly(True)
        self.raw.setFont(theme.mono_font(9))
        self.raw.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.raw.setPlaceholderText("Select a chunk to see the chat.completion.chunk JSON a client received.")
        self.accumulated = QTextBrowser()
        self.accumulated.setFont(theme.mono_font(9))
        details = QTabWidget()
        details.setDocumentMode(True)
        details.addTab(self.raw, RAW_TITLE)
        details.addTab(self.accumulated, "Arguments so far")
        self.bytes = BytesView()  # a capture's events as received: a tab of its own, shown for captures only
        self.details = details
        self._accumulated_count = 0
        self._bytes_number: int | None = None  # the chunk whose event the bytes tab should show
        self.bytes.on_show = lambda: self._bytes_number is not None and self._show_bytes(self._bytes_number)
        details.currentChanged.connect(self._detail_shown)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(details)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(split)
        self._picking = False
        self._raw_shown: tuple[int, int] | None = None
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)
        # a shrinking pane (window resized, splitter dragged) must not hide the cursor's newest row
        self.table.verticalScrollBar().rangeChanged.connect(self._keep_newest_row)
        self._pinned = False  # the user picked a row: the table stays where it is until the cursor moves otherwise
        # A live stream's new rows go in on a turn after the other panes' cursor redraw (InspectorSession.later):
        # appending rows, scrolling and repainting the table was a third of that turn.
        self._live_rows = session.later(self._show_at_cursor)
        session.analysisChanged.connect(self.rebuild)
        session.cursorChanged.connect(self.show_cursor)

    def rebuild(self) -> None:
        state = self.session.state
        sent = state.chunk_index.count_until(state.cursor_step) if state else 0
        self.model.set_chunks(state.chunk_index if state else None, sent)
        self._raw_shown = None
        self._pinned = False
        self.raw.clear()
        self.accumulated.clear()
        self._show_bytes_tab(state is not None and state.analysis.source.kind == "capture")
        self._follow()

    def _show_bytes_tab(self, capture: bool) -> None:
        """A capture gets the Event bytes tab (first), and its JSON tab says the chunk is normalised."""
        at = self.details.indexOf(self.bytes)
        self.details.setTabText(self.details.indexOf(self.raw), NORMALISED_TITLE if capture else RAW_TITLE)
        if capture and at < 0:
            self.details.insertTab(0, self.bytes, BYTES_TITLE)
            self.details.setCurrentIndex(0)
        elif not capture and at >= 0:
            self.details.removeTab(at)
        self._bytes_number = None
        self.bytes.show_event(None)

    def _detail_shown(self, _index: int) -> None:
        self._show_accumulated(self._accumulated_count)
        if self._bytes_number is not None:
            self._show_bytes(self._bytes_number)

    def show_cursor(self, index: int) -> None:
        state = self.session.state
        if state is None:
            return
        if state.live and index >= state.last and not self._picking:
            self._live_rows.request()  # following a live stream's end: on a turn of its own
            return
        self._live_rows.cancel()
        self._show_at_cursor()

    def _show_at_cursor(self) -> None:
        state = self.session.state
        if state is None:
            return
        index = state.cursor
        count = state.chunk_index.count_until(state.timebase.step(index))
        self.model.sync_rows()
        self.model.set_sent(count)
        if not self._picking:
            self._pinned = False
            self._follow()
        current = self.table.currentIndex()
        if not self._picking and count and not (current.isValid() and current.row() < count):
            self._show_raw(count - 1)  # nothing picked: the newest chunk the client has
        self._show_accumulated(count)

    def _follow(self) -> None:
        """Keep the newest chunk the client has in view (scrolling only when it is out of sight)."""
        if not self.model.sent or self._pinned:
            return
        index = self.model.index(self.model.sent - 1, 0)
        rect = self.table.visualRect(index)
        if not (rect.isValid() and self.table.viewport().rect().contains(rect)):
            self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)  # with what led to it above

    def _keep_newest_row(self, _low: int, _high: int) -> None:
        if not self._picking:
            self._follow()

    def _show_raw(self, number: int) -> None:
        state = self.session.state
        if state is not None and self._raw_shown != (id(state), number):
            self._raw_shown = (id(state), number)
            self.raw.setPlainText(state.chunk_index.raw_json(number))
            if self.details.indexOf(self.bytes) >= 0:
                self._show_bytes(number)

    def _show_bytes(self, number: int) -> None:
        """The event chunk ``number`` came from, in the bytes tab (read when the tab is shown)."""
        self._bytes_number = number
        state = self.session.state
        if state is None or not self.bytes.isVisible():
            return
        event = event_of_chunk(state.analysis, number)
        if self.bytes.current is None or event is None or (event.step, event.data) != (self.bytes.current.step, self.bytes.current.data):
            self.bytes.show_event(event)

    def _show_accumulated(self, count: int) -> None:
        if not self.accumulated.isVisible():
            self._accumulated_count = count  # drawn when its tab is shown
            return
        state = self.session.state
        assert state is not None
        calls = state.chunk_index.call_arguments_until(count)
        if not calls:
            self.accumulated.setHtml(f'<span style="color:{theme.DIM}">No tool-call delta has gone out yet.</span>')
            return
        parts = []
        for index, call_id, name, arguments in calls:
            shown = arguments if len(arguments) <= 4000 else "…" + arguments[-4000:]
            parts.append(
                f'<p style="color:{theme.DIM};font-weight:600">[{index}] <span style="color:{theme.call_color(index)}">'
                f"{html.escape(name)}</span> · {html.escape(call_id)} · {len(arguments):,} chars</p>"
                f'<pre style="color:{theme.call_color(index)};white-space:pre-wrap">{html.escape(shown)}</pre>'
            )
        self.accumulated.setHtml("".join(parts))

    def _row_changed(self, current, _previous) -> None:
        if not current.isValid() or self.session.state is None:
            return
        number = current.row()
        self._show_raw(number)
        self._picking = True
        self._pinned = True
        try:
            self.session.pick_chunk(number)
        finally:
            self._picking = False

    def select_chunk(self, number: int) -> None:
        """Select row ``number`` (tests and keyboard): same as clicking it."""
        index = self.model.index(number, 0)
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows
        )
