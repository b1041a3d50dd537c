"""What ``callscope serve`` answers when it cannot serve a request: an HTTP status and one JSON error.

The body is shaped so both SDK families read it: OpenAI's ``{"error": {"message",
"type", "param", "code"}}`` with Anthropic's ``"type": "error"`` beside it.
"""

from __future__ import annotations

from typing import Any

#: The error ``type`` by status, in the words the OpenAI API uses.
_TYPES = {400: "invalid_request_error", 404: "invalid_request_error", 405: "invalid_request_error",
          408: "invalid_request_error", 413: "invalid_request_error", 500: "server_error", 503: "server_error"}


class ServeError(Exception):
    """A request served with an error: ``status``, a one-line ``message``, an optional machine ``code``."""

    def __init__(self, status: int, message: str, *, code: str | None = None, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.param = param

    def body(self) -> dict[str, Any]:
        kind = _TYPES.get(self.status, "invalid_request_error" if self.status < 500 else "server_error")
        return {"type": "error",
                "error": {"message": self.message, "type": kind, "param": self.param, "code": self.code}}
