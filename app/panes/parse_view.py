"""The partial parse at the cursor: content, reasoning, and each call's name and arguments so far.

At the top, the step's diff (:mod:`callscope.engine.inspector.step_diff`): what this
step added, what went out on the wire for it, and what is withheld and why
(append-only broken, an unnamed call holding back later ones, a held partial
marker). Below, the parse: what the step changed is highlighted (appended text
on a green ground, a call opened or named at this step flagged) and scrolled
into view. Very long fields show their tail (the part that is changing); the
header says how much is hidden.
"""

from __future__ import annotations

import html

from PySide6.QtWidgets import QTextBrowser, QWidget

from callscope.engine.core.parse_model import Parse
from callscope.engine.inspector.parse_cursor import StepDelta
from callscope.engine.inspector.step_diff import StepDiff
from callscope.models.session import InspectorSession
from callscope.ui import theme

TAIL_CHARS = 2500
#: While a stream is live its fields change every frame: a shorter tail (still more than the pane shows).
LIVE_TAIL_CHARS = 1500
#: The anchor the pane scrolls to: the first text the cursor's step changed.
CHANGE_ANCHOR = "change"


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
        out += (f'<a name="{CHANGE_ANCHOR}"></a><span style="background:{theme.NEW_TEXT_BG};color:{theme.NEW_TEXT}">'
                f"{html.escape(new)}</span>")
    return out


def render_step(diff: StepDiff, unit: str) -> str:
    """The step's diff: added, sent, withheld and why (a few lines above the parse)."""
    if diff.quiet:
        return (f'<div style="color:{theme.DIM};font-size:8.5pt">{unit} {diff.step}: no parse event, nothing sent, '
                "nothing held</div>")
    rows = []
    for line in diff.added:
        rows.append(f'<span style="color:{theme.OK}">+</span> {html.escape(line)}')
    for line in diff.sent:
        rows.append(f'<span style="color:{theme.ACCENT}">→</span> sent {html.escape(line)}')
    for item in diff.withheld:
        rows.append(f'<span style="color:{theme.WARN}">‖</span> withheld <b>{html.escape(item.what)}</b>: '
                    f'<span style="color:{theme.DIM}">{html.escape(item.why)}</span>')
    head = f'<span style="font-weight:600;letter-spacing:1px">THIS STEP</span> · {unit} {diff.step}'
    return (f'<div style="font-size:8.5pt;margin-bottom:6px;background:{theme.PANEL_ALT}">{head}<br>'
            + "<br>".join(rows) + "</div>")


def _tag(text: str, color: str) -> str:
    return (
        f'&nbsp;<span style="background:{color};color:#111;font-size:8pt;font-weight:600">&nbsp;{html.escape(text)}&nbsp;</span>'
    )


def render_parse(parse: Parse, delta: StepDelta, step: int, unit: str, limit: int = TAIL_CHARS) -> str:
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
        parts.append(f'<div style="{mono};color:{theme.SPAN_COLORS["reasoning"]}">{_field(parse.reasoning, delta.reasoning, limit)}</div>')
    if parse.content or delta.content or not parse.calls:
        parts.append(f'<p style="{head}">CONTENT <span style="font-weight:400">· {len(parse.content):,} chars</span></p>')
        body = _field(parse.content, delta.content, limit) or f'<span style="color:{theme.FAINT}">(empty)</span>'
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
        args = _field(call.arguments, delta.arguments.get(index, ""), limit) or f'<span style="color:{theme.FAINT}">(no arguments yet)</span>'
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
        unit = state.analysis.unit
        keep = self.verticalScrollBar().value()
        limit = LIVE_TAIL_CHARS if state.live else TAIL_CHARS
        page = render_step(state.step_diff(index), unit) + render_parse(view.parse, view.delta, view.step, unit, limit)
        self.setHtml(page)
        if f'name="{CHANGE_ANCHOR}"' in page:
            self.scrollToAnchor(CHANGE_ANCHOR)  # the text this step changed: often far below a long field
        else:
            self.verticalScrollBar().setValue(keep)  # nothing changed here: stay where the reader was
