"""The Template pane: how a chat template writes a tool call, which parser reads it, and whether it comes back.

Everything shown is computed by :func:`~callscope.engine.inspector.template_state.template_state`
(the analysis ``callscope template FILE --check`` prints); this pane draws it:
the parser and why, the round-trip verdict as a badge, the rendered call with
its markers, names and keys coloured, each checked call turn coloured by what
the parser made of every character, and the learnt description. Two buttons
act on it: run the template live on the packaged model with a forced call, or
paste a generation and read it with the template's parser (the window does both).

The analysis runs on its own thread (a GGUF's metadata can take seconds to
read), so the window never freezes; a newer request makes an older result stale.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QEventLoop, QObject, QThread, QTimer, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from callscope.engine.inspector.template_state import ReadBack, TemplateState, TemplateStateError, template_state
from callscope.engine.templates.evidence import KEY, MARKER, NAME, Span
from callscope.panes.pane import ElidedLabel
from callscope.ui import theme

#: What the file dialog offers.
TEMPLATE_FILTERS = "Chat templates and models (*.jinja *.j2 *.json *.gguf);;All files (*)"
#: Suffixes a drop on the window opens here rather than as a recording.
TEMPLATE_SUFFIXES = (".jinja", ".j2", ".gguf")
PLACEHOLDER = (
    "Open a chat template (a .jinja file, a tokenizer_config.json) or a GGUF model (its own template is read, "
    "not its weights) to see how it writes tool calls, which parser reads them, and whether they come back byte "
    "by byte. Ctrl+T, or drop the file on the window."
)


class TemplateAnalyser(QObject):
    """Runs :func:`template_state` on its own thread; results go back by queued signals."""

    done = Signal(int, object)  # ticket, TemplateState
    failed = Signal(int, str)  # ticket, one-line message

    @Slot(int, str)
    def analyse(self, ticket: int, path: str) -> None:
        try:
            state = template_state(path)
        except TemplateStateError as exc:
            self.failed.emit(ticket, str(exc))
            return
        except Exception as exc:  # noqa: BLE001 - a renderer or parser bug must reach the user, not kill the thread
            self.failed.emit(ticket, f"{path}: the analysis failed: {type(exc).__name__}: {exc}")
            return
        self.done.emit(ticket, state)


class TemplateView(QWidget):
    """The pane (see the module docstring); the window connects the request signals to its actions."""

    #: A template was analysed and is on screen (TemplateState).
    analysed = Signal(object)
    #: Analysing failed; the one-line message (also shown in the pane).
    failed = Signal(str)
    openRequested = Signal()
    runRequested = Signal(object)  # TemplateState
    pasteRequested = Signal(object)  # TemplateState
    _request = Signal(int, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state: TemplateState | None = None
        self.error = ""
        self._ticket = 0
        self._pending = ""
        self._thread: QThread | None = None
        self._analyser: TemplateAnalyser | None = None
        self._build()
        self._render()

    # ------------------------------------------------------------ layout

    def _build(self) -> None:
        self.open_button = QPushButton("Open template…")
        self.open_button.setToolTip("Open a .jinja template, a tokenizer_config.json or a GGUF model (Ctrl+T)")
        self.open_button.clicked.connect(self.openRequested)
        self.file_label = ElidedLabel("no template")
        self.file_label.setObjectName("Caption")
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(90)
        self.busy.setAccessibleName("analysing the template")
        self.busy.hide()
        top = QHBoxLayout()
        top.setSpacing(6)
        top.addWidget(self.open_button)
        top.addWidget(self.file_label, 1)
        top.addWidget(self.busy)

        self.parser_label = ElidedLabel("")
        self.parser_label.setObjectName("Headline")
        self.badge = ElidedLabel("", 70)
        self.badge.setObjectName("Badge")
        self.badge.setProperty("tone", "neutral")
        self.badge.hide()
        verdict = QHBoxLayout()
        verdict.setSpacing(6)
        verdict.addWidget(self.parser_label, 1)
        verdict.addWidget(self.badge)

        self.run_button = QPushButton("Run live")
        self.run_button.setObjectName("Primary")
        self.run_button.setToolTip("Prompt the packaged model with this template and force a tool call in its syntax "
                                   "(the round trip's request: two tools, one question)")
        self.run_button.clicked.connect(lambda: self.state is not None and self.runRequested.emit(self.state))
        self.paste_button = QPushButton("Paste a generation…")
        self.paste_button.setToolTip("Paste what a model served with this template generated, and read it with the "
                                     "template's parser")
        self.paste_button.clicked.connect(lambda: self.state is not None and self.pasteRequested.emit(self.state))
        actions = QHBoxLayout()
        actions.setSpacing(6)
        actions.addWidget(self.run_button)
        actions.addWidget(self.paste_button)
        actions.addStretch(1)

        self.body = QTextBrowser()
        self.body.setOpenLinks(False)
        self.body.setAccessibleName("template analysis")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 6, 4, 4)
        layout.setSpacing(6)
        layout.addLayout(top)
        layout.addLayout(verdict)
        layout.addLayout(actions)
        layout.addWidget(self.body, 1)
        self.setTabOrder(self.open_button, self.run_button)
        self.setTabOrder(self.run_button, self.paste_button)
        self.setTabOrder(self.paste_button, self.body)

    # ------------------------------------------------------------ analysis (worker thread)

    def open_path(self, path: str) -> None:
        """Analyse ``path`` on the worker thread; the pane shows "analysing…" until :attr:`analysed` or :attr:`failed`."""
        self._ticket += 1
        self._pending = str(path)
        self.file_label.setText(f"analysing {Path(path).name}…")
        self.busy.show()
        self._worker()  # created (and its thread started) before the request is queued
        self._request.emit(self._ticket, str(path))

    @property
    def analysing(self) -> bool:
        return bool(self._pending)

    def wait(self, timeout_ms: int) -> bool:
        """Run the event loop until the pending analysis is shown (headless screenshots); True if it succeeded."""
        if self.analysing:
            loop = QEventLoop()
            self.analysed.connect(loop.quit)
            self.failed.connect(loop.quit)
            QTimer.singleShot(timeout_ms, loop.quit)
            loop.exec()
            self.analysed.disconnect(loop.quit)
            self.failed.disconnect(loop.quit)
        return not self.analysing and self.state is not None and not self.error

    def _worker(self) -> TemplateAnalyser:
        if self._analyser is None:
            self._thread = QThread()
            self._thread.setObjectName("callscope-template")
            self._analyser = TemplateAnalyser()
            self._analyser.moveToThread(self._thread)
            self._request.connect(self._analyser.analyse)
            self._analyser.done.connect(self._on_done)
            self._analyser.failed.connect(self._on_failed)
            self._thread.start()
            app = QCoreApplication.instance()
            if app is not None:
                app.aboutToQuit.connect(self.shutdown)
        return self._analyser

    def _on_done(self, ticket: int, state: TemplateState) -> None:
        if ticket != self._ticket:
            return  # a newer template was asked for meanwhile
        self._pending = ""
        self.busy.hide()
        self.state, self.error = state, ""
        self._render()
        self.analysed.emit(state)

    def _on_failed(self, ticket: int, message: str) -> None:
        if ticket != self._ticket:
            return
        self._pending = ""
        self.busy.hide()
        self.error = message
        self._render()
        self.failed.emit(message)

    def shutdown(self, timeout_ms: int = 10000) -> bool:
        """End the analysis thread (the window is closing); True if it ended."""
        if self._thread is None or self._thread.isFinished():
            return True
        if self.analysing:
            from callscope.engine.templates.isolation import abort_renders

            abort_renders()  # a hostile template's render would hold the thread until its time limit
        self._thread.quit()
        return bool(self._thread.wait(timeout_ms))

    # ------------------------------------------------------------ drawing

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.StyleChange:
            self._render()  # the theme changed: the colours are written into the HTML

    def _render(self) -> None:
        state = self.state
        has = state is not None
        self.run_button.setEnabled(has)
        self.paste_button.setEnabled(has)
        if state is None:
            self.file_label.setText("no template")
            self.parser_label.setText("")
            self._set_badge("", "neutral")
            message = html.escape(self.error) if self.error else html.escape(PLACEHOLDER)
            tone = theme.BAD if self.error else theme.DIM
            self.body.setHtml(f'<p style="color:{tone}">{message}</p>')
            return
        self.file_label.setText(f"{state.template.name} ({state.template.origin})")
        self.parser_label.setText(f"parser: {state.format_id} · {state.parser_kind}")
        ok = state.check_ok
        if ok is None:
            self._set_badge("no call to check", "neutral")
        else:
            self._set_badge("round trip OK" if ok else "round trip FAILED", "ok" if ok else "bad")
        self.badge.setToolTip(state.check_line)
        self.body.setHtml(state_html(state, self.error))

    def _set_badge(self, text: str, tone: str) -> None:
        self.badge.setText(text)
        if self.badge.property("tone") != tone:
            self.badge.setProperty("tone", tone)
            self.badge.style().unpolish(self.badge)
            self.badge.style().polish(self.badge)
        self.badge.setVisible(bool(text))


# ---------------------------------------------------------------- HTML (colours from the theme at draw time)


def state_html(state: TemplateState, error: str = "") -> str:
    """The pane's body for ``state``: why this parser, the rendered call, the round trips, the description."""
    parts = []
    if error:
        parts.append(f'<p style="color:{theme.BAD}">{html.escape(error)}</p>')
    parts.append(_heading("Why this parser"))
    parts.append(f'<p style="color:{theme.TEXT}">{html.escape(state.reason)}</p>')
    parts.append(f'<p style="color:{theme.DIM}">{html.escape(state.thinking_line)}</p>')
    parts.append(_heading("Rendered call, as the template writes it"))
    if state.evidence:
        parts.append(_legend([(theme.SPAN_COLORS["call"], "marker"), (theme.PARSE_COLORS["name complete"], "name"),
                              (theme.ACCENT, "key"), (theme.TEXT, "value")]))
        parts.append(_code("".join(_evidence_span(s) for s in state.evidence)))
    else:
        parts.append(f'<p style="color:{theme.DIM}">The template renders no tool call.</p>')
    parts.append(_heading("Round trip: the rendered turn, fed back byte by byte"))
    if not state.trips:
        parts.append(f'<p style="color:{theme.DIM}">{html.escape(state.check_line)}</p>')
    else:
        parts.append(_legend([(theme.SPAN_COLORS["call"], "markup"), (theme.call_color(0), "arguments, call 1"),
                              (theme.call_color(1), "call 2"), (theme.SPAN_COLORS["content"], "content"),
                              (theme.SPAN_COLORS["reasoning"], "reasoning")]))
    for trip in state.trips:
        tone = theme.OK if trip.ok else theme.BAD
        parts.append(f'<p style="margin-bottom:2px"><span style="color:{tone};font-weight:600">'
                     f"{html.escape(trip.summary)}</span> "
                     f'<span style="color:{theme.DIM}">({html.escape(trip.label)})</span></p>')
        parts += [f'<p style="color:{theme.BAD};margin:0 0 0 12px">{html.escape(p)}</p>' for p in trip.problems]
        parts.append(_code("".join(_read_back_span(r) for r in trip.read_back)))
    d = state.description
    parts.append(_heading(f"Learnt description: {d.title}"))
    rows = []
    if d.reasoning:
        rows.append(("reasoning", d.reasoning))
    rows += d.fields
    if rows:
        cells = "".join(
            f'<tr><td style="color:{theme.DIM};padding-right:10px">{html.escape(label)}</td>'
            f'<td style="font-family:{theme.MONO_CSS};color:{theme.TEXT}">{html.escape(value)}</td></tr>'
            for label, value in rows
        )
        parts.append(f'<table cellspacing="0" cellpadding="1">{cells}</table>')
    words = "because" if not d.learnt else "note"
    parts += [f'<p style="color:{theme.WARN};margin:2px 0">{words}: {html.escape(n)}</p>' for n in d.notes]
    parts += [f'<p style="color:{theme.DIM};margin:2px 0">a variant did not render: {html.escape(e)}</p>'
              for e in state.render_errors]
    return "".join(parts)


