"""Generated text at the cursor: token boundaries, the cursor's token, markers and argument spans.

Static colouring (alternating token shades, colour by what the parser made of
each character: markup, argument text, content, reasoning) is applied once per
document by a syntax highlighter reading
:class:`callscope.engine.inspector.text_spans.TextSpans`, whose kinds come from the
parse events, never from a pattern over the text. What moves with the cursor
(the highlighted token, the dimmed future, the text the parser holds back,
the span of a picked chunk) is extra selections, so a cursor move never
re-lays out the text; :attr:`GeneratedTextView.held_label` says what is held and why.
"""

from __future__ import annotations

import bisect
import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QSyntaxHighlighter, QTextCharFormat, QTextCursor, QTextOption
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit, QWidget

from callscope.engine.inspector.text_spans import ARGUMENTS, TextSpans
from callscope.models.session import InspectorSession
from callscope.ui import theme


class TokenHighlighter(QSyntaxHighlighter):
    def __init__(self, document) -> None:
        super().__init__(document)
        self.spans: TextSpans | None = None
        self._formats: dict[tuple[str, int | None, int], QTextCharFormat] = {}

    def forget_formats(self) -> None:
        """The theme changed: build the formats again from its colours."""
        self._formats.clear()

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

    def highlightBlock(self, text: str) -> None:
        spans = self.spans
        if spans is None or not text:
            return
        block = self.currentBlock()
        block_start = block.position()  # Qt positions are UTF-16 units: use the spans' UTF-16 boundaries
        block_end = block_start + block.length() - 1
        ends = spans.ends16
        position = max(1, bisect.bisect_right(ends, block_start))
        while position < len(ends):
            start = ends[position - 1]
            if start >= block_end:
                break
            end = ends[position]
            if end > start:
                shade = position % 2
                pieces = spans.pieces(position)
                if len(pieces) == 1:
                    ranges = [(start, end, pieces[0][2], pieces[0][3])]
                else:  # a marker shares the token with other text: colour each part as what it is
                    ranges = [(spans.utf16_offset(a), spans.utf16_offset(b), kind, call) for a, b, kind, call in pieces]
                for lo16, hi16, kind, call in ranges:
                    lo = max(lo16, block_start) - block_start
                    hi = min(hi16, block_end) - block_start
                    if hi > lo:
                        self.setFormat(lo, hi - lo, self._format(kind, call, shade))
            position += 1


