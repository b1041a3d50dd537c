"""The Run-a-model dialog: demo preset, model, wire format, policy, prompt, tools, forced tool, max tokens, seed.

It only collects; the window checks the tools JSON and the model path before starting the run.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
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

from callscope.dialogs.common import ToolsEditor, lay_out_source_dialog, thinking_combo
from callscope.engine.decode.loop import SamplerSettings
from callscope.engine.formats import FORMAT_IDS
from callscope.engine.policies import POLICY_IDS

#: What "force tool" offers before the tools' names.
FORCE_MODES = ("any", "off")


def tool_names(tools_text: str) -> list[str]:
    """The function names in a tools JSON the user is typing (none while it does not parse)."""
    from callscope.engine.inspector.sources import SourceError, parse_tools_text

    try:
        tools = parse_tools_text(tools_text) or []
    except SourceError:
        return []
    names = []
    for tool in tools:
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str) and name and name not in names and name not in FORCE_MODES:
            names.append(name)
    return names


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
    #: The demo preset the request came from (``callscope.engine.decode.demos``): its forced-call settings apply
    #: (one long call, no content line...). None: the engine's defaults (1-2 calls after a short content line).
    demo: str | None = None
    #: ``--thinking``: auto, on or off.
    thinking: str = "auto"


def demo_values(name: str | None = None) -> RunValues:
    """The Run values of a demo preset (the default demo for None): what the window starts with."""
    from callscope.engine.decode.demos import get_demo

    demo = get_demo(name)
    return RunValues(None, "auto", "incremental", demo.prompt, demo.tools_text(), "any", demo.max_tokens,
                     SamplerSettings().seed, demo=demo.name)


class RunDialog(QDialog):
    """The live run's settings; ``last`` (the values of the previous run this session) pre-fills every field."""

    def __init__(self, parent: QWidget | None = None, last: RunValues | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Run a model live")
        self.resize(720, 640)
        from callscope.engine.decode.demos import DEMOS, get_demo

        self.demo = QComboBox()
        self.demo.addItem("(none: your own request)", None)
        for preset in DEMOS.values():
            self.demo.addItem(preset.name, preset.name)
            self.demo.setItemData(self.demo.count() - 1, preset.summary, Qt.ItemDataRole.ToolTipRole)
        self.demo.setToolTip("a demo preset fills the prompt, tools and max tokens, and forces its call its own way")
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
        self.thinking = thinking_combo()
        self.prompt = QPlainTextEdit()
        self.prompt.setMaximumHeight(80)
        # the default demo's tools preset (write_file.json -> "write_file"); _fill then puts in the last run's
        self.tools = ToolsEditor(default=get_demo().tools_file.removesuffix(".json"))
        self.force = QComboBox()  # any, off, then the tools' names (kept in step with the tools editor)
        self.force.addItems(FORCE_MODES)
        self.force.setToolTip("any: force some tool call (grammar); off: let the model choose; or one of the tools")
        self.tools.editor.textChanged.connect(self._offer_tools)
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
        form.addRow("demo", self.demo)
        form.addRow("model", model_row)
        form.addRow("wire format", self.format)
        form.addRow("policy", self.policy)
        form.addRow("thinking", self.thinking)
        form.addRow("prompt", self.prompt)
        form.addRow("force tool", self.force)
        form.addRow("max tokens", max_row)
        form.addRow("seed", self.seed)
        lay_out_source_dialog(self, form, "tools", self.tools, "Run")
        self._fill(last if last is not None else demo_values())
        self.demo.currentIndexChanged.connect(self._demo_chosen)

    def _demo_chosen(self, _index: int) -> None:
        """Picking a demo fills its request; the model, format, policy and seed stay as they are."""
        name = self.demo.currentData()
        if name is None:
            return
        demo = demo_values(name)
        self.prompt.setPlainText(demo.prompt)
        from callscope.engine.decode.demos import get_demo

        self.tools.picker.setCurrentText(get_demo(name).tools_file.removesuffix(".json"))  # the preset, named
        if self.tools.text() != demo.tools_text:
            self.tools.editor.setPlainText(demo.tools_text)
        self.max_tokens.setValue(demo.max_tokens)

    def _offer_tools(self) -> None:
        """The force-tool choices: any, off, and every tool the editor's JSON names (the choice kept if it still is)."""
        chosen = self.force.currentText()
        names = tool_names(self.tools.text())
        items = [*FORCE_MODES, *names]
        if [self.force.itemText(i) for i in range(self.force.count())] == items:
            return
        self.force.blockSignals(True)
        try:
            self.force.clear()
            self.force.addItems(items)
            self.force.setCurrentIndex(max(0, self.force.findText(chosen)))
        finally:
            self.force.blockSignals(False)

    def _fill(self, v: RunValues) -> None:
        self.demo.setCurrentIndex(max(0, self.demo.findData(v.demo)))
        self.model.setText(v.model_path or "")
        self.format.setCurrentText(v.format_id)
        self.policy.setCurrentText(v.policy)
        self.thinking.setCurrentText(v.thinking)
        self.prompt.setPlainText(v.prompt)
        if v.tools_text != self.tools.text():
            self.tools.editor.setPlainText(v.tools_text)
        self._offer_tools()
        if self.force.findText(v.force_tool) < 0:
            self.force.addItem(v.force_tool)  # the last run's choice, though the tools no longer name it
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
            self.max_tokens.value(), self.seed.value(), self.demo.currentData(), self.thinking.currentText(),
        )
