"""The Proxy dialog: start a recording proxy (listen address, upstream, record folder), or attach to a session folder.

It only collects; :func:`config_from_values` validates (the same checks as
``callscope proxy``), raising :class:`~callscope.engine.capture.request.RequestError`
with a one-line message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtWidgets import QDialog, QFormLayout, QLineEdit, QRadioButton, QVBoxLayout, QWidget

from callscope.dialogs.common import caption_label, clients_edit, clients_from_text, folder_row, ok_cancel_buttons
from callscope.engine.capture.proxy import ProxyConfig, check_upstream, parse_listen
from callscope.engine.capture.proxy.config import DEFAULT_HOST, DEFAULT_PORT
from callscope.engine.capture.request import RequestError

START, ATTACH = "start", "attach"
DEFAULT_UPSTREAM = "http://127.0.0.1:8080"


@dataclass(slots=True)
class ProxyValues:
    mode: str = START  # start a proxy, or attach to a session folder
    listen: str = f"{DEFAULT_HOST}:{DEFAULT_PORT}"
    upstream: str = DEFAULT_UPSTREAM
    record_dir: str = ""  # empty: record nothing
    clients: str = ""  # empty: the default profiles
    folder: str = ""  # the session folder to attach to


def config_from_values(values: ProxyValues) -> ProxyConfig:
    """The proxy's configuration; a mistake is one line (``RequestError``), as ``callscope proxy`` says it."""
    host, port = parse_listen(values.listen)
    upstream = check_upstream(values.upstream)
    clients = clients_from_text(values.clients, RequestError)
    record = values.record_dir.strip()
    return ProxyConfig(upstream, host, port, Path(record).expanduser() if record else None, clients=clients)


def folder_from_values(values: ProxyValues) -> Path:
    folder = values.folder.strip()
    if not folder:
        raise RequestError("choose the session folder to attach to")
    return Path(folder).expanduser()


class ProxyDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, values: ProxyValues | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Proxy: watch a client's traffic")
        values = values or ProxyValues()
        self.start_mode = QRadioButton("Start a recording proxy")
        self.attach_mode = QRadioButton("Attach to a session folder (a running `callscope proxy --record-dir`'s)")
        (self.attach_mode if values.mode == ATTACH else self.start_mode).setChecked(True)
        self.listen = QLineEdit(values.listen)
        self.listen.setToolTip("HOST:PORT to listen on (loopback unless told otherwise; port 0 picks a free one)")
        self.upstream = QLineEdit(values.upstream)
        self.upstream.setToolTip("the server's base URL; point the client's base_url at the proxy instead")
        self.record_dir = QLineEdit(values.record_dir)
        self.record_dir.setPlaceholderText("empty: record nothing (turns are still shown)")
        self.clients = clients_edit(values.clients, "judge each turn")
        self.folder = QLineEdit(values.folder)
        start_form = QFormLayout()
        start_form.addRow("listen on", self.listen)
        start_form.addRow("upstream", self.upstream)
        start_form.addRow("record into", folder_row(self, self.record_dir, "Record proxy sessions into"))
        start_form.addRow("client profiles", self.clients)
        attach_form = QFormLayout()
        attach_form.addRow("session folder", folder_row(self, self.folder, "A proxy session folder"))
        hint = caption_label("Each streamed answer is a turn: listed as it happens, opened in the panes, recorded as "
                             "a capture trace. Keys and auth headers pass through and are never recorded.", wrap=True)
        buttons, self.ok = ok_cancel_buttons(self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.start_mode)
        layout.addLayout(start_form)
        layout.addWidget(self.attach_mode)
        layout.addLayout(attach_form)
        layout.addWidget(hint)
        layout.addWidget(buttons)
        self._fields = (start_form, attach_form)
        self.start_mode.toggled.connect(self._mode_changed)
        self._mode_changed()

    def _mode_changed(self) -> None:
        starting = self.start_mode.isChecked()
        for widget in (self.listen, self.upstream, self.record_dir, self.clients):
            widget.setEnabled(starting)
        self.folder.setEnabled(not starting)
        self.ok.setText("Start proxy" if starting else "Attach")

    def values(self) -> ProxyValues:
        return ProxyValues(
            START if self.start_mode.isChecked() else ATTACH, self.listen.text().strip(),
            self.upstream.text().strip(), self.record_dir.text().strip(), self.clients.text().strip(),
            self.folder.text().strip(),
        )

