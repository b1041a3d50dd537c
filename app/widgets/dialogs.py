"""The Paste-text, Run-a-model and keyboard-shortcut dialogs.

Dialogs only collect values; the main window validates them (tools JSON,
model path) and reports problems through the error presenter, so a bad value
never leaves a half-loaded view.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from callscope.engine.core.shipped import resource
from callscope.engine.decode.loop import SamplerSettings
from callscope.engine.formats import FORMAT_IDS, supports_thinking
from callscope.engine.policies import POLICY_IDS
from callscope.widgets import theme

TOOL_PRESETS = resource("tools")


def tool_presets() -> dict[str, str]:
    """Shipped tool presets: name -> JSON text."""
    presets = {}
    if TOOL_PRESETS.is_dir():
        for path in sorted(TOOL_PRESETS.glob("*.json")):
            try:
                presets[path.stem] = path.read_text(encoding="utf-8")
            except OSError:
                continue
    return presets



def lay_out_source_dialog(
    dialog: QDialog, form: QFormLayout, caption: str, editor: QWidget, ok_text: str, head: QWidget | None = None
) -> None:
    """The shape every source dialog shares: [a main editor], the form, a captioned editor, OK/Cancel."""
    layout = QVBoxLayout(dialog)
    if head is not None:
        layout.addWidget(head, 3)
    layout.addLayout(form)
    label = QLabel(caption)
    label.setObjectName("Caption")
    layout.addWidget(label)
    layout.addWidget(editor, 1)
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
    ok.setText(ok_text)
    ok.setObjectName("Primary")
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    layout.addWidget(buttons)

class ToolsEditor(QWidget):
    """A JSON editor for the request's tools with a preset picker."""

    def __init__(self, default: str | None = "default", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.presets = tool_presets()
        self.picker = QComboBox()
        self.picker.addItem("(none)", "")
        for name, text in self.presets.items():
            self.picker.addItem(name, text)
        self.editor = QPlainTextEdit()
        self.editor.setFont(theme.mono_font(9))
        self.editor.setPlaceholderText('OpenAI tools array, e.g. [{"type": "function", "function": {"name": ...}}]')
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        label = QLabel("preset")
        label.setObjectName("Caption")
        row.addWidget(label)
        row.addWidget(self.picker, 1)
        layout.addLayout(row)
        layout.addWidget(self.editor, 1)
        self.picker.currentIndexChanged.connect(lambda i: self.editor.setPlainText(self.picker.itemData(i) or ""))
        if default and default in self.presets:
            self.picker.setCurrentText(default)

    def text(self) -> str:
        return self.editor.toPlainText()


@dataclass(slots=True)
class PasteValues:
    text: str
    format_id: str
    tools_text: str
    unit: str
    size: int
    rate: float | None
    thinking: bool = False  # the prompt ended with <think>: the text starts inside reasoning


class PasteDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Paste a generation")
        self.resize(760, 620)
        self.text = QPlainTextEdit()
        self.text.setFont(theme.mono_font(10))
        self.text.setPlaceholderText("Paste the raw text a model generated (markers and all)…")
        self.format = QComboBox()
        self.format.addItems(FORMAT_IDS)
        self.step = QComboBox()
        self.step.addItems(["char", "byte", "4 chars", "16 chars"])
        self.rate = QSpinBox()
        self.rate.setRange(0, 10000)
        self.rate.setValue(30)
        self.rate.setSuffix(" steps/s")
        self.rate.setSpecialValueText("untimed")
        self.tools = ToolsEditor(default=None)
        self.thinking = QCheckBox("starts inside reasoning (prompt ended with <think>)")
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
        self.thinking.setEnabled(supports_thinking(format_id))

    def values(self) -> PasteValues:
        step = self.step.currentText()
        unit, size = ("byte", 1) if step == "byte" else ("char", 1 if step == "char" else int(step.split()[0]))
        return PasteValues(
            self.text.toPlainText(), self.format.currentText(), self.tools.text(), unit, size,
            float(self.rate.value()) if self.rate.value() > 0 else None,
            self.thinking.isChecked() and self.thinking.isEnabled(),
        )


@dataclass(slots=True)
class RunValues:
    model_path: str | None
    format_id: str
    policy: str
    prompt: str
    tools_text: str
    force_tool: str
    max_tokens: int
    seed: int


class RunDialog(QDialog):
    """The live run's settings; ``last`` (the values of the previous run this session) pre-fills every field."""

    def __init__(self, parent: QWidget | None = None, last: RunValues | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Run a model live")
        self.resize(720, 640)
        self.model = QLineEdit()
        self.model.setPlaceholderText("packaged SmolLM2-135M-Instruct (default)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model, 1)
        model_row.addWidget(browse)
        self.format = QComboBox()
        self.format.addItems(["auto", *FORMAT_IDS])
        self.format.setToolTip("auto: from the model's chat template")
        self.policy = QComboBox()
        self.policy.addItems(POLICY_IDS)
        from callscope.engine.decode.messages import DEFAULT_PROMPT

        self.prompt = QPlainTextEdit(DEFAULT_PROMPT)
        self.prompt.setMaximumHeight(80)
        self.tools = ToolsEditor(default="default")
        self.force = QComboBox()
        self.force.setEditable(True)
        self.force.addItems(["any", "off"])
        self.force.setToolTip("any: force some tool call (grammar); off: let the model choose; or a tool name")
        from callscope.engine.decode.model import DEFAULT_N_CTX

        self.max_tokens = QSpinBox()
        # The run's context window (prompt included) bounds what it can generate: the range says so.
        self.max_tokens.setRange(1, DEFAULT_N_CTX)
        self.max_tokens.setValue(256)
        self.max_tokens.setToolTip(f"1 to {DEFAULT_N_CTX:,}: the run's context window is {DEFAULT_N_CTX:,} tokens, "
                                   "prompt included; a run that fills it ends with finish cause 'length'")
        max_row = QHBoxLayout()
        max_row.addWidget(self.max_tokens)
        self.max_tokens_range = QLabel(f"at most {DEFAULT_N_CTX:,} (the context window, prompt included)")
        self.max_tokens_range.setObjectName("Caption")
        max_row.addWidget(self.max_tokens_range, 1)
        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.seed.setValue(SamplerSettings().seed)  # the engine's (and the CLI's) default
        form = QFormLayout()
        form.addRow("model", model_row)
        form.addRow("wire format", self.format)
        form.addRow("policy", self.policy)
        form.addRow("prompt", self.prompt)
        form.addRow("force tool", self.force)
        form.addRow("max tokens", max_row)
        form.addRow("seed", self.seed)
        lay_out_source_dialog(self, form, "tools", self.tools, "Run")
        if last is not None:
            self._fill(last)

    def _fill(self, v: RunValues) -> None:
        self.model.setText(v.model_path or "")
        self.format.setCurrentText(v.format_id)
        self.policy.setCurrentText(v.policy)
        self.prompt.setPlainText(v.prompt)
        if v.tools_text != self.tools.text():
            self.tools.editor.setPlainText(v.tools_text)
        self.force.setCurrentText(v.force_tool)
        self.max_tokens.setValue(v.max_tokens)
        self.seed.setValue(v.seed)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose a GGUF model", "", "GGUF models (*.gguf);;All files (*)")
        if path:
            self.model.setText(path)

    def values(self) -> RunValues:
        return RunValues(
            self.model.text().strip() or None, self.format.currentText(), self.policy.currentText(),
            self.prompt.toPlainText(), self.tools.text(), self.force.currentText().strip() or "any",
            self.max_tokens.value(), self.seed.value(),
        )


class ShortcutsDialog(QDialog):
    """``?``: every keyboard shortcut, read from the window's actions (never out of date)."""

    def __init__(self, rows: list[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(460, 520)
        table = QTableWidget(len(rows), 2)
        table.setHorizontalHeaderLabels(["keys", "action"])
        table.verticalHeader().hide()
        table.horizontalHeader().setStretchLastSection(True)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for i, (keys, what) in enumerate(rows):
            table.setItem(i, 0, QTableWidgetItem(keys))
            table.setItem(i, 1, QTableWidgetItem(what))
        table.resizeColumnToContents(0)
        self.table = table
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        layout.addWidget(buttons)
        self._fit_to_table()

    def _fit_to_table(self) -> None:
        """Tall enough for every row (no scrolling a list of a dozen shortcuts), within the screen."""
        table = self.table
        table.resizeRowsToContents()
        table.resizeColumnsToContents()
        table.horizontalHeader().setStretchLastSection(True)
        rows = sum(table.rowHeight(i) for i in range(table.rowCount()))
        height = rows + table.horizontalHeader().sizeHint().height() + 2 * table.frameWidth() + 2
        width = sum(table.columnWidth(i) for i in range(table.columnCount())) + 2 * table.frameWidth() + 40
        table.setMinimumHeight(height)
        table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        limit = screen.height() - 100 if screen is not None else height  # room for the Close button and margins
        if height > limit:  # a very long list on a small screen scrolls after all
            table.setMinimumHeight(max(200, limit))
        self.resize(max(460, width), self.sizeHint().height())


def describe_shortcuts(actions) -> list[tuple[str, str]]:
    rows = []
    for action in actions:
        keys = [k.toString(QKeySequence.SequenceFormat.NativeText) for k in action.shortcuts()]
        keys = [k for k in keys if k]
        if keys:
            rows.append((" / ".join(keys), action.text().replace("&", "").rstrip(".…")))
    return rows


def choose_folder(parent: QWidget, title: str) -> str:
    return QFileDialog.getExistingDirectory(parent, title, str(Path.cwd()))


