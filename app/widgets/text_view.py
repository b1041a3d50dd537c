"""Generated text at the cursor: token boundaries, the cursor's token, markers and argument spans.

Static colouring (alternating token shades, colour by what each token
produced) is applied once per document by a syntax highlighter reading
:class:`engine.inspector.text_spans.TextSpans`; what moves with the cursor (the
highlighted token, the dimmed future, the span of a picked chunk) is three
extra selections, so a cursor move never re-lays out the text.
"""

from __future__ import annotations

import bisect

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QSyntaxHighlighter, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from app.models.session import InspectorSession
from app.widgets import theme
from engine.inspector.text_spans import ARGUMENTS, TextSpans


class TokenHighlighter(QSyntaxHighlighter):
    def __init__(self, document) -> None:
        super().__init__(document)
        self.spans: TextSpans | None = None
        self._formats: dict[tuple[str, int | None, int], QTextCharFormat] = {}

    def _format(self, kind: str, call: int | None, shade: int) -> QTextCharFormat:
        key = (kind, call if kind == ARGUMENTS else None, shade)
        fmt = self._formats.get(key)
        if fmt is None:
            fmt = QTextCharFormat()
            color = theme.call_color(call) if kind == ARGUMENTS else theme.SPAN_COLORS.get(kind, theme.TEXT)
            fmt.setForeground(QColor(color))
            fmt.setBackground(QColor(theme.TOKEN_SHADES[shade]))
            if kind == "call":
                fmt.setFontWeight(700)
            if kind == "reasoning":
                fmt.setFontItalic(True)
            self._formats[key] = fmt
        return fmt

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt override
        spans = self.spans
        if spans is None or not text:
            return
        block_start = self.currentBlock().position()
        block_end = block_start + len(text)
        ends = spans.ends
        position = max(1, bisect.bisect_right(ends, block_start))
        while position < len(ends):
            start = ends[position - 1]
            if start >= block_end:
                break
            end = ends[position]
            if end > start:
                lo = max(start, block_start) - block_start
                hi = min(end, block_end) - block_start
                self.setFormat(lo, hi - lo, self._format(spans.display[position], spans.call_index[position], position % 2))
            position += 1


class GeneratedTextView(QPlainTextEdit):
    #: The user clicked a character: move the cursor to the token holding it.
    tokenClicked = Signal(int)

    def __init__(self, session: InspectorSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.setReadOnly(True)
        self.setFont(theme.mono_font(10))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.setCenterOnScroll(False)
        self.highlighter = TokenHighlighter(self.document())
        self._picked: tuple[int, int] | None = None
        self._future = QTextCharFormat()
        self._future.setForeground(QColor(theme.FAINT))
        self._future.setBackground(QColor(theme.PANEL))
        self._future.setFontWeight(400)
        self._current = QTextCharFormat()
        self._current.setBackground(QColor(theme.CURSOR))
        self._current.setForeground(QColor("#111111"))
        self._pick = QTextCharFormat()
        self._pick.setBackground(QColor("#244a7a"))
        self.placeholder = "No generated text: this source carries parses, not text."
        session.analysisChanged.connect(self.rebuild)
        session.cursorChanged.connect(self.show_cursor)
        session.grew.connect(self.append_text)
        session.chunkPicked.connect(self.show_chunk)

    def rebuild(self) -> None:
        state = self.session.state
        self._picked = None
        self.highlighter.spans = state.spans if state is not None else None
        text = state.spans.text if state is not None else ""
        self.setPlaceholderText(self.placeholder if state is not None and not state.spans.has_text and not state.live else "")
        self.setPlainText(text)

    def append_text(self, text: str) -> None:
        if not text:
            return
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)

    def show_cursor(self, index: int) -> None:
        state = self.session.state
        if state is None:
            return
        length = self.document().characterCount() - 1
        token = state.spans.span(index)
        cut = min(state.spans.cut(index), length)
        selections = []
        if cut < length:
            selections.append(self._selection(cut, length, self._future))
        if self._picked is not None:
            selections.append(self._selection(self._picked[0], min(self._picked[1], length), self._pick))
        if token.end > token.start:
            selections.append(self._selection(token.start, min(token.end, length), self._current))
        self.setExtraSelections(selections)
        if token.end > token.start or index == 0:
            self._scroll_to(token.start)

    def show_chunk(self, number: int) -> None:
        state = self.session.state
        if state is None:
            return
        self._picked = state.spans.chunk_span(state.analysis.chunks, number)
        self.show_cursor(state.cursor)
        self._scroll_to(self._picked[0])

    def picked_span(self) -> tuple[int, int] | None:
        return self._picked

    def _selection(self, start: int, end: int, fmt: QTextCharFormat) -> QTextEdit.ExtraSelection:
        selection = QTextEdit.ExtraSelection()
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor
        selection.format = fmt
        return selection

    def _scroll_to(self, offset: int) -> None:
        cursor = QTextCursor(self.document())
        cursor.setPosition(max(0, min(offset, self.document().characterCount() - 1)))
        rect = self.cursorRect(cursor)
        viewport = self.viewport().rect()
        if rect.top() < 0 or rect.bottom() > viewport.bottom():
            self.setTextCursor(cursor)
            self.centerCursor()

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().mouseReleaseEvent(event)
        state = self.session.state
        if state is None or self.textCursor().hasSelection():
            return
        offset = self.cursorForPosition(event.position().toPoint()).position()
        position = state.spans.position_at_char(offset)
        state.set_cursor(position)
        self.tokenClicked.emit(position)
