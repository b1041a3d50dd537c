"""The Paste-text dialog: a raw generation, its format, how to step it, and optional tools.

The format defaults to ``auto``: the window tries every parser on the text and
keeps the one that finds complete calls (:mod:`callscope.engine.inspector.paste_format`),
saying which and why in the status line. The Template pane opens it with the
template's own parser chosen instead.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QComboBox, QDialog, QFormLayout, QPlainTextEdit, QSpinBox, QWidget

from callscope.dialogs.common import ToolsEditor, lay_out_source_dialog
from callscope.engine.formats import FORMAT_IDS, supports_thinking
from callscope.ui import theme


@dataclass(slots=True)
class PasteValues:
    text: str
    format_id: str
    tools_text: str
    unit: str
    size: int
    rate: float | None
    thinking: bool = False  # the prompt ended with <think>: the text starts inside reasoning


#: The format entry that detects the format from the text.
AUTO = "auto"


class PasteDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, format_id: str = AUTO, thinking: bool = False) -> None:
        super().__init__(parent)
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
        self.thinking = QCheckBox("starts inside reasoning (prompt ended with <think>)")
        self.thinking.setChecked(thinking)
        self.thinking.setToolTip("The chat template opened a reasoning block, so the text is reasoning until </think>. "
                                 "Only formats with reasoning (e.g. hermes, qwen3_coder, deepseek_v31) read it.")
        form = QFormLayout()
        form.addRow("format", self.format)
        form.addRow("step", self.step)
        form.addRow("timing", self.rate)
        form.addRow("", self.thinking)
        self.format.currentTextChanged.connect(self._format_changed)
        self._format_changed(self.format.currentText())
        lay_out_source_dialog(
            self, form, "tools (optional: gives parameter types to qwen3_coder)", self.tools, "Replay", head=self.text
        )

    def _format_changed(self, format_id: str) -> None:
        """A format without reasoning has nothing to start inside: the box is greyed (its tick is kept)."""
        self.thinking.setEnabled(format_id == AUTO or supports_thinking(format_id))

    def values(self) -> PasteValues:
        step = self.step.currentText()
        unit, size = ("byte", 1) if step == "byte" else ("char", 1 if step == "char" else int(step.split()[0]))
        return PasteValues(
            self.text.toPlainText(), self.format.currentText(), self.tools.text(), unit, size,
            float(self.rate.value()) if self.rate.value() > 0 else None,
            self.thinking.isChecked() and self.thinking.isEnabled(),
        )
