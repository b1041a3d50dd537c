"""Compare: the same source under two policies (or two parsers), side by side, aligned by step, differences marked.

The "against" picker offers every policy, and, when the source carries text
(a trace, pasted text, a live run), every other wire format: the same steps
re-parsed by that format's parser under the current policy.
"""

from __future__ import annotations

import bisect
import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from callscope.engine.analysis.units import step_noun
from callscope.engine.inspector.compare import (
    FORMAT,
    POLICY,
    CompareTarget,
    Comparison,
    compare,
    compare_targets,
    target_from_label,
)
from callscope.engine.inspector.sources import SourceError
from callscope.models.session import InspectorSession
from callscope.models.table_models import CompareModel
from callscope.panes.pane import row_table
from callscope.ui import theme

#: What the picker shows before a source is open, and falls back to.
DEFAULT_TARGET = CompareTarget(POLICY, "atomic")


class CompareView(QWidget):
    def __init__(self, session: InspectorSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self._comparison: Comparison | None = None
        self._stale = False  # a source is shown but not compared yet: done when the tab is shown or asked
        self.other = QComboBox()
        self.other.addItem(DEFAULT_TARGET.label)
        self.other.setToolTip("Another policy, or (for a source that carries text) another wire format's parser")
        self._wanted = DEFAULT_TARGET  # the user's last choice, kept while sources change
        self.summary = QLabel("")
        self.summary.setObjectName("Caption")
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.model = CompareModel(self)
        self.table = row_table(self.model, alternating=False)
        self.table.setFont(theme.mono_font(9))
        # The two sides share the width equally, whatever the pane's size: the step, time and running totals
        # are as wide as their cells, and a long cell elides (its tooltip has it whole). Sized to contents,
        # a long left cell pushed the right side's header and cells out of a 1400 px window.
        header = self.table.horizontalHeader()
        header.setStretchLastSection(False)
        header.setMinimumSectionSize(40)
        for column in range(len(self.model.columns)):
            mode = QHeaderView.ResizeMode.Stretch if column in (2, 3) else QHeaderView.ResizeMode.ResizeToContents
            header.setSectionResizeMode(column, mode)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        bar = QHBoxLayout()
        label = QLabel("against")
        label.setObjectName("Caption")
        self.left_label = QLabel("")
        bar.addWidget(self.left_label)
        bar.addWidget(label)
        bar.addWidget(self.other)
        bar.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(bar)
        layout.addWidget(self.summary)
        layout.addWidget(self.table, 1)
        self.other.currentTextChanged.connect(self._target_chosen)
        self.table.selectionModel().currentRowChanged.connect(self._row_selected)
        session.analysisChanged.connect(self.rebuild)
        session.cursorChanged.connect(self.follow_cursor)
        self.error = ""
        self._filling = False
        self._following = False
        self._steps: list[int] = []

    @property
    def comparison(self) -> Comparison | None:
        """The comparison shown; computed on first need (the tab shown, or asked for), not when a source opens."""
        if self._stale:
            self._build()
        return self._comparison

    @property
    def target(self) -> CompareTarget:
        return target_from_label(self.other.currentText()) or DEFAULT_TARGET

    def choose(self, target: CompareTarget | str) -> bool:
        """Compare against ``target`` (a :class:`CompareTarget` or its label); False when the picker lacks it."""
        label = target.label if isinstance(target, CompareTarget) else target
        index = self.other.findText(label)
        if index < 0:
            return False
        self.other.setCurrentIndex(index)
        return True

    def _target_chosen(self, label: str) -> None:
        if self._filling:
            return
        self._wanted = target_from_label(label) or DEFAULT_TARGET
        self.rebuild()

    def _fill_picker(self, targets: list[CompareTarget]) -> None:
        """The choices this source offers; the user's last choice stays picked when it is among them."""
        labels = [t.label for t in targets]
        wanted = self._wanted.label if self._wanted.label in labels else DEFAULT_TARGET.label
        if labels != [self.other.itemText(i) for i in range(self.other.count())] or self.other.currentText() != wanted:
            self._filling = True
            try:
                self.other.clear()
                self.other.addItems(labels)
                self.other.setCurrentText(wanted)
            finally:
                self._filling = False

    def rebuild(self) -> None:
        """A new analysis is shown: compare it now if this tab is shown, else when it is (or when asked).

        Comparing analyses the whole source a second time (another policy or parser): on a
        100,000-step trace that was more than a second of every open, for a tab most opens never show.
        """
        state = self.session.state
        self._comparison = None
        self._stale = False
        self.error = ""
        if state is None or self.session.source is None or state.analysis.running:
            self.model.set_rows([])
            self.summary.setText(f'<span style="color:{theme.DIM}">Compare is available once the stream has ended.</span>')
            return
        self._fill_picker(compare_targets(state.analysis))
        self._stale = True
        if self.isVisible():
            self._build()
        else:
            self.model.set_rows([])
            self.summary.setText(f'<span style="color:{theme.DIM}">Compared when this tab is shown.</span>')

    def _build(self) -> None:
        """Analyse the source the other way and line the two up (the work :meth:`rebuild` puts off)."""
        self._stale = False
        state = self.session.state
        assert state is not None and self.session.source is not None
        left = state.analysis
        target = self.target
        self.left_label.setText(f"<b>{html.escape(left.source.policy)}</b>")
        try:
            if target.kind == FORMAT:  # the same text through another parser, under the shown policy
                others = self.session.source.analyses(left.source.policy, target.id)
            else:
                others = self.session.source.analyses(target.id)
        except SourceError as exc:
            self._show_error(str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - a parser bug on foreign text must not take the window down
            self._show_error(f"{target.label}: analysis failed: {type(exc).__name__}: {exc}")
            return
        right = next((a for a in others if a.name == left.name), others[0])
        self._comparison = compare(left, right)
        self.left_label.setText(f"<b>{html.escape(self.comparison.title('left'))}</b>")
        self.model.set_titles(self.comparison.column_title("left"), self.comparison.column_title("right"))
        self.model.set_unit(step_noun(left))
        self.model.set_rows(self.comparison.rows)
        self._steps = [r.step for r in self.comparison.rows]
        c = self.comparison
        self.follow_cursor()  # the new rows line up with the cursor at once, not at the next cursor move
        self.summary.setText(
            f'<span style="color:{theme.WARN}">the two sides differ at {c.differing} of the {len(c.rows):,} {step_noun(left)}s where either emits</span><br>'
            f'<span style="color:{theme.POLICY_COLOR}">◀ {html.escape(c.side_summary("left"))}</span><br>'
            f'<span style="color:{theme.ATOMIC_COLOR}">▶ {html.escape(c.side_summary("right"))}</span>'
        )

    def _show_error(self, message: str) -> None:
        self.error = message
        self.summary.setText(f'<span style="color:{theme.BAD}">{html.escape(message)}</span>')
        self.model.set_rows([])

    def follow_cursor(self, _index: int = 0) -> None:
        """Select the last row at or before the cursor's step, so both sides line up with every other pane.

        Only while the tab is shown (a hidden table is brought up to date when it appears).
        """
        if not self.isVisible():
            return
        state = self.session.state
        if state is None or self.comparison is None or not self.comparison.rows:
            return
        row = max(0, bisect.bisect_right(self._steps, state.cursor_step) - 1)
        index = self.model.index(row, 0)
        self._following = True
        try:
            self.table.setCurrentIndex(index)
        finally:
            self._following = False
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
            try:
                self._build()
            finally:
                QApplication.restoreOverrideCursor()
        self.follow_cursor()

    def _row_selected(self, current, _previous) -> None:
        state = self.session.state
        if self._following or state is None or self.comparison is None or not current.isValid():
            return
        state.set_cursor_step(self.comparison.rows[current.row()].step)
