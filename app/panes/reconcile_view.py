"""Reconciliation: the terminal parse against what was streamed, per call, plus every violation.

Each call says whether the wire reconstructs it, with a character diff where
it does not (struck red: only on the wire; green: only in the terminal
parse). Activating a violation (double-click or Enter) jumps to its step.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from callscope.engine.inspector.expected import Expected, expected_for
from callscope.engine.inspector.reconcile import EQUAL, FINAL, CallVerdict, Reconciliation, reconcile
from callscope.models.session import InspectorSession
from callscope.models.table_models import CallVerdictModel, ViolationModel
from callscope.panes.pane import ElidedLabel, row_table
from callscope.ui import theme

DIFF_VIEW_LIMIT = 20000


def clients_html(call: CallVerdict) -> str:
    """Per client profile: what it ended with for this call and whether that is the call the stream meant."""
    if not call.clients:
        return ""
    rows = []
    for c in call.clients:
        tone = theme.OK if c.matches else theme.BAD
        # what it got, for a client that got it wrong (a right one has the call shown above)
        missing = c.id is None and c.name is None and c.arguments is None
        got = "" if c.matches or c.error or missing else \
            f"id {c.id!r} · name {c.name!r} · arguments {_clipped(c.arguments, 60)!r}"
        rows.append(f'<tr><td style="color:{tone};font-weight:600">{"✓" if c.matches else "✗"}</td>'
                    f"<td>{html.escape(c.profile)}</td><td>{html.escape(c.outcome)}</td>"
                    f'<td style="font-family:{theme.MONO_CSS};color:{theme.DIM}">{html.escape(got)}</td></tr>')
    return (f'<div style="color:{theme.DIM};font-size:8.5pt;margin-top:6px">what each client assembled:</div>'
            f'<table cellspacing="0" cellpadding="1">{"".join(rows)}</table>')


def _clipped(text: str | None, limit: int = 120) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[: limit // 2] + " … " + text[-limit // 2 :]


def diff_html(call: CallVerdict) -> str:
    return _diff_html(call) + clients_html(call)


def _diff_html(call: CallVerdict) -> str:
    if call.final is None:
        return f'<span style="color:{theme.BAD}">This call is missing from the terminal parse.</span>'
    if call.reconstructs and call.cut:
        return (
            f'<span style="color:{theme.WARN}">The stream ended while this call was being written: the client has '
            f"what the server parsed ({len(call.streamed):,} chars), but its arguments stop part-way.</span>"
        )
    if call.reconstructs:
        return (
            f'<span style="color:{theme.OK}">The streamed arguments reconstruct the terminal parse byte for byte '
            f"({len(call.streamed):,} chars).</span>"
        )
    out = []
    shown = 0
    for piece in call.diff:
        text = piece.text
        if piece.tag == EQUAL and len(text) > 400:
            text = text[:160] + f" … {len(text) - 320:,} equal chars … " + text[-160:]
        shown += len(text)
        if shown > DIFF_VIEW_LIMIT:
            out.append(f'<span style="color:{theme.DIM}"> … (diff clipped)</span>')
            break
        escaped = html.escape(text)
        if piece.tag == EQUAL:
            out.append(f'<span style="color:{theme.TEXT}">{escaped}</span>')
        elif piece.tag == FINAL:
            out.append(f'<span style="background:{theme.DIFF_ADD_BG};color:{theme.DIFF_ADD}">{escaped}</span>')
        else:
            out.append(f'<span style="background:{theme.DIFF_DEL_BG};color:{theme.DIFF_DEL};text-decoration:line-through">'
                       f"{escaped}</span>")
    legend = (
        f'<div style="color:{theme.DIM};font-size:8.5pt;margin-bottom:4px">call {call.index} {html.escape(call.name)}: '
        f'<span style="background:{theme.DIFF_DEL_BG};color:{theme.DIFF_DEL}">only on the wire</span> '
        f'<span style="background:{theme.DIFF_ADD_BG};color:{theme.DIFF_ADD}">only in the terminal parse</span></div>'
    )
    return legend + f'<div style="font-family:{theme.MONO_CSS};white-space:pre-wrap">{"".join(out)}</div>'


def headline_html(result: Reconciliation, color: str, expected: Expected | None = None) -> str:
    """The verdict line; why the stream ended, what a cut stream held back, and the documented verdict under it."""
    glyph = "■" if result.cut else ("✓" if result.ok else "✗")  # a cut stream neither passes nor fails
    mark = f'<span style="color:{color};font-weight:600">{glyph}</span>&nbsp; '
    if result.end_detail is None:
        out = (mark + html.escape(result.headline)
               + f' <span style="color:{theme.DIM}">(generation ended: {html.escape(result.finish_cause)})</span>')
    else:
        out = (mark + html.escape(result.headline)
               + f'<br><span style="color:{theme.DIM}">finish_reason {html.escape(result.finish_sentence)}</span>')
    if result.held_sentence:
        out += f'<br><span style="color:{theme.WARN}">{html.escape(result.held_sentence)}</span>'
    if expected is not None:  # its description is a line of its own (ReconcileView.about), elided when narrow
        if expected.checked:
            tone = theme.OK if expected.matches else theme.BAD
            out += f'<br><span style="color:{tone}">{html.escape(expected.sentence)}</span>'
    return out


def verdict_color(result: Reconciliation) -> str:
    """Green only for a finished stream that reconstructs with no violation; a cut stream is a warning."""
    if result.cut:
        return theme.WARN
    if result.ok:
        return theme.OK
    return theme.BAD if any(not c.reconstructs for c in result.calls) else theme.WARN


#: The diff box's least height: its legend and a line of arguments (it scrolls).
DIFF_MIN_HEIGHT = 44


class ReconcileView(QWidget):
    def __init__(self, session: InspectorSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.result: Reconciliation | None = None
        self.headline = QLabel("")
        self.headline.setObjectName("Headline")
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.headline.setWordWrap(True)
        # What a library recording demonstrates: one line, elided (the whole text in its tooltip), so a long
        # description never takes the rows of the tables below in a short window.
        self.about = ElidedLabel("", 60)
        self.about.setObjectName("Caption")
        self.about.hide()
        self.calls = CallVerdictModel(self)
        self.calls_table = row_table(self.calls)
        self.diff = QTextBrowser()
        self.diff.setFont(theme.mono_font(9))
        self.violations = ViolationModel(self)
        self.violations_table = row_table(self.violations)
        self.violations_table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.violations_table.setToolTip("Select a violation (click, arrow keys) to jump to its step")
        # One line a violation (the detail elided, whole in its tooltip): a short window still lists several.
        self.violations_table.setWordWrap(False)
        self.violations_table.setTextElideMode(Qt.TextElideMode.ElideRight)
        violations_box = QWidget()
        vbox = QVBoxLayout(violations_box)
        vbox.setContentsMargins(0, 0, 0, 0)
        vbox.setSpacing(2)
        self.violations_caption = QLabel("Violations")
        self.violations_caption.setObjectName("Caption")
        vbox.addWidget(self.violations_caption)
        vbox.addWidget(self.violations_table)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.calls_table)
        split.addWidget(self.diff)
        split.addWidget(violations_box)
        split.setSizes([70, 90, 200])  # the calls table is fitted to its rows; the violations get the most
        for index, stretch in enumerate((0, 1, 3)):
            split.setStretchFactor(index, stretch)
        self.diff.setMinimumHeight(DIFF_MIN_HEIGHT)
        split.setChildrenCollapsible(False)
        self.split = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.headline)
        layout.addWidget(self.about)
        layout.addWidget(split, 1)
        self.calls_table.selectionModel().currentRowChanged.connect(self._call_selected)
        self.violations_table.selectionModel().currentRowChanged.connect(self._violation_selected)
        self.violations_table.activated.connect(self._violation_activated)
        self.violations_table.doubleClicked.connect(self._violation_activated)
        session.analysisChanged.connect(self.rebuild)
        session.grew.connect(self._grew)

    def rebuild(self) -> None:
        state = self.session.state
        if state is None:
            return
        analysis = state.analysis
        self.calls.set_unit(analysis.unit)
        self.violations.set_unit(analysis.unit)
        if analysis.running:
            self.result = None
            self.headline.setText(f'<span style="color:{theme.DIM}">Generating… reconciliation happens at the terminal parse.</span>')
            self.calls.set_rows([])
            self.violations.set_rows(list(analysis.violations))
            self.violations_caption.setText(f"Violations ({len(analysis.violations)})")
            self.diff.clear()
            return
        self.result = reconcile(analysis, state.held_text(state.last))
        expected = expected_for(analysis)
        self.headline.setText(headline_html(self.result, verdict_color(self.result), expected))
        self.about.setText(expected.description if expected is not None else "")
        self.about.setVisible(bool(self.about.text()))
        self.calls.set_rows(self.result.calls)
        self.violations.set_rows(self.result.violations)
        self.violations_caption.setText(f"Violations ({len(self.result.violations)})")
        self._fit_calls_table()
        for column in range(3):  # rule, step, call: as wide as they need; the detail column takes the rest
            self.violations_table.resizeColumnToContents(column)
        if self.result.calls:
            self.calls_table.selectRow(0)
        else:
            self.diff.setHtml(f'<span style="color:{theme.DIM}">No tool call in this stream.</span>')

    def _fit_calls_table(self) -> None:
        """Columns to their contents, and rows never hidden behind the horizontal scroll bar.

        The table's minimum height is its header, its rows (up to four) and the
        scroll bar when the columns are wider than the pane.
        """
        table = self.calls_table
        table.resizeColumnsToContents()
        rows = min(4, max(1, self.calls.rowCount()))
        height = table.horizontalHeader().sizeHint().height() + rows * table.verticalHeader().defaultSectionSize()
        height += table.horizontalScrollBar().sizeHint().height() + 2 * table.frameWidth() + 2
        table.setMinimumHeight(height)

    def _grew(self, _text: str) -> None:
        state = self.session.state
        if state is not None and len(state.analysis.violations) != len(self.violations.rows):
            self.violations.set_rows(list(state.analysis.violations))
            self.violations_caption.setText(f"Violations ({len(state.analysis.violations)})")

    def _call_selected(self, current, _previous) -> None:
        if self.result is None or not current.isValid() or current.row() >= len(self.result.calls):
            return
        self.diff.setHtml(diff_html(self.result.calls[current.row()]))

    def _violation_selected(self, current, _previous) -> None:
        self._violation_activated(current)

    def _violation_activated(self, index) -> None:
        state = self.session.state
        if state is None or not index.isValid():
            return
        violation = self.violations.rows[index.row()]
        if violation.step is not None:
            state.set_cursor_step(violation.step)
        else:
            state.end()
