"""The Capture dialog: URL, request body (a JSON editor), API-key *variable name*, TLS, read timeout.

It only collects; :func:`request_from_values` validates, raising
:class:`~engine.capture.request.RequestError` with a one-line message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from PySide6.QtWidgets import QCheckBox, QDialog, QDoubleSpinBox, QFormLayout, QLineEdit, QPlainTextEdit, QWidget

from callscope.dialogs.common import lay_out_source_dialog
from callscope.engine.capture.request import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    CaptureRequest,
    RequestError,
    endpoint_url,
    parse_body,
)
from callscope.ui import theme

DEFAULT_URL = "http://127.0.0.1:8080"
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


def request_from_values(values: CaptureValues) -> CaptureRequest:
    """Validate what the dialog collected; raises ``RequestError`` with a one-line message."""
    twice = duplicate_key(values.body_text)
    if twice is not None:
        raise RequestError(f'request body: "{twice}" is given twice (the later one would silently win); keep one')
    return CaptureRequest(
        endpoint_url(values.url),
        parse_body(values.body_text, "request body"),
        api_key_env=values.api_key_env.strip() or DEFAULT_API_KEY_ENV,
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
        self.url.setToolTip("base URL, /v1, or the full /v1/chat/completions endpoint")
        self.body = QPlainTextEdit(values.body_text if values else json.dumps(DEFAULT_BODY, indent=2))
        self.body.setFont(theme.mono_font(9))
        self.key = QLineEdit(values.api_key_env if values else DEFAULT_API_KEY_ENV)
        self.key.setToolTip("name of the environment variable holding the API key (sent as a bearer token, never saved)")
        self.insecure = QCheckBox("do not verify the TLS certificate")
        self.insecure.setChecked(values.insecure if values else False)
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(0.1, 3600.0)
        self.timeout.setValue(values.read_timeout if values else DEFAULT_READ_TIMEOUT)
        self.timeout.setSuffix(" s")
        self.timeout.setToolTip("longest silence to wait for before giving up (read timeout)")
        form = QFormLayout()
        form.addRow("URL", self.url)
        form.addRow("API key variable", self.key)
        form.addRow("TLS", self.insecure)
        form.addRow("read timeout", self.timeout)
        lay_out_source_dialog(self, form, 'request body (JSON; "stream": true is forced)', self.body, "Capture")

    def values(self) -> CaptureValues:
        return CaptureValues(
            self.url.text().strip(), self.body.toPlainText(), self.key.text().strip(),
            self.insecure.isChecked(), float(self.timeout.value()),
        )
