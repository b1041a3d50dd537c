"""The request a capture sends: where, what, and how (protocol, TLS, timeouts, key variable).

Any registered protocol (:mod:`callscope.engine.streams.protocols`; built in:
Chat Completions, the OpenAI Responses API and Anthropic Messages). The URL
names its protocol when it ends in an endpoint path (used as given); a base
URL gets the protocol's endpoint appended. ``--prompt/--messages/--tools`` are
written in the chat shape (tools in any shape :mod:`callscope.engine.core.tools`
accepts) and converted to the protocol's by its spec (``ProtocolSpec.body``),
which also says whether a body has input and which headers carry the key.

The API key itself is never held here: only the *name* of the environment
variable that carries it, read at send time (:func:`auth_headers`). So nothing
that serialises a :class:`CaptureRequest` (trace headers, reports, logs) can
leak the key. What a server echoes back is masked by :mod:`callscope.engine.capture.redact`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from callscope.engine.capture.redact import api_key, redact_url
from callscope.engine.core.files import read_json
from callscope.engine.core.json_text import DOCUMENT_DEPTH, loads
from callscope.engine.core.tools import ToolsError, load_tools, validate_tools
from callscope.engine.streams.protocols import DEFAULT_PROTOCOL, PROTOCOLS, get_protocol, protocol_for_path

#: The key variable of the default protocol (each protocol names its own: ``ProtocolSpec.api_key_env``).
DEFAULT_API_KEY_ENV = get_protocol(DEFAULT_PROTOCOL).api_key_env
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_READ_TIMEOUT = 300.0  # a server may think for minutes before its first (or atomic) tool-call chunk
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class RequestError(ValueError):
    """A request that cannot be built or sent (bad URL, unreadable file, bad JSON); the message says which."""


@dataclass(frozen=True, slots=True)
class CaptureRequest:
    """One streaming request of ``protocol`` (a registered protocol's id); ``body`` has ``"stream": true``."""

    url: str
    body: dict[str, Any]
    api_key_env: str = DEFAULT_API_KEY_ENV
    protocol: str = DEFAULT_PROTOCOL
    insecure: bool = False
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    #: Total seconds for the whole response (connect to last byte), or None for no limit: the read
    #: timeout is per read, so a server dripping a byte now and then would otherwise never be cut off.
    deadline: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Durations checked for every front end (CLI, GUI, scripts): a ``nan`` timeout would never fire."""
        check_seconds(self.connect_timeout, "connect timeout")
        check_seconds(self.read_timeout, "read timeout")
        check_seconds(self.deadline, "deadline", none_ok=True)

    @property
    def tools(self) -> list[dict[str, Any]] | None:
        tools = self.body.get("tools")
        return tools if isinstance(tools, list) else None

    def public_url(self) -> str:
        return redact_url(self.url)


def endpoint_url(url: str, protocol: str | None = None) -> str:
    """``http://host:8080`` -> ``http://host:8080/v1/chat/completions``; a full endpoint URL is kept.

    Users paste a server's base URL, its ``/v1`` root, or the endpoint itself;
    all three mean the same request. ``protocol`` picks the endpoint appended.
    """
    return resolve_endpoint(url, protocol)[0]


def resolve_endpoint(url: str, protocol: str | None = None) -> tuple[str, str]:
    """The endpoint URL and its protocol: named by the URL's path when it ends in an endpoint (it must then
    agree with ``protocol``, if given), else ``protocol`` (default chat) with its endpoint appended."""
    if protocol is not None and protocol not in PROTOCOLS:
        raise RequestError(f"unknown protocol {protocol!r} (known: {', '.join(PROTOCOLS)})")
    shown = redact_url(url.strip())  # error messages never repeat a user:password@
    try:
        parts = urlsplit(url.strip())
    except ValueError as exc:
        raise RequestError(f"not a URL: {shown!r} ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise RequestError(f"URL must start with http:// or https://, got {shown!r}")
    if not parts.hostname:
        raise RequestError(f"URL has no host: {shown!r}")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise RequestError(f"bad port in URL {shown!r}: {exc}") from None
    path = parts.path.rstrip("/")
    named = protocol_for_path(path)
    if named is not None:
        if protocol is not None and protocol != named:
            raise RequestError(f"the URL is the {named} endpoint ({path}), but the protocol asked is {protocol}")
        return urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")), named
    protocol = protocol or DEFAULT_PROTOCOL
    endpoint = get_protocol(protocol).path
    path += endpoint.removeprefix("/v1") if path.endswith("/v1") else endpoint
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")), protocol


def check_api_key_env(api_key_env: str) -> None:
    """The key variable must be a variable *name*, and the key it holds must fit in an HTTP header.

    Both messages avoid quoting what was given: a name that is not a name is
    most likely the key itself, pasted in the wrong place.
    """
    if not _ENV_NAME.fullmatch(api_key_env):
        raise RequestError(
            "the API key variable must be the name of an environment variable (letters, digits, _), "
            "not the key itself"
        )
    key = api_key(api_key_env)
    bad = next((i for i, c in enumerate(key) if not 0x21 <= ord(c) <= 0x7E), None)
    if bad is not None:
        raise RequestError(
            f"the API key in ${api_key_env} has a character an HTTP header cannot carry "
            f"(position {bad + 1} of {len(key)}); check the variable"
        )


def key_env(protocol: str) -> str:
    """The variable a protocol's key is read from by default (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``...)."""
    return get_protocol(protocol).api_key_env


