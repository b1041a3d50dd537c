"""The Run-a-model dialog: model, wire format, policy, prompt, tools, forced tool, max tokens, seed.

It only collects; the window checks the tools JSON and the model path before starting the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from callscope.dialogs.common import ToolsEditor, lay_out_source_dialog
from callscope.engine.decode.loop import SamplerSettings
from callscope.engine.formats import FORMAT_IDS
from callscope.engine.policies import POLICY_IDS


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
