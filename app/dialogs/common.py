"""What the source dialogs share: their layout, OK/Cancel, the tools editor with its presets, folder rows, the
client-profiles field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
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
    QVBoxLayout,
    QWidget,
)

from callscope.engine.core.shipped import resource
from callscope.engine.streams.clients import PROFILES, default_profiles, parse_profiles
from callscope.ui import theme

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



#: ``--thinking``'s values as the dialogs offer them, with what each means.
THINKING_MODES = {
    "auto": "the text decides when the template may have opened a reasoning block: a reasoning closer first means "
    "it did (thinking on), a tool call or other markup first means it did not; without such a template, off",
    "on": "the generation starts inside a reasoning block (the prompt ended with <think>)",
    "off": "the generation starts outside reasoning",
}


def thinking_combo(mode: str = "auto") -> QComboBox:
    """A ``thinking: auto | on | off`` picker (the CLI's ``--thinking``), each value explained in its tooltip."""
    combo = QComboBox()
    for value, meaning in THINKING_MODES.items():
        combo.addItem(value)
        combo.setItemData(combo.count() - 1, meaning, Qt.ItemDataRole.ToolTipRole)
    combo.setCurrentText(mode if mode in THINKING_MODES else "auto")
    combo.setToolTip("does the generation start inside a reasoning block? " + "; ".join(
        f"{k}: {v}" for k, v in THINKING_MODES.items()))
    return combo


def lay_out_source_dialog(
    dialog: QDialog, form: QFormLayout, caption: str, editor: QWidget, ok_text: str, head: QWidget | None = None
) -> None:
    """The shape every source dialog shares: [a main editor], the form, a captioned editor, OK/Cancel."""
    layout = QVBoxLayout(dialog)
    if head is not None:
        layout.addWidget(head, 3)
    layout.addLayout(form)
    layout.addWidget(caption_label(caption))
    layout.addWidget(editor, 1)
    buttons, _ = ok_cancel_buttons(dialog, ok_text)
    layout.addWidget(buttons)


def ok_cancel_buttons(dialog: QDialog, ok_text: str | None = None) -> tuple[QDialogButtonBox, QPushButton]:
    """OK/Cancel wired to the dialog's accept/reject, OK styled as the primary action (and named, when given).

    Every dialog that starts something ends with this row; the OK button is returned so that a dialog whose
    action depends on a mode (Start proxy / Attach) can rename it later.
    """
    buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
    ok = buttons.button(QDialogButtonBox.StandardButton.Ok)
    ok.setObjectName("Primary")
    if ok_text is not None:
        ok.setText(ok_text)
    buttons.accepted.connect(dialog.accept)
    buttons.rejected.connect(dialog.reject)
    return buttons, ok


def caption_label(text: str, wrap: bool = False) -> QLabel:
    """A label in the theme's quiet caption style (a hint under a form, a heading over an editor)."""
    label = QLabel(text)
    label.setObjectName("Caption")
    if wrap:
        label.setWordWrap(True)
    return label


def with_buttons(edit: QLineEdit, buttons: list[tuple[str, Callable[[], None]]]) -> QWidget:
    """A line edit with buttons after it (Browse…, File…), one form row: the edit takes the width."""
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(edit, 1)
    for text, slot in buttons:
        button = QPushButton(text)
        button.clicked.connect(slot)
        row.addWidget(button)
    return box


def folder_row(dialog: QWidget, edit: QLineEdit, title: str) -> QWidget:
    """A line edit with a Browse… button that fills it with a chosen folder (left as it was on Cancel)."""

    def pick() -> None:
        folder = choose_folder(dialog, title)
        if folder:
            edit.setText(folder)

    return with_buttons(edit, [("Browse…", pick)])


def clients_edit(text: str, what: str) -> QLineEdit:
    """The ``--client`` field: comma-separated profiles, the defaults as placeholder; ``what`` says what they judge."""
    edit = QLineEdit(text)
    edit.setPlaceholderText(",".join(default_profiles()))
    edit.setToolTip(f"client profiles that {what} ({', '.join(PROFILES)}; none)")
    return edit


def clients_from_text(text: str, error: type[ValueError] = ValueError) -> tuple[str, ...] | None:
    """The profiles a ``--client`` field names (None when empty: the defaults).

    A bad one raises ``error`` (the dialog's own error type, so its caller's ``except`` still catches it),
    prefixed ``client profiles:``: the one line each dialog shows.
    """
    if not text.strip():
        return None
    try:
        return parse_profiles(text)
    except ValueError as exc:
        raise error(f"client profiles: {exc}") from None


class ToolsEditor(QWidget):
    """A JSON editor for the request's tools with a preset picker.

    The picker always names what the editor holds: choosing a preset fills the
    editor, and any text put in the editor (typed, pasted, a last run's tools)
    selects the preset that holds the same tools, or ``(edited)`` when none does.
    """

    EDITED = "(edited)"

    def __init__(self, default: str | None = "default", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.presets = tool_presets()
        self.picker = QComboBox()
        self.picker.addItem("(none)", "")
        for name, text in self.presets.items():
            self.picker.addItem(name, text)
        self.picker.addItem(self.EDITED, None)
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
        self.picker.currentIndexChanged.connect(self._preset_chosen)
        self.editor.textChanged.connect(self._name_the_text)
        if default and default in self.presets:
            self.picker.setCurrentText(default)

    def text(self) -> str:
        return self.editor.toPlainText()

    def _preset_chosen(self, index: int) -> None:
        text = self.picker.itemData(index)
        if text is not None and text != self.text():  # "(edited)" carries no text: it only names the editor's
            self.editor.setPlainText(text)

    def _name_the_text(self) -> None:
        """Select the preset holding the editor's tools (the same JSON, however laid out), else ``(edited)``."""
        index = _preset_index(self.picker, self.text())
        if index != self.picker.currentIndex():
            self.picker.blockSignals(True)
            try:
                self.picker.setCurrentIndex(index)
            finally:
                self.picker.blockSignals(False)


def _preset_index(picker: QComboBox, text: str) -> int:
    """The picker entry whose text is ``text`` (as JSON, when it parses), else the ``(edited)`` entry."""
    wanted = _as_json(text)
    for index in range(picker.count()):
        preset = picker.itemData(index)
        if preset is not None and (preset.strip() == text.strip() or (wanted is not None and _as_json(preset) == wanted)):
            return index
    return picker.count() - 1


def _as_json(text: str) -> object:
    try:
        return json.loads(text) if text.strip() else None
    except ValueError:
        return None


def choose_folder(parent: QWidget, title: str) -> str:
    return QFileDialog.getExistingDirectory(parent, title, str(Path.cwd()))
