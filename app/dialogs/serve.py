"""The Serve dialog: what to serve (a recording or session folder, the quirks library, the model live), and how.

It only collects; :func:`config_from_values` and :func:`replier_from_values`
validate with the checks ``callscope serve`` makes, raising ``ValueError``
with a one-line message. The window serves on loopback only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFileDialog,
    QFormLayout,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from callscope.dialogs.common import (
    caption_label,
    choose_folder,
    clients_edit,
    clients_from_text,
    folder_row,
    ok_cancel_buttons,
    with_buttons,
)
from callscope.engine.capture.proxy import is_loopback, parse_listen
from callscope.engine.capture.request import RequestError
from callscope.engine.policies import POLICY_IDS
from callscope.engine.serve import DEFAULT_HOST, DEFAULT_PORT, ServeConfig, SourceError
from callscope.engine.serve.choose import parse_speed

RECORDING, QUIRKS, MODEL = "recording", "quirks", "model"
AS_RECORDED = "as recorded"


@dataclass(slots=True)
class ServeValues:
    mode: str = RECORDING
    source: str = "headline_701_tokens"  # a path, a shipped fixture's name, or a session folder
    listen: str = f"{DEFAULT_HOST}:{DEFAULT_PORT}"
    speed: str = "1"  # a factor, or max
    policy: str = AS_RECORDED  # or a policy id
    record_dir: str = ""
    clients: str = ""


def config_from_values(values: ServeValues) -> ServeConfig:
    """The server's configuration; a mistake is one line (``ValueError``), as ``callscope serve`` says it."""
    try:
        host, port = parse_listen(values.listen)
    except RequestError as exc:
        raise ValueError(str(exc)) from None
    if not is_loopback(host):
        raise ValueError(f"{host} is not loopback: the window serves on loopback only (callscope serve "
                         "--allow-remote serves beyond it)")
    try:
        factor = parse_speed(values.speed)
    except ValueError:
        raise ValueError(f"speed must be a number > 0 or max, not {values.speed!r}") from None
    clients = clients_from_text(values.clients)
    record = values.record_dir.strip()
    return ServeConfig(host, port, factor, atomic=values.policy == "atomic",
                       record_dir=Path(record).expanduser() if record else None, clients=clients)


def replier_from_values(values: ServeValues) -> Any:
    """What answers: the recording's streams, the quirks, or the model (loaded when the server starts)."""
    from callscope.engine.serve import serve_quirks, serve_recording

    policy = None if values.policy == AS_RECORDED else values.policy
    if values.mode == MODEL:
        from callscope.engine.serve.model import ModelOptions, ModelSource

        return ModelSource(ModelOptions(policy=policy or "incremental", n_ctx=8192))
    try:
        if values.mode == QUIRKS:
            return serve_quirks()
        if not values.source.strip():
            raise ValueError("choose the recording (or session folder) to serve")
        return serve_recording(values.source.strip(), policy)
    except SourceError as exc:
        raise ValueError(str(exc)) from None


class ServeDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, values: ServeValues | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Serve: play a stream to real clients")
        values = values or ServeValues()
        self.recording_mode = QRadioButton("A recording, a shipped fixture or a proxy session folder")
        self.quirks_mode = QRadioButton("The quirks library (the request's model picks the quirk)")
        self.model_mode = QRadioButton("The packaged model, live (honours the request's tools and tool_choice)")
        {QUIRKS: self.quirks_mode, MODEL: self.model_mode}.get(values.mode, self.recording_mode).setChecked(True)
        self.source = QLineEdit(values.source)
        self.source.setToolTip("a .jsonl trace, a fixture's name (headline_701_tokens), a capture, a HAR or SSE dump, "
                               "or a proxy session folder (its turns in order)")
        self.listen = QLineEdit(values.listen)
        self.listen.setToolTip("HOST:PORT on loopback (port 0 picks a free one); point the client's base_url at "
                               "http://HOST:PORT/v1")
        self.speed = QLineEdit(values.speed)
        self.speed.setToolTip("recorded times divided by this (2: twice as fast), or max: no pauses")
        self.policy = QComboBox()
        self.policy.addItems([AS_RECORDED, *POLICY_IDS])
        self.policy.setCurrentText(values.policy)
        self.policy.setToolTip("how the tool call goes out: a generation (a trace, the model) streamed by any policy; "
                               "a server's stream as recorded, or atomic (each call whole)")
        self.record_dir = QLineEdit(values.record_dir)
        self.record_dir.setPlaceholderText("empty: record nothing (turns are still shown)")
        self.clients = clients_edit(values.clients, "judge each answer")
        form = QFormLayout()
        form.addRow("serve", with_buttons(self.source, [("File…", self._pick_file), ("Folder…", self._pick_folder)]))
        form.addRow("listen on", self.listen)
        form.addRow("speed", self.speed)
        form.addRow("policy", self.policy)
        form.addRow("record into", folder_row(self, self.record_dir, "Record served turns into"))
        form.addRow("client profiles", self.clients)
        hint = caption_label("Endpoints: POST /v1/chat/completions, /v1/responses, /v1/messages and GET /v1/models. "
                             "A stream recorded in one protocol is converted for a client of another. Each answer is "
                             "a turn, listed as it is sent and opened in the panes.", wrap=True)
        buttons, self.ok = ok_cancel_buttons(self, "Serve")
        layout = QVBoxLayout(self)
        for widget in (self.recording_mode, self.quirks_mode, self.model_mode):
            layout.addWidget(widget)
            widget.toggled.connect(self._mode_changed)
        layout.addLayout(form)
        layout.addWidget(hint)
        layout.addWidget(buttons)
        self._mode_changed()

    def mode(self) -> str:
        return QUIRKS if self.quirks_mode.isChecked() else MODEL if self.model_mode.isChecked() else RECORDING

    def _mode_changed(self) -> None:
        self.source.setEnabled(self.mode() == RECORDING)

    def _pick_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A recording to serve", str(Path.cwd()),
                                              "Recordings (*.jsonl *.sse *.har *.txt *.trace);;All files (*)")
        if path:
            self.source.setText(path)

    def _pick_folder(self) -> None:
        folder = choose_folder(self, "A proxy session folder to serve")
        if folder:
            self.source.setText(folder)

    def values(self) -> ServeValues:
        return ServeValues(self.mode(), self.source.text().strip(), self.listen.text().strip(),
                           self.speed.text().strip(), self.policy.currentText(), self.record_dir.text().strip(),
                           self.clients.text().strip())

