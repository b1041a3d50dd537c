"""The strip above the timeline: what is shown (source, run, format, policy) and its verdict at a glance.

A recording of the fixture library also says what it demonstrates and whether the verdict it documents
still holds (:mod:`callscope.engine.inspector.expected`). A cut stream (cancelled, failed) is never shown as a pass.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QSizePolicy, QToolButton, QVBoxLayout, QWidget

from callscope.engine.analysis.report import describe_finish, format_why, plural
from callscope.engine.core.causes import UNFINISHED
from callscope.engine.inspector.expected import expected_for
from callscope.engine.inspector.reconcile import calls_badge, finish_badge
from callscope.engine.inspector.ttfd import ttfd_label
from callscope.engine.policies import POLICY_IDS
from callscope.models.session import InspectorSession
from callscope.panes.pane import ElidedLabel

#: A verdict badge never elides: a cut "does not reconst…" would be misleading.
NEVER_ELIDE = 10_000


def _badge(tone: str = "neutral", minimum: int = 70) -> QLabel:
    label = ElidedLabel("", minimum)
    label.setObjectName("Badge")
    label.setProperty("tone", tone)
    return label


def _set_tone(label: QLabel, text: str, tone: str) -> None:
    label.setText(text)
    if label.property("tone") != tone:
        label.setProperty("tone", tone)
        label.style().unpolish(label)
        label.style().polish(label)
    label.setVisible(bool(text))


class SourceBar(QFrame):
    policyChosen = Signal(str)
    runChosen = Signal(int)

    def __init__(self, session: InspectorSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("SourceBar")
        self.session = session
        # Two rows: what is shown (name, details, run picker, policy) above its verdict badges, so a
        # narrow window elides the details line instead of squeezing the source's name away.
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 5, 12, 6)
        layout.setSpacing(4)
        self.name = ElidedLabel("No source — Open a recording, Run a model, or Capture a server", 120)
        self.name.setObjectName("SourceName")
        self.name.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details = ElidedLabel("", 120)
        self.details.setObjectName("Caption")
        self.run = QComboBox()
        self.run.setToolTip("Streams in this file")
        self.run.setMinimumContentsLength(18)
        self.run.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        policy_label = QLabel("policy")
        policy_label.setObjectName("Caption")
        self.policy = QComboBox()
        self.policy.addItems(POLICY_IDS)
        self.policy.setToolTip("Streaming policy: re-analyses the same source")
        self.finish = _badge(minimum=NEVER_ELIDE)
        self.calls = _badge(minimum=NEVER_ELIDE)
        self.violations = _badge(minimum=NEVER_ELIDE)
        self.ttfd = _badge("info")
        self.expected = _badge(minimum=NEVER_ELIDE)  # a library recording's documented verdict; its tooltip says why
        top = QHBoxLayout()
        top.setSpacing(10)
        self.name.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)
        self.details.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        top.addWidget(self.name)
        top.addWidget(self.details, 1)
        top.addWidget(self.run)
        top.addSpacing(8)
        top.addWidget(policy_label)
        top.addWidget(self.policy)
        badges = QHBoxLayout()
        badges.setSpacing(8)
        # The verdicts keep their full text; the TTFD claim (also on the TTFD tab) is last and elides first.
        for badge in (self.calls, self.finish, self.violations, self.expected, self.ttfd):
            badges.addWidget(badge)
        badges.addStretch(1)
        layout.addLayout(top)
        layout.addLayout(badges)
        self.run.hide()
        # Reachable by Tab (and by click), never focused at launch: the window gives the keyboard to the
        # timeline, so the arrow keys step the cursor until the user deliberately tabs to a selector.
        for combo in (self.run, self.policy):
            combo.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        for badge in (self.finish, self.calls, self.violations, self.expected, self.ttfd):
            badge.hide()
        self._setting = False
        self.policy.currentTextChanged.connect(self._policy_changed)
        self.run.currentIndexChanged.connect(self._run_changed)
        session.analysisChanged.connect(self.refresh)
        session.grew.connect(lambda _t: self.refresh())

    def _show_policy(self, policy: str) -> None:
        """Select ``policy``; one that cannot be re-chosen (a capture: the server decided) shows greyed out."""
        known = policy in POLICY_IDS
        while self.policy.count() > len(POLICY_IDS):
            self.policy.removeItem(self.policy.count() - 1)
        if not known:
            self.policy.addItem(policy)
        self.policy.setCurrentText(policy)
        self.policy.setEnabled(known)
        self.policy.setToolTip("Streaming policy: re-analyses the same source" if known
                               else "A capture shows what the server sent: there is no policy to change")

    def refresh(self) -> None:
        state = self.session.state
        if state is None:
            return
        a = state.analysis
        self._setting = True
        try:
            self._show_policy(a.source.policy)
            names = [x.name for x in self.session.analyses]
            if [self.run.itemText(i) for i in range(self.run.count())] != names:
                self.run.clear()
                self.run.addItems(names)
            self.run.setCurrentIndex(self.session.run_index)
            self.run.setVisible(len(names) > 1)
        finally:
            self._setting = False
        label = self.session.source.label if self.session.source is not None else a.name
        self.name.setText(label if len(self.session.analyses) > 1 else (label if a.name in label else f"{label} · {a.name}"))
        kind = {"trace": "trace", "fixture": "byte-prefix fixture", "text": "pasted text", "model": "live model run",
                "capture": "capture"}.get(a.source.kind, a.source.kind)
        timing = "timed" if a.timed else "untimed"
        steps = plural(a.step_count, "token") if a.unit == "token" else f"{plural(a.step_count, 'step')} ({a.unit})"
        why = format_why(a)  # a live run: why this format (the packaged model's template renders no tools)
        self.details.setText(f"{kind} · format {a.source.format or '—'} · {steps} · {timing}"
                             + (f" · {a.source.format}: {why}" if why else ""))
        self._show_about(a)
        if a.running:
            _set_tone(self.finish, "generating…", "info")
            _set_tone(self.calls, plural(len(a.chunks), "chunk"), "neutral")
            _set_tone(self.violations, plural(len(a.violations), "violation") if a.violations else "", "bad")
            _set_tone(self.ttfd, "", "info")
            return
        _set_tone(self.finish, finish_badge(a.finish_reason, a.finish_cause, a.violations),
                  "ok" if a.finish_reason == "tool_calls" else "warn")
        self.finish.setToolTip(f"finish_reason: {describe_finish(a)}")
        _set_tone(self.calls, *calls_badge(a.calls))
        n = len(a.violations)
        cut = a.finish_cause in UNFINISHED  # a cut stream passed nothing, whatever it broke so far
        _set_tone(self.violations, plural(n, "violation"), "bad" if n else ("neutral" if cut else "ok"))
        _set_tone(self.ttfd, ttfd_label(a) if a.ttfd_streaming.step is not None or a.ttfd_atomic.step is not None else "", "info")

    def _show_about(self, analysis) -> None:
        """A library recording: does the shown analysis give its documented verdict? (Its description: the tooltip.)"""
        expected = expected_for(analysis)
        about = expected.description if expected is not None else ""
        self.details.setToolTip(f"{self.details.text()}\n{about}" if about else self.details.text())
        if expected is None or not expected.checked:
            _set_tone(self.expected, "", "neutral")
            return
        text = "expected verdict ✓" if expected.matches else "differs from its expected verdict"
        _set_tone(self.expected, text, "ok" if expected.matches else "bad")
        self.expected.setToolTip("\n".join(p for p in (about, expected.sentence, *expected.problems[1:]) if p))

    def _policy_changed(self, policy: str) -> None:
        if not self._setting:
            self.policyChosen.emit(policy)

    def _run_changed(self, index: int) -> None:
        if not self._setting and index >= 0:
            self.runChosen.emit(index)


class SourceButtons(QWidget):
    """Open · Run · Capture: one button per source action, at the right end of the menu bar.

    The buttons carry the menu's own actions (same shortcut, same enabled
    state). They sit in the menu bar's empty right end rather than in the
    source bar, whose width the file name and the verdict badges need.
    """

    def __init__(self, actions: list[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 6, 0)
        layout.setSpacing(4)
        caption = QLabel("source")
        caption.setObjectName("Caption")
        layout.addWidget(caption)
        self.buttons: list[QToolButton] = []
        for action in actions:
            button = QToolButton()
            button.setObjectName("SourceButton")
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            layout.addWidget(button)
            self.buttons.append(button)

    def button_for(self, action: QAction) -> QToolButton:
        return next(b for b in self.buttons if b.defaultAction() is action)
