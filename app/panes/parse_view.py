"""The partial parse at the cursor: content, reasoning, and each call's name and arguments so far.

What the cursor's step changed is highlighted (appended text on a green
ground, a call opened or named at this step flagged). Very long fields show
their tail (the part that is changing); the header says how much is hidden.
"""

from __future__ import annotations

import html

from PySide6.QtWidgets import QTextBrowser, QWidget

from callscope.engine.core.parse_model import Parse
from callscope.engine.inspector.parse_cursor import StepDelta
from callscope.models.session import InspectorSession
from callscope.ui import theme

TAIL_CHARS = 6000


def _field(text: str, added: str, limit: int = TAIL_CHARS) -> str:
    """HTML for ``text`` whose last ``len(added)`` characters are new, clipped to its tail."""
    added_len = len(added) if added and text.endswith(added) else 0
    old, new = text[: len(text) - added_len], text[len(text) - added_len :]
    hidden = 0
    if len(text) > limit:
        hidden = len(text) - limit
        if len(new) >= limit:
            old, new = "", new[-limit:]
        else:
            old = old[len(old) - (limit - len(new)) :]
    out = ""
    if hidden:
        out += f'<span style="color:{theme.DIM}">… {hidden:,} earlier characters …</span>'
    out += html.escape(old)
    if new:
        out += f'<span style="background:{theme.NEW_TEXT_BG};color:#ffffff">{html.escape(new)}</span>'
    return out


def _tag(text: str, color: str) -> str:
    return (
        f'&nbsp;<span style="background:{color};color:#111;font-size:8pt;font-weight:600">&nbsp;{html.escape(text)}&nbsp;</span>'
    )


def render_parse(parse: Parse, delta: StepDelta, step: int, unit: str) -> str:
    """The pane's HTML for one parse (kept separate so tests can read it without a window)."""
    mono = f"font-family:{theme.MONO_CSS};font-size:9.5pt;white-space:pre-wrap"
    head = f"color:{theme.DIM};font-size:8.5pt;font-weight:600;letter-spacing:1px"
    parts = []
    state = "terminal parse" if not parse.partial else f"partial parse after {unit} {step}"
    changed = []
    if delta.failures:
        changed.append(_tag("parser threw: " + delta.failures[0][:60], theme.BAD))
    if delta.content_revised:
        changed.append(_tag("content revised", theme.WARN))
    parts.append(f'<div style="color:{theme.DIM};font-size:9pt">{state}{"".join(changed)}</div>')
    if parse.reasoning or delta.reasoning:
        parts.append(f'<p style="{head}">REASONING <span style="font-weight:400">· {len(parse.reasoning):,} chars</span></p>')
        parts.append(f'<div style="{mono};color:{theme.SPAN_COLORS["reasoning"]}">{_field(parse.reasoning, delta.reasoning)}</div>')
    if parse.content or delta.content or not parse.calls:
        parts.append(f'<p style="{head}">CONTENT <span style="font-weight:400">· {len(parse.content):,} chars</span></p>')
        body = _field(parse.content, delta.content) or f'<span style="color:{theme.FAINT}">(empty)</span>'
        parts.append(f'<div style="{mono}">{body}</div>')
    for index, call in enumerate(parse.calls):
        color = theme.call_color(index)
        flags = ""
        if index in delta.opened:
            flags += _tag("opened", theme.WARN)
        if index in delta.named:
            flags += _tag("named", theme.CURSOR)
        if index in delta.revised:
            flags += _tag("revised", theme.BAD)
        name = html.escape(call.name) if call.name else f'<span style="color:{theme.DIM}">name not complete</span>'
        ident = f' <span style="color:{theme.DIM};font-weight:400">id {html.escape(call.id)}</span>' if call.id else ""
        parts.append(
            f'<p style="{head}">CALL {index} <span style="color:{color};font-size:10pt;letter-spacing:0">{name}</span>'
            f'{ident}<span style="font-weight:400"> · {len(call.arguments):,} chars</span>{flags}</p>'
        )
        args = _field(call.arguments, delta.arguments.get(index, "")) or f'<span style="color:{theme.FAINT}">(no arguments yet)</span>'
        parts.append(f'<div style="{mono};color:{color}">{args}</div>')
    if delta.dropped_to is not None:
        parts.append(f'<p style="color:{theme.BAD}">calls dropped to {delta.dropped_to} at this step</p>')
    return "".join(parts)


class ParseView(QTextBrowser):
    def __init__(self, session: InspectorSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.setOpenLinks(False)
        self.document().setDocumentMargin(6)
        self._last: tuple[int, int] | None = None
        session.analysisChanged.connect(self._reset)
        session.cursorChanged.connect(self.show_cursor)

    def _reset(self) -> None:
        self._last = None

    def show_cursor(self, index: int) -> None:
        state = self.session.state
        if state is None:
            return
        view = state.view(index)
        key = (view.step, len(state.analysis.parse_events))
        if key == self._last:
            return
        self._last = key
        self.setHtml(render_parse(view.parse, view.delta, view.step, state.analysis.unit))
