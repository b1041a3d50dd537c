"""The Capture dialog: URL, protocol, request body (a JSON editor), API-key *variable name*, TLS, read timeout.

It only collects; :func:`request_from_values` validates, raising
:class:`~callscope.engine.capture.request.RequestError` with a one-line message. The
protocol is ``auto`` by default: named by the URL's endpoint path
(:func:`~callscope.engine.capture.request.resolve_endpoint`, as ``callscope capture``
does), else Chat Completions; the chat-shaped body is converted to the
protocol's shape, and the default key variable follows the protocol.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from callscope.dialogs.common import clients_edit, clients_from_text, lay_out_source_dialog
from callscope.engine.capture.request import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    CaptureRequest,
    RequestError,
    key_env,
    parse_body,
    resolve_endpoint,
)
from callscope.engine.streams.protocols import DEFAULT_PROTOCOL, PROTOCOLS, all_protocols
from callscope.ui import theme

DEFAULT_URL = "http://127.0.0.1:8080"
AUTO = "auto"  # the protocol the URL names, else chat
DEFAULT_BODY = {
    "messages": [{"role": "user", "content": "What is the weather in Paris? Use the tool."}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ],
    "tool_choice": "auto",
    "max_tokens": 256,
    "stream": True,
}


@dataclass(slots=True)
class CaptureValues:
    url: str
    body_text: str
    api_key_env: str
    insecure: bool
    read_timeout: float
    protocol: str = AUTO  # auto, or a registered protocol's id
    clients: str = ""  # client profiles, comma-separated (empty: the defaults), as `capture --client`


def duplicate_key(text: str) -> str | None:
    """The first key given twice in one object of ``text`` (JSON keeps the last silently), or None.

    The editor opens on a body that already has ``"tool_choice": "auto"``: a user adding
    ``"tool_choice": "required"`` above it would see the form's default win, without a word.
    """
    found: list[str] = []

    def pairs(items: list[tuple[str, object]]) -> dict:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen and not found:
                found.append(key)
            seen.add(key)
        return dict(items)

    try:
        json.loads(text, object_pairs_hook=pairs)
    except ValueError:
        return None  # not JSON at all: parse_body says so
    return found[0] if found else None


def clients_from_values(values: CaptureValues) -> tuple[str, ...] | None:
    """The client profiles that judge the capture (None: the defaults); raises ``RequestError`` naming a bad one."""
    return clients_from_text(values.clients, RequestError)


def request_from_values(values: CaptureValues) -> CaptureRequest:
    """Validate what the dialog collected; raises ``RequestError`` with a one-line message."""
    twice = duplicate_key(values.body_text)
    if twice is not None:
        raise RequestError(f'request body: "{twice}" is given twice (the later one would silently win); keep one')
    url, protocol = resolve_endpoint(values.url, None if values.protocol == AUTO else values.protocol)
    default_key = key_env(protocol)
    return CaptureRequest(
        url,
        parse_body(values.body_text, "request body", protocol),
        api_key_env=values.api_key_env.strip() or default_key,
        protocol=protocol,
        insecure=values.insecure,
        connect_timeout=DEFAULT_CONNECT_TIMEOUT,
        read_timeout=values.read_timeout,
    )


class CaptureDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, values: CaptureValues | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Capture a live server")
        self.resize(720, 640)
        self.url = QLineEdit(values.url if values else DEFAULT_URL)
        self.url.setToolTip(f"base URL, /v1, or the full endpoint ({', '.join(s.path for s in all_protocols())})")
        self.protocol = QComboBox()
        self.protocol.addItems([AUTO, *PROTOCOLS])
        self.protocol.setCurrentText(values.protocol if values else AUTO)
        self.protocol.setToolTip(f"auto: the protocol the URL's endpoint path names, else {DEFAULT_PROTOCOL}; "
                                 "the body below is converted to the protocol's shape")
        self.body = QPlainTextEdit(values.body_text if values else json.dumps(DEFAULT_BODY, indent=2))
        self.body.setFont(theme.mono_font(9))
        self.key = QLineEdit(values.api_key_env if values else "")
        others = [f"{s.api_key_env} for {s.id}" for s in all_protocols() if s.api_key_env != DEFAULT_API_KEY_ENV]
        self.key.setPlaceholderText(DEFAULT_API_KEY_ENV + (f" ({', '.join(others)})" if others else ""))
        self.key.setToolTip("name of the environment variable holding the API key, sent in the protocol's header "
                            "(default: " + ", ".join(f"${s.api_key_env} for {s.id}" for s in all_protocols())
                            + "; never saved)")
        self.clients = clients_edit(values.clients if values else "", "assemble the stream")
        self.insecure = QCheckBox("do not verify the TLS certificate")
        self.insecure.setChecked(values.insecure if values else False)
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(0.1, 3600.0)
        self.timeout.setValue(values.read_timeout if values else DEFAULT_READ_TIMEOUT)
        self.timeout.setSuffix(" s")
        self.timeout.setToolTip("longest silence to wait for before giving up (read timeout)")
        form = QFormLayout()
        form.addRow("URL", self.url)
        form.addRow("protocol", self.protocol)
        form.addRow("API key variable", self.key)
        form.addRow("client profiles", self.clients)
        form.addRow("TLS", self.insecure)
        form.addRow("read timeout", self.timeout)
        lay_out_source_dialog(self, form, 'request body (JSON; "stream": true is forced)', self.body, "Capture")

    def values(self) -> CaptureValues:
        return CaptureValues(
            self.url.text().strip(), self.body.toPlainText(), self.key.text().strip(),
            self.insecure.isChecked(), float(self.timeout.value()), self.protocol.currentText(),
            self.clients.text().strip(),
        )
