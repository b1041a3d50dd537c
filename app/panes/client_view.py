"""What the client sees: two chat-client panels side by side, streaming against atomic, at the shared cursor.

The left panel fills in the tool call as the streaming policy's deltas arrive;
the right one shows a "waiting…" spinner until the atomic emission lands the
whole call at the end. Each has the elapsed time since the request. Everything
shown is computed by :class:`~callscope.engine.inspector.client_view.ClientView`;
this pane only renders it, and only while it is on screen (a hidden pane
catches up when shown). Played at 1x it is the picture of the latency win
(presenter mode shows it full screen; File > Export > Replay animation saves it).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextOption
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QStackedWidget, QTextBrowser, QVBoxLayout, QWidget

from callscope.engine.inspector.client_view import ClientCall, ClientPanel, ClientScene, ClientView
from callscope.models.session import InspectorSession
from callscope.panes.pane import ElidedLabel
from callscope.ui import theme

#: Characters of one argument value the panel renders (its tail): a 400 KB call must not be laid out per frame.
VALUE_TAIL = 6000


def call_html(call: ClientCall, accent: str) -> str:
    """A tool call as a chat client shows one being written: its name, then each argument so far."""
    head = (
        f'<div style="color:{accent};font-weight:600">⚙ {html.escape(call.name or "(unnamed)")}'
        f'<span style="color:{theme.DIM};font-weight:400">  {html.escape(call.id)}</span></div>'
    )
    fields = call.fields()
    if not fields:  # not an object (yet): the raw text
        return head + f'<div style="white-space:pre-wrap">{_tail(call.arguments)}</div>'
    rows = []
    for f in fields:
        cursor = "" if f.complete else f'<span style="color:{accent}">▍</span>'
        value = _tail(f.value)
        style = "white-space:pre-wrap" + ("" if f.is_string else f";color:{theme.HOVER}")
        rows.append(
            f'<div style="margin-top:4px"><span style="color:{theme.HOVER};font-weight:600">{html.escape(f.key)}</span>'
            f'<div style="{style}">{value}{cursor}</div></div>'
        )
    return head + "".join(rows)


def _tail(text: str) -> str:
    if len(text) <= VALUE_TAIL:
        return html.escape(text)
    return f'<span style="color:{theme.DIM}">… </span>' + html.escape(text[-VALUE_TAIL:])


def panel_html(panel: ClientPanel, accent: str) -> str:
    """The chat transcript of one panel: reasoning (dim), content, then each call."""
    parts = []
    if panel.reasoning:
        parts.append(f'<div style="color:{theme.DIM};white-space:pre-wrap"><i>{_tail(panel.reasoning)}</i></div>')
    if panel.content:
        parts.append(f'<div style="white-space:pre-wrap">{_tail(panel.content)}</div>')
    for call in panel.calls:
        parts.append(f'<div style="margin-top:8px">{call_html(call, accent)}</div>')
    return "".join(parts)


class ClientPanelWidget(QFrame):
    """One chat client: title and clock, a status line, then the transcript or a waiting spinner."""

    def __init__(self, accent: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.accent = accent
        self.setObjectName("ClientPanel")
        self.title = ElidedLabel("")
        self.title.setObjectName("PaneTitle")
        self.clock = QLabel("")
        self.clock.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.status = QLabel("")
        self.status.setObjectName("Caption")
        self.status.setWordWrap(True)
        self.body = QTextBrowser()
        self.body.setOpenLinks(False)
        self.body.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)  # a long call id wraps too
        self.body.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.spinner = QLabel("")
        self.spinner.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.waiting_text = QLabel("waiting…")
        self.waiting_text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.waiting_text.setObjectName("Caption")
        waiting = QWidget()
        wl = QVBoxLayout(waiting)
        wl.addStretch(1)
        wl.addWidget(self.spinner)
        wl.addWidget(self.waiting_text)
        wl.addStretch(1)
        self.pages = QStackedWidget()
        self.pages.addWidget(waiting)
        self.pages.addWidget(self.body)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.clock)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 10)
        layout.setSpacing(4)
        layout.addLayout(head)
        layout.addWidget(self.status)
        layout.addWidget(self.pages, 1)
        self._html = ""
        self.follow = True  # pinned to the newest text unless the user scrolls back
        self.body.verticalScrollBar().actionTriggered.connect(self._scrolled)  # user moves only, not setValue
        self.set_scale(1.0)

    def set_scale(self, scale: float) -> None:
        """Font sizes times ``scale`` (presenter mode reads from the back of a room), colours of the theme.

        Sizes go in style sheets: the application's sheet sets every widget's font size, which beats setFont.
        """
        self.scale = scale
        self.setStyleSheet(
            f"QFrame#ClientPanel {{ background: {theme.PANEL_ALT}; border: 1px solid {theme.BORDER}; "
            f"border-top: 3px solid {self.accent}; border-radius: 6px; }}"
            "QFrame#ClientPanel QLabel { background: transparent; }"
        )
        mono = f"font-family: {theme.MONO_CSS};"
        self.title.setStyleSheet(f"font-size: {10 * scale:.0f}pt;")
        self.status.setStyleSheet(f"font-size: {9 * scale:.0f}pt;")
        self.waiting_text.setStyleSheet(f"font-size: {10 * scale:.0f}pt;")
        self.clock.setStyleSheet(f"{mono} font-size: {16 * scale:.0f}pt; font-weight: 600; color: {self.accent};")
        self.spinner.setStyleSheet(f"{mono} font-size: {40 * scale:.0f}pt; color: {self.accent};")
        self.body.setStyleSheet(f"{mono} font-size: {9.5 * scale:.1f}pt;")

    def show_panel(self, panel: ClientPanel) -> None:
        self.title.setText(panel.title)
        self.clock.setText(panel.clock)
        self.status.setText(panel.status)
        if panel.waiting:
            self.spinner.setText(panel.spinner)
            self.pages.setCurrentIndex(0)
            return
        self.pages.setCurrentIndex(1)
        text = panel_html(panel, self.accent)
        if text != self._html:
            self._html = text
            self.body.setHtml(text)
        if self.follow:
            self._to_bottom()

    def _to_bottom(self) -> None:
        """Keep the newest text in sight (what a chat client does while a message grows)."""
        bar = self.body.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _scrolled(self, _action: int) -> None:
        """The user scrolled (wheel, drag, arrows): follow the end again once they are back at the bottom."""
        bar = self.body.verticalScrollBar()
        self.follow = bar.sliderPosition() >= bar.maximum() - 4


def outcomes_html(clients: tuple) -> str:
    """``openai-python ✓ · openai-node ✗ name 'ther' · ...``: what each client library ends with."""
    marks = {"ok": ("✓", theme.OK), "wrong": ("✗", theme.BAD), "raises": ("raises", theme.BAD)}
    parts = []
    for profile, cell in clients:
        mark, tone = marks[cell.kind]
        detail = f' <span style="color:{theme.DIM}">{html.escape(cell.detail)}</span>' if cell.detail else ""
        parts.append(f'{html.escape(profile)} <span style="color:{tone};font-weight:600">{mark}</span>{detail}')
    return ("what each client ends with: " + " · ".join(parts)) if parts else ""


class ClientViewPane(QWidget):
    """The two panels and the headline; follows the session's cursor, playback and live growth."""

    def __init__(self, session: InspectorSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.view: ClientView | None = None
        self.scene: ClientScene | None = None
        self.headline = QLabel("")
        self.headline.setObjectName("Headline")
        self.headline.setWordWrap(True)
        self.streaming = ClientPanelWidget(theme.POLICY_COLOR)
        self.atomic = ClientPanelWidget(theme.ATOMIC_COLOR)
        self._palette = theme.POLICY_COLOR, theme.ATOMIC_COLOR, theme.PANEL_ALT
        panels = QHBoxLayout()
        panels.setSpacing(8)
        panels.addWidget(self.streaming, 1)
        panels.addWidget(self.atomic, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 2, 0, 0)
        layout.setSpacing(6)
        layout.addWidget(self.headline)
        layout.addLayout(panels, 1)
        #: What every client library ends with, side by side (a captured stream, at its end).
        self.clients = QLabel("")
        self.clients.setObjectName("ClientOutcomes")
        self.clients.setWordWrap(True)
        self.clients.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.clients)
        self._stale = True
        session.analysisChanged.connect(self.rebuild)
        session.cursorChanged.connect(self._cursor)
        session.grew.connect(self._grew)
        self.set_scale(1.0)

    def set_scale(self, scale: float, headline: bool = True) -> None:
        """Fonts times ``scale``; ``headline`` False hides the gain line (presenter mode shows it over the plot)."""
        self.scale, self._with_headline = scale, headline
        self.headline.setStyleSheet(f"font-size: {10 * scale:.0f}pt; color: {theme.POLICY_COLOR}; font-weight: 600;")
        self.headline.setVisible(headline)
        self.streaming.set_scale(scale)
        self.atomic.set_scale(scale)

    def rebuild(self) -> None:
        self.streaming.follow = self.atomic.follow = True
        state = self.session.state
        self.view = ClientView(state.analysis, state.timebase) if state is not None else None
        self.refresh()

    def _grew(self, _text: str) -> None:
        self.refresh()  # indexes the new chunks only when on screen: a hidden tab costs a live frame nothing

    def _cursor(self, _index: int) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Show the cursor's moment now if on screen, else when next shown."""
        if not self.isVisible():
            self._stale = True
            return
        self._stale = False
        if self._palette != (theme.POLICY_COLOR, theme.ATOMIC_COLOR, theme.PANEL_ALT):
            self.restyle()
        state = self.session.state
        if self.view is None or state is None:
            self.headline.setText("Open a source to see what a chat client receives.")
            return
        self.view.sync()  # catches up on every chunk since the last time it was shown
        self.scene = scene = self.view.at(state.cursor)
        self.headline.setText(scene.headline)
        self.streaming.show_panel(scene.streaming)
        self.atomic.show_panel(scene.atomic)
        self.clients.setText(outcomes_html(scene.clients))
        self.clients.setVisible(bool(scene.clients))

    def restyle(self) -> None:
        """The theme changed (View > Theme): the panels' colours were baked into their style sheets."""
        self._palette = theme.POLICY_COLOR, theme.ATOMIC_COLOR, theme.PANEL_ALT
        self.streaming.accent, self.atomic.accent = theme.POLICY_COLOR, theme.ATOMIC_COLOR
        self.streaming._html = self.atomic._html = ""  # the transcript's colours too
        self.set_scale(self.scale, self._with_headline)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._stale:
            self.refresh()
