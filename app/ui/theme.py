"""Colours and fonts every pane shares, so a kind of chunk or span looks the same everywhere."""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QFontDatabase

from callscope.engine.core.shipped import resource

STYLE_FILE = resource("style", "dark.qss")

BACKGROUND = "#16181d"
PANEL = "#1d2026"
PANEL_ALT = "#22262d"
BORDER = "#2e333c"
GRID = "#262a32"
TEXT = "#d8dce3"
DIM = "#6b7280"
FAINT = "#4b5160"
ACCENT = "#4f9dff"
CURSOR = "#ffd166"
HOVER = "#9aa4b2"
OK = "#5fd38d"
BAD = "#ff6b6b"
WARN = "#f0a35e"

#: Wire chunk kinds (the emitted-deltas table, the wire lanes, the TTFD plot).
CHUNK_COLORS = {
    "role": "#8b93a1",
    "content": "#c7cdd6",
    "reasoning": "#c39ae6",
    "header": "#f0a35e",
    "arguments": "#5fd38d",
    "finish": "#61afef",
}
#: Parse-event kinds (the parse lane).
PARSE_COLORS = {
    "content": "#c7cdd6",
    "reasoning": "#c39ae6",
    "call opened": "#f0a35e",
    "name complete": "#ffd166",
    "arguments": "#5fd38d",
    "revised": "#ff9f43",
    "failed": "#ff6b6b",
}
ATOMIC_COLOR = "#ff6b6b"
POLICY_COLOR = "#5fd38d"
VIOLATION_COLOR = "#ff4d6d"
TOKEN_COLOR = "#7c8595"

#: Text-pane span kinds; arguments cycle through CALL_COLORS by call index.
SPAN_COLORS = {
    "content": "#d8dce3",
    "reasoning": "#c39ae6",
    "call": "#f0a35e",
    "held": "#8b93a1",
}
CALL_COLORS = ("#5fd38d", "#56c8d8", "#e5c07b", "#ff8fab", "#a0b4ff")
TOKEN_SHADES = ("#1b1e24", "#2a303a")  # alternate token backgrounds: token boundaries visible
NEW_TEXT_BG = "#1f4d33"  # what changed at this step


def call_color(index: int | None) -> str:
    return CALL_COLORS[(index or 0) % len(CALL_COLORS)]


def qcolor(hex_color: str, alpha: int = 255) -> QColor:
    color = QColor(hex_color)
    color.setAlpha(alpha)
    return color


#: Fallbacks for characters DejaVu lacks (CJK): scripts/system-deps.sh installs the first.
CJK_FAMILIES = ("WenQuanYi Micro Hei Mono", "Noto Sans Mono CJK SC", "Noto Sans CJK SC")
#: Emoji in generated text (models write them): scripts/system-deps.sh installs Noto Color Emoji when none is present.
EMOJI_FAMILIES = ("Noto Color Emoji",)
FALLBACK_FAMILIES = (*CJK_FAMILIES, *EMOJI_FAMILIES)


#: The same family list for rich-text panes (CSS ``font-family``).
MONO_CSS = ", ".join(f"'{f}'" for f in ("DejaVu Sans Mono", *FALLBACK_FAMILIES)) + ", monospace"


def mono_font(size: int = 10) -> QFont:
    """A readable fixed-pitch font (DejaVu Sans Mono when present), falling back to CJK and emoji fonts."""
    font = QFont("DejaVu Sans Mono")
    if not QFontDatabase.hasFamily("DejaVu Sans Mono"):
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setFamilies([font.family(), *(f for f in FALLBACK_FAMILIES if QFontDatabase.hasFamily(f))])
    font.setStyleHint(QFont.StyleHint.Monospace)
    font.setPointSize(size)
    return font


def style_sheet() -> str:
    try:
        # url(@STYLE_DIR@/x.svg): Qt resolves style-sheet urls against the working directory, not the file
        return STYLE_FILE.read_text(encoding="utf-8").replace("@STYLE_DIR@", STYLE_FILE.parent.as_posix())
    except OSError:
        return ""