def auth_headers(api_key_env: str, protocol: str = DEFAULT_PROTOCOL) -> dict[str, str]:
    """The protocol's key headers (``ProtocolSpec.auth``: ``Authorization: Bearer <key>``, Anthropic's
    ``x-api-key`` plus the ``anthropic-version`` it requires...), with the key when the variable is set
    and non-empty. Never recorded: a capture trace keeps the URL and body only, and the redactor masks
    the key wherever it is echoed.

    Raises :class:`RequestError` for a key no header can carry (httpx would
    otherwise fail with the header, key included, in its message).
    """
    key = api_key(api_key_env)
    if key:
        check_api_key_env(api_key_env)
    return get_protocol(protocol).auth(key)


def check_seconds(value: float, what: str, *, zero_ok: bool = False, none_ok: bool = False) -> None:
    """A duration must be a finite number of seconds, positive (or zero where that means something).

    ``nan`` slips through ``value <= 0`` (every comparison with nan is false) and
    ``inf`` reaches the socket layer as "wait forever"; both are rejected here.
    """
    if value is None and none_ok:
        return
    if value is None or not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
        wanted = "a finite number of seconds >= 0" if zero_ok else "a finite number of seconds > 0"
        raise RequestError(f"{what} must be {wanted}, got {value!r}")


def tool_choice_value(text: str) -> Any:
    """``auto``/``none``/``required`` as they are; a JSON object as it is; any other word names a function."""
    text = text.strip()
    if text in ("auto", "none", "required"):
        return text
    if text.startswith("{"):
        try:
            return loads(text, DOCUMENT_DEPTH)
        except ValueError as exc:
            raise RequestError(f"--tool-choice is not valid JSON: {exc}") from None
    if not text:
        raise RequestError("--tool-choice is empty")
    return {"type": "function", "function": {"name": text}}


def _tool_name(tool: Any) -> Any:
    """A tool's (or a named tool_choice's) name in any of the three shapes: ``function.name`` or ``name``."""
    if not isinstance(tool, dict):
        return None
    function = tool.get("function")
    return function.get("name") if isinstance(function, dict) else tool.get("name")


def _check_tool_choice(body: dict[str, Any]) -> None:
    """A named tool_choice must name one of the request's tools (servers fail late and obscurely otherwise)."""
    choice = body.get("tool_choice")
    if not isinstance(choice, dict):
        return
    name = _tool_name(choice)
    if name is None:
        return
    tools = body.get("tools") or []
    names = [_tool_name(t) for t in tools if isinstance(t, dict)]
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
    body = dict(doc)
    if tools is not None:
        try:
            body["tools"] = validate_tools(tools)  # bare function objects become the OpenAI tools array
        except ToolsError as exc:
            raise RequestError(f"{what}: tools: {exc}") from None
    return body


def _has_input(body: dict[str, Any], protocol: str) -> bool:
    return get_protocol(protocol).has_input(body)


def parse_body(text: str, what: str = "request", protocol: str = DEFAULT_PROTOCOL) -> dict[str, Any]:
    """A request body typed by hand (the GUI's request editor): a JSON object with messages (or what else the
    protocol takes as input, e.g. Responses' ``input``), in ``protocol``'s shape (chat-shaped parts are
    converted); stream forced on."""
    try:
        doc = loads(text, DOCUMENT_DEPTH)
    except ValueError as exc:
        raise RequestError(f"{what} is not valid JSON: {exc}") from None
    body = _request_object(doc, what)
    if not _has_input(body, protocol):
        raise RequestError(f"{what}: needs a non-empty messages array")
    body = for_protocol(body, protocol)
    body["stream"] = True
    return body


# ------------------------------------------------------------------ each protocol's shape


def for_protocol(body: dict[str, Any], protocol: str) -> dict[str, Any]:
    """A chat-shaped body (tools normalised to the OpenAI array) in ``protocol``'s shape (its spec converts it)."""
    return get_protocol(protocol).body(body)


def build_body(
    *,
    request_file: str | None = None,
    prompt: str | None = None,
    messages_file: str | None = None,
    tools_file: str | None = None,
    tool_choice: str | None = None,
    model: str | None = None,
    max_tokens: int | None = None,
    protocol: str = DEFAULT_PROTOCOL,
) -> dict[str, Any]:
    """The JSON body: a request file as given, or one built from the pieces; options override the file.

    The pieces are chat-shaped and converted to ``protocol``'s shape (:func:`for_protocol`).
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
    if not _has_input(body, protocol):
        raise RequestError("no messages: give --request FILE, --messages FILE or --prompt TEXT")
    _check_tool_choice(body)
    body = for_protocol(body, protocol)
    body["stream"] = True
    return body
