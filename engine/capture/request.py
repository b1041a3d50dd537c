"""The chat-completions request a capture sends: where, what, and how (TLS, timeouts, key variable).

The API key itself is never held here: only the *name* of the environment
variable that carries it, read at send time (:func:`auth_headers`). So nothing
that serialises a :class:`CaptureRequest` (trace headers, reports, logs) can
leak the key.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from callscope.engine.files import read_json
from callscope.engine.tools import ToolsError, load_tools, validate_tools

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 300.0  # a server may think for minutes before its first (or atomic) tool-call chunk
CHAT_PATH = "/v1/chat/completions"
_SECRET_QUERY_WORDS = ("key", "token", "secret", "auth", "sig", "password", "pass")


class RequestError(ValueError):
    """A request that cannot be built or sent (bad URL, unreadable file, bad JSON); the message says which."""


@dataclass(frozen=True, slots=True)
class CaptureRequest:
    """One streaming chat-completions request. ``body`` always has ``"stream": true``."""

    url: str
    body: dict[str, Any]
    api_key_env: str = DEFAULT_API_KEY_ENV
    insecure: bool = False
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        tools = self.body.get("tools")
        return tools if isinstance(tools, list) else None

    def public_url(self) -> str:
        return redact_url(self.url)


def endpoint_url(url: str) -> str:
    """``http://host:8080`` -> ``http://host:8080/v1/chat/completions``; a full endpoint URL is kept.

    Users paste a server's base URL, its ``/v1`` root, or the endpoint itself;
    all three mean the same request.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise RequestError(f"URL must start with http:// or https://, got {url!r}")
    if not parts.hostname:
        raise RequestError(f"URL has no host: {url!r}")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise RequestError(f"bad port in URL {url!r}: {exc}") from None
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        pass
    elif path.endswith("/v1"):
        path += "/chat/completions"
    else:
        path += CHAT_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def redact_url(url: str) -> str:
    """The URL minus credentials: no ``user:password@``, secret-looking query values replaced."""
    parts = urlsplit(url)
    netloc = parts.netloc.rpartition("@")[2]
    query = parts.query
    if query:
        pairs = [
            (k, "***" if any(w in k.lower() for w in _SECRET_QUERY_WORDS) else v)
            for k, v in parse_qsl(query, keep_blank_values=True)
        ]
        query = urlencode(pairs, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def auth_headers(api_key_env: str) -> dict[str, str]:
    """``Authorization: Bearer <key>`` when the variable is set and non-empty, else nothing."""
    key = os.environ.get(api_key_env, "").strip() if api_key_env else ""
    return {"Authorization": f"Bearer {key}"} if key else {}


def tool_choice_value(text: str) -> Any:
    """``auto``/``none``/``required`` as they are; a JSON object as it is; any other word names a function."""
    text = text.strip()
    if text in ("auto", "none", "required"):
        return text
    if text.startswith("{"):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise RequestError(f"--tool-choice is not valid JSON: {exc}") from None
    if not text:
        raise RequestError("--tool-choice is empty")
    return {"type": "function", "function": {"name": text}}


def _check_tool_choice(body: dict[str, Any]) -> None:
    """A named tool_choice must name one of the request's tools (servers fail late and obscurely otherwise)."""
    choice = body.get("tool_choice")
    if not isinstance(choice, dict):
        return
    name = (choice.get("function") or {}).get("name") if isinstance(choice.get("function"), dict) else None
    if name is None:
        return
    tools = body.get("tools") or []
    names = [t.get("function", {}).get("name") for t in tools if isinstance(t, dict)]
    if name not in names:
        known = ", ".join(n for n in names if n) or "none: the request has no tools"
        raise RequestError(f"tool_choice names {name!r}, which is not among the request's tools ({known})")


def _read_json(path: str, what: str) -> Any:
    return read_json(path, RequestError, f"a JSON {what}")


def _request_object(doc: Any, what: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise RequestError(f"{what}: expected a JSON object, got {type(doc).__name__}")
    messages = doc.get("messages")
    if messages is not None and (not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages)):
        raise RequestError(f"{what}: messages must be an array of message objects")
    tools = doc.get("tools")
    if tools is not None:
        try:
            validate_tools(tools)
        except ToolsError as exc:
            raise RequestError(f"{what}: tools: {exc}") from None
    return dict(doc)


def parse_body(text: str, what: str = "request") -> dict[str, Any]:
    """A request body typed by hand (the GUI's request editor): a JSON object with messages; stream forced on."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise RequestError(f"{what} is not valid JSON: {exc}") from None
    body = _request_object(doc, what)
    if not body.get("messages"):
        raise RequestError(f"{what}: needs a non-empty messages array")
    body["stream"] = True
    return body


def build_body(
    *,
    request_file: str | None = None,
    prompt: str | None = None,
    messages_file: str | None = None,
    tools_file: str | None = None,
    tool_choice: str | None = None,
    model: str | None = None,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The JSON body: a request file as given, or one built from the pieces; options override the file.

    ``stream`` is forced on: a capture of a non-streaming answer shows nothing.
    """
    if request_file is not None:
        body = _request_object(_read_json(request_file, "request file"), f"request file {request_file}")
    else:
        body = {}
    if messages_file is not None:
        messages = _read_json(messages_file, "messages file")
        if isinstance(messages, dict) and "messages" in messages:
            messages = messages["messages"]
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise RequestError(f"messages file {messages_file}: expected an array of message objects")
        body["messages"] = messages
    if prompt is not None:
        body["messages"] = list(body.get("messages") or []) + [{"role": "user", "content": prompt}]
    if tools_file is not None:
        try:
            body["tools"] = load_tools(tools_file)
        except ToolsError as exc:
            raise RequestError(str(exc)) from None
    if tool_choice is not None:
        body["tool_choice"] = tool_choice_value(tool_choice)
    if model is not None:
        body["model"] = model
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if not body.get("messages"):
        raise RequestError("no messages: give --request FILE, --messages FILE or --prompt TEXT")
    _check_tool_choice(body)
    body["stream"] = True
    return body
