"""The Paste-text dialog: a raw generation, its format, how to step it, and optional tools.

The format defaults to ``auto``: the window tries every parser on the text and
keeps the one that finds complete calls (:mod:`callscope.engine.inspector.paste_format`),
saying which and why in the status line. The Template pane opens it with the
template's own parser chosen instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QDialog, QFormLayout, QPlainTextEdit, QSpinBox, QWidget

from callscope.dialogs.common import ToolsEditor, lay_out_source_dialog, thinking_combo
from callscope.engine.formats import FORMAT_IDS, resolve_thinking, supports_thinking
from callscope.ui import theme


@dataclass(slots=True)
class PasteValues:
    text: str
    format_id: str
    tools_text: str
    unit: str
    size: int
    rate: float | None
    #: How the parser starts: inside reasoning (True), outside (False), or undecided ("auto": the text decides).
    thinking: bool | str = False


#: The format entry that detects the format from the text.
AUTO = "auto"


class PasteDialog(QDialog):
    def __init__(
        self, parent: QWidget | None = None, format_id: str = AUTO, thinking: str = "auto", may_open: bool = False
    ) -> None:
        """``may_open``: the text answers a template whose prompt may open a reasoning block (``auto`` then
        leaves it to the text); ``thinking``: the mode the picker starts with."""
        super().__init__(parent)
        self._may_open = may_open
        self.setWindowTitle("Paste a generation")
        self.resize(760, 620)
        self.text = QPlainTextEdit()
        self.text.setFont(theme.mono_font(10))
        self.text.setPlaceholderText("Paste the raw text a model generated (markers and all)…")
        self.format = QComboBox()
        self.format.addItems([AUTO, *FORMAT_IDS])
        self.format.setItemData(0, "try every parser and keep the one that finds complete calls",
                                Qt.ItemDataRole.ToolTipRole)
        self.format.setCurrentText(format_id if format_id in FORMAT_IDS else AUTO)
        self.step = QComboBox()
        self.step.addItems(["char", "byte", "4 chars", "16 chars"])
        self.rate = QSpinBox()
        self.rate.setRange(0, 10000)
        self.rate.setValue(30)
        self.rate.setSuffix(" steps/s")
        self.rate.setSpecialValueText("untimed")
        self.tools = ToolsEditor(default=None)
        self.thinking = thinking_combo(thinking)
        form = QFormLayout()
        form.addRow("format", self.format)
        form.addRow("step", self.step)
        form.addRow("timing", self.rate)
        form.addRow("thinking", self.thinking)
        self.format.currentTextChanged.connect(self._format_changed)
        self._format_changed(self.format.currentText())
        lay_out_source_dialog(
            self, form, "tools (optional: gives parameter types to qwen3_coder)", self.tools, "Replay", head=self.text
        )

    def _format_changed(self, format_id: str) -> None:
        """A format without reasoning has nothing to start inside: the picker is greyed (its value is kept)."""
        self.thinking.setEnabled(format_id == AUTO or supports_thinking(format_id))

    def values(self) -> PasteValues:
        step = self.step.currentText()
        unit, size = ("byte", 1) if step == "byte" else ("char", 1 if step == "char" else int(step.split()[0]))
        return PasteValues(
            self.text.toPlainText(), self.format.currentText(), self.tools.text(), unit, size,
            float(self.rate.value()) if self.rate.value() > 0 else None,
            resolve_thinking(self.thinking.currentText(), self._may_open) if self.thinking.isEnabled() else False,
        )
