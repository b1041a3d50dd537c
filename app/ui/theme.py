"""Colours and fonts every pane shares, so a kind of chunk or span looks the same everywhere.

Two palettes, dark (the default) and light, and "system" (the desktop's colour
scheme, followed when it changes). :func:`apply` switches the module's colour
names and the application's style sheet; panes read ``theme.NAME`` when they
draw, and those that build colours once (plots, text formats) have a
``restyle()`` the window calls after a switch.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QFont, QFontDatabase

from callscope.engine.core.shipped import resource

STYLE_FILES = {"dark": resource("style", "dark.qss"), "light": resource("style", "light.qss")}
STYLE_FILE = STYLE_FILES["dark"]
THEMES = ("dark", "light", "system")

# The dark palette (the default); LIGHT below overrides every one of these names.
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
CURSOR_HOVER = "#ffe39a"
HOVER = "#9aa4b2"
HOVER_FILL = "#262a32"
AXIS_TEXT = "#9aa4b2"
LEGEND_TEXT = "#c7cdd6"
MARK_EDGE = "#101216"
OK = "#5fd38d"
BAD = "#ff6b6b"
WARN = "#f0a35e"
#: Wire chunk kinds (the emitted-deltas table, the wire lanes, the TTFD plot).
CHUNK_COLORS = {"role": "#8b93a1", "content": "#c7cdd6", "reasoning": "#c39ae6", "header": "#f0a35e", "arguments": "#5fd38d", "finish": "#61afef"}
#: Parse-event kinds (the parse lane).
PARSE_COLORS = {"content": "#c7cdd6", "reasoning": "#c39ae6", "call opened": "#f0a35e", "name complete": "#ffd166", "arguments": "#5fd38d", "revised": "#ff9f43", "failed": "#ff6b6b"}
ATOMIC_COLOR = "#ff6b6b"
POLICY_COLOR = "#5fd38d"
VIOLATION_COLOR = "#ff4d6d"
TOKEN_COLOR = "#7c8595"
BOOKMARK_COLOR = "#56c8d8"
#: Text-pane span kinds; arguments cycle through CALL_COLORS by call index.
SPAN_COLORS = {"content": "#d8dce3", "reasoning": "#c39ae6", "call": "#f0a35e", "held": "#8b93a1"}
CALL_COLORS = ("#5fd38d", "#56c8d8", "#e5c07b", "#ff8fab", "#a0b4ff")
#: Alternate token backgrounds: token boundaries visible.
TOKEN_SHADES = ("#1b1e24", "#2a303a")
CURRENT_TOKEN_TEXT = "#111111"
PICK_BG = "#244a7a"
#: What changed at this step.
NEW_TEXT_BG = "#1f4d33"
NEW_TEXT = "#ffffff"
DIFF_ADD_BG = "#1f4d33"
DIFF_ADD = "#9ff0bf"
DIFF_DEL_BG = "#5a1f27"
DIFF_DEL = "#ffb3b3"
DIFFERS_BG = "#4a3519"
ICON = "#d8dce3"

#: The palette names :func:`apply` switches.
NAMES = ("BACKGROUND", "PANEL", "PANEL_ALT", "BORDER", "GRID", "TEXT", "DIM", "FAINT", "ACCENT", "CURSOR", "CURSOR_HOVER", "HOVER", "HOVER_FILL", "AXIS_TEXT", "LEGEND_TEXT", "MARK_EDGE", "OK", "BAD", "WARN", "CHUNK_COLORS", "PARSE_COLORS", "ATOMIC_COLOR", "POLICY_COLOR", "VIOLATION_COLOR", "TOKEN_COLOR", "BOOKMARK_COLOR", "SPAN_COLORS", "CALL_COLORS", "TOKEN_SHADES", "CURRENT_TOKEN_TEXT", "PICK_BG", "NEW_TEXT_BG", "NEW_TEXT", "DIFF_ADD_BG", "DIFF_ADD", "DIFF_DEL_BG", "DIFF_DEL", "DIFFERS_BG", "ICON")
DARK: dict[str, object] = {name: globals()[name] for name in NAMES}

LIGHT: dict[str, object] = {
    "BACKGROUND": "#eef0f4",
    "PANEL": "#ffffff",
    "PANEL_ALT": "#f3f5f8",
    "BORDER": "#cfd4dc",
    "GRID": "#e3e6eb",
    "TEXT": "#1f2430",
    "DIM": "#5f6673",
    "FAINT": "#a3a9b4",
    "ACCENT": "#1f6fd6",
    "CURSOR": "#d99a00",
    "CURSOR_HOVER": "#b07d00",
    "HOVER": "#6b7280",
    "HOVER_FILL": "#f6f7f9",
    "AXIS_TEXT": "#4b5260",
    "LEGEND_TEXT": "#2b303b",
    "MARK_EDGE": "#ffffff",
    "OK": "#1a8f4c",
    "BAD": "#c8323c",
    "WARN": "#b45f06",
    "CHUNK_COLORS": {
        "role": "#6b7280", "content": "#3b4250", "reasoning": "#7b3fb8", "header": "#c05b00",
        "arguments": "#1a8f4c", "finish": "#1f6fd6",
    },
    "PARSE_COLORS": {
        "content": "#3b4250", "reasoning": "#7b3fb8", "call opened": "#c05b00", "name complete": "#a67600",
        "arguments": "#1a8f4c", "revised": "#d2640a", "failed": "#c8323c",
    },
    "ATOMIC_COLOR": "#c8323c",
    "POLICY_COLOR": "#1a8f4c",
    "VIOLATION_COLOR": "#d0244a",
    "TOKEN_COLOR": "#8a919e",
    "BOOKMARK_COLOR": "#0e8a9c",
    "SPAN_COLORS": {"content": "#1f2430", "reasoning": "#7b3fb8", "call": "#c05b00", "held": "#6b7280"},
    "CALL_COLORS": ("#1a8f4c", "#0e7f91", "#9a6b00", "#c2356b", "#4056c8"),
    "TOKEN_SHADES": ("#ffffff", "#eceff4"),
    "CURRENT_TOKEN_TEXT": "#111111",
    "PICK_BG": "#cfe0fb",
    "NEW_TEXT_BG": "#cdeed9",
    "NEW_TEXT": "#0b3d20",
    "DIFF_ADD_BG": "#cdeed9",
    "DIFF_ADD": "#0b3d20",
    "DIFF_DEL_BG": "#f8d3d6",
    "DIFF_DEL": "#7a1018",
    "DIFFERS_BG": "#fbe7c8",
    "ICON": "#2b303b",
}

#: The palette in use ("dark" or "light"); "system" resolves to one of them.
current = "dark"

assert set(LIGHT) == set(NAMES), "the light palette names every colour"


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


def style_sheet(name: str | None = None) -> str:
    """The style sheet of palette ``name`` (the current one by default)."""
    path = STYLE_FILES.get(name or current, STYLE_FILE)
    try:
        # url(@STYLE_DIR@/x.svg): Qt resolves style-sheet urls against the working directory, not the file
        return path.read_text(encoding="utf-8").replace("@STYLE_DIR@", path.parent.as_posix())
    except OSError:
        return ""


def system_scheme() -> str:
    """``dark`` or ``light``: the desktop's colour scheme (dark when the platform does not say)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance()
    if app is None:
        return "dark"
    scheme = QGuiApplication.styleHints().colorScheme()
    return "light" if scheme == Qt.ColorScheme.Light else "dark"


def resolve(name: str) -> str:
    """The palette a theme choice means: ``system`` follows the desktop."""
    if name not in THEMES:
        raise ValueError(f"unknown theme {name!r}; known themes: {', '.join(THEMES)}")
    return system_scheme() if name == "system" else name


def apply(name: str) -> str:
    """Switch to theme ``name`` (dark, light, system): colour names, pyqtgraph defaults, the app's style
    sheet. Returns the palette applied. Panes that cache colours need ``restyle()`` after it."""
    global current
    palette = resolve(name)
    current = palette
    globals().update(DARK if palette == "dark" else LIGHT)
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is not None:
        import pyqtgraph as pg

        pg.setConfigOptions(foreground=AXIS_TEXT, background=PANEL)
        app.setStyleSheet(style_sheet(palette))
    return palette