#: A line longer than this is wrapped anywhere, not at word boundaries: Qt looks for a word boundary in a
#: long line without one in quadratic time (a 1 MiB line of one token repeated took over two minutes).
LONG_LINE = 4096
#: While a run is live, past this many characters the pane keeps only the last LIVE_TAIL_CHARS.
LIVE_TRIM_AT = 10000
LIVE_TAIL_CHARS = 5000


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
        self._offset = 0
        self._future = QTextCharFormat()
        self._current = QTextCharFormat()
        self._pick = QTextCharFormat()
        self._held = QTextCharFormat()
        self._held.setUnderlineStyle(QTextCharFormat.UnderlineStyle.DotLine)
        self._style()
        #: One line under the text: what the parser holds back at the cursor, and why (the window places it).
        self.held_label = QLabel("")
        self.held_label.setObjectName("Caption")
        self.held_label.setWordWrap(True)
        self.held_label.setTextFormat(Qt.TextFormat.RichText)
        self.held_label.hide()
        self.held: tuple[int, int] | None = None  # character range held at the cursor
        self.placeholder = "No generated text: this source carries parses, not text."
        session.analysisChanged.connect(self.rebuild)
        session.cursorChanged.connect(self.show_cursor)
        session.grew.connect(self.append_text)
        session.chunkPicked.connect(self.show_chunk)

    def _style(self) -> None:
        """The cursor-moved formats, from the theme (again after a switch)."""
        self._future.setForeground(QColor(theme.FAINT))
        self._future.setBackground(QColor(theme.PANEL))
        self._current.setBackground(QColor(theme.CURSOR))
        self._current.setForeground(QColor(theme.CURRENT_TOKEN_TEXT))
        self._pick.setBackground(QColor(theme.PICK_BG))
        self._held.setUnderlineColor(QColor(theme.WARN))
        self._held.setBackground(theme.qcolor(theme.WARN, 40))

    def restyle(self) -> None:
        """The theme changed: new formats, text re-highlighted."""
        self._style()
        self.highlighter.forget_formats()
        self.rebuild()
        if self.session.state is not None:
            self.show_cursor(self.session.state.cursor)

    def rebuild(self) -> None:
        state = self.session.state
        self._picked = None
        # While a run grows its last paragraph, re-highlighting it on every append is O(text) per frame:
        # token shading is applied once the run has ended (the finished analysis rebuilds this pane).
        self.highlighter.spans = state.spans if state is not None and not state.live else None
        text = state.spans.text if state is not None else ""
        self.setPlaceholderText(self.placeholder if state is not None and not state.spans.has_text and not state.live else "")
        self._offset = 0  # in Qt text positions (UTF-16 units), like everything this pane hands Qt
        if state is not None and state.live and len(text) > LIVE_TRIM_AT:
            start = len(text) - LIVE_TAIL_CHARS
            self._offset = state.spans.utf16_offset(start)
            text = text[start:]
        self._wrap_for(text)
        self.setPlainText(text)
        self._cache_layouts(self.document().firstBlock())

    def _wrap_for(self, text: str) -> None:
        """Wrap at word boundaries, unless a line is too long for that (:data:`LONG_LINE`): then anywhere."""
        mode = QTextOption.WrapMode.WrapAnywhere if _longest_line(text) > LONG_LINE else QTextOption.WrapMode.WordWrap
        if self.wordWrapMode() != mode:
            self.setWordWrapMode(mode)

    def append_text(self, text: str) -> None:
        """A live run grew: append, and keep only the tail once the text is long.

        Every append re-lays out the paragraph it lands in; a tool call is often one
        very long line, so while a run is live the pane holds its last
        ``LIVE_TAIL_CHARS`` characters (the whole text returns when the run ends).
        """
        if not text:
            return
        last = self.document().lastBlock()
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        length = self.document().characterCount() - 1
        if length > LIVE_TRIM_AT:
            cut = length - LIVE_TAIL_CHARS
            cursor.setPosition(0)
            cursor.setPosition(cut, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            self._offset += cut
            last = self.document().firstBlock()
        if self.wordWrapMode() != QTextOption.WrapMode.WrapAnywhere and self.document().lastBlock().length() > LONG_LINE:
            self.setWordWrapMode(QTextOption.WrapMode.WrapAnywhere)  # a live call grows one long line
        self._cache_layouts(last)

    @property
    def shown_from(self) -> int:
        """Character offset (in the whole generated text) where this pane's text begins."""
        state = self.session.state
        return state.spans.char_offset(self._offset) if state is not None else 0

    def shown_text(self) -> str:
        return self.toPlainText()

    @staticmethod
    def _cache_layouts(block) -> None:
        """Keep each block's shaped glyphs after painting.

        By default a block layout throws its shaping away once drawn; the next
        selection change then re-shapes the whole paragraph, and a generated tool
        call is often one 80 KB line (7 ms per cursor move on a 20,000-token trace).
        """
        while block.isValid():
            block.layout().setCacheEnabled(True)
            block = block.next()

    def show_cursor(self, index: int) -> None:
        state = self.session.state
        if state is None:
            return
        length = self.document().characterCount() - 1
        off = self._offset
        token_start, token_end = state.spans.span16(index)
        start, end = max(0, token_start - off), max(0, token_end - off)
        cut = max(0, min(state.spans.cut16(index) - off, length))
        # Inside an edit block QTextCursor skips computing its x position, which on a long
        # generated line (one 80 KB JSON argument, 20,000 token formats) costs a millisecond each.
        guard = QTextCursor(self.document())
        guard.beginEditBlock()
        try:
            selections = []
            if cut < length:
                selections.append(self._selection(cut, length, self._future))
            if self._picked is not None:
                picked = state.spans.utf16_offset(self._picked[0]), state.spans.utf16_offset(self._picked[1])
                lo, hi = max(0, picked[0] - off), max(0, min(picked[1] - off, length))
                if hi > lo:
                    selections.append(self._selection(lo, hi, self._pick))
            held = state.held_text(index)
            self.held = (held.start, held.end) if held is not None else None
            if held is not None:
                lo = max(0, min(state.spans.utf16_offset(held.start) - off, length))
                hi = max(0, min(state.spans.utf16_offset(held.end) - off, length))
                if hi > lo:
                    selections.append(self._selection(lo, hi, self._held))
            if end > start:
                selections.append(self._selection(min(start, length), min(end, length), self._current))
        finally:
            guard.endEditBlock()
        self.setExtraSelections(selections)
        self._say_held(held)
        if end > start or index == 0:
            self._scroll_to(start)

    def _say_held(self, held) -> None:
        if held is None:
            self.held_label.hide()
            return
        n = len(held.text)
        self.held_label.setText(f'<span style="color:{theme.WARN}">held ({n:,} char{"s" if n != 1 else ""})</span> '
                                f"{html.escape(repr(held.shown))}: {html.escape(held.reason)}")
        self.held_label.show()

    def show_chunk(self, number: int) -> None:
        state = self.session.state
        if state is None:
            return
        self._picked = state.spans.chunk_span(state.analysis.chunks, number)
        self.show_cursor(state.cursor)
        self._scroll_to(max(0, state.spans.utf16_offset(self._picked[0]) - self._offset))

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

    def _line_of(self, offset: int) -> int | None:
        """Visual line number (what the scroll bar counts) holding character ``offset``."""
        block = self.document().findBlock(max(0, min(offset, self.document().characterCount() - 1)))
        if not block.isValid():
            return None
        layout = block.layout()
        if layout is None or layout.lineCount() == 0:
            return None
        line = layout.lineForTextPosition(offset - block.position())
        return block.firstLineNumber() + (line.lineNumber() if line.isValid() else 0)

    def _scroll_to(self, offset: int) -> None:
        """Scroll so ``offset`` is visible (centred when it was not), without laying out glyph positions."""
        line = self._line_of(offset)
        bar = self.verticalScrollBar()
        if line is None:
            return
        first = bar.value()
        visible = max(1, self.viewport().height() // max(1, self.fontMetrics().lineSpacing()))
        if first <= line < first + visible - 1:
            return
        bar.setValue(max(0, line - visible // 2))

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        state = self.session.state
        if state is None or self.textCursor().hasSelection():
            return
        offset = self.cursorForPosition(event.position().toPoint()).position() + self._offset
        position = state.spans.position_at_char(state.spans.char_offset(offset))
        state.set_cursor(position)
        self.tokenClicked.emit(position)


def _longest_line(text: str) -> int:
    """The length of the longest line of ``text`` (without splitting a large text into a list)."""
    longest, start = 0, 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            return max(longest, len(text) - start)
        longest = max(longest, end - start)
        start = end + 1