def _heading(text: str) -> str:
    return f'<p style="color:{theme.DIM};font-weight:600;margin:10px 0 2px 0">{html.escape(text)}</p>'


def _legend(items: list[tuple[str, str]]) -> str:
    keys = " · ".join(f'<span style="color:{color}">■ {html.escape(label)}</span>' for color, label in items)
    return f'<p style="font-size:8.5pt;margin:0 0 2px 0">{keys}</p>'


def _code(inner: str) -> str:
    return (f'<p style="font-family:{theme.MONO_CSS};background:{theme.PANEL_ALT};white-space:pre-wrap;'
            f'margin:2px 0 6px 0">{inner}</p>')


def _visible(text: str) -> str:
    """Escaped, with every newline shown as a faint ↵ before the line break."""
    return html.escape(text).replace("\n", f'<span style="color:{theme.FAINT}">↵</span><br>')


def _evidence_span(span: Span) -> str:
    colors = {MARKER: theme.SPAN_COLORS["call"], NAME: theme.PARSE_COLORS["name complete"], KEY: theme.ACCENT}
    color = colors.get(span.kind, theme.TEXT)
    weight = ";font-weight:600" if span.kind == MARKER else ""
    return f'<span style="color:{color}{weight}">{_visible(span.text)}</span>'


def _read_back_span(run: ReadBack) -> str:
    color = theme.call_color(run.call) if run.kind == "arguments" else theme.SPAN_COLORS.get(run.kind, theme.TEXT)
    return f'<span style="color:{color}">{_visible(run.text)}</span>'


__all__ = ["TEMPLATE_FILTERS", "TEMPLATE_SUFFIXES", "TemplateAnalyser", "TemplateView", "state_html"]
