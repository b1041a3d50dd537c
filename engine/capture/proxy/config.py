"""Where the proxy listens, where it forwards, and how the client's paths map onto the upstream's.

The upstream is a server's base URL (``http://127.0.0.1:8080``,
``https://api.openai.com``, ``https://api.anthropic.com``), optionally with a
path prefix (``https://host/openai``) or a trailing ``/v1``. A client pointed
at the proxy sends the same paths it would send to the server, so a request
for ``/v1/chat/completions`` goes to the upstream's prefix plus that path; a
prefix that already ends in ``/v1`` is not doubled (``--upstream
https://api.openai.com/v1`` and a client's base URL ``http://127.0.0.1:8787/v1``
mean the same as without the ``/v1``).

The proxy listens only where it is told, loopback by default: it forwards the
client's API key upstream, so it must not be reachable from anywhere else by
accident.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from callscope.engine.capture.redact import redact_url
from callscope.engine.capture.request import DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT, RequestError, check_seconds
from callscope.engine.streams.assembly import DEFAULT_ATOMIC_SILENCE_MS

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8787
#: The largest request body the proxy reads (agents send long histories, images included, but not this long).
MAX_REQUEST_BYTES = 64 * 1024 * 1024
#: The most request-body bytes held at once across every connection (a body is held until its exchange ends).
MAX_IN_FLIGHT_BYTES = 256 * 1024 * 1024
#: Seconds from a request's first byte to the end of its head (a slowloris client never gets there).
DEFAULT_HEADER_TIMEOUT = 20.0
#: Seconds a connection may wait for its next request, or stall in the middle of a request body.
DEFAULT_IDLE_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class ProxyConfig:
    """One proxy: where it listens, the upstream base URL, where turns are recorded, how they are judged."""

    upstream: str
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    record_dir: Path | None = None  # a session folder is made inside it; None records nothing
    insecure: bool = False
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    read_timeout: float = DEFAULT_READ_TIMEOUT
    atomic_silence_ms: float = DEFAULT_ATOMIC_SILENCE_MS
    clients: tuple[str, ...] | None = None  # client profiles that judge each turn (None: the defaults)
    max_request_bytes: int = MAX_REQUEST_BYTES
    max_in_flight_bytes: int = MAX_IN_FLIGHT_BYTES
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT

    def __post_init__(self) -> None:
        check_seconds(self.connect_timeout, "connect timeout")
        check_seconds(self.read_timeout, "read timeout")
        check_seconds(self.header_timeout, "header timeout")
        check_seconds(self.idle_timeout, "idle timeout")
        if self.max_request_bytes < 1 or self.max_in_flight_bytes < self.max_request_bytes:
            raise RequestError(f"the request body limit must be at least 1 byte and at most the in-flight limit "
                               f"({self.max_request_bytes} > {self.max_in_flight_bytes})")
        if not 0 <= self.port <= 65535:
            raise RequestError(f"the port must be 0 to 65535, got {self.port}")

    @property
    def public_upstream(self) -> str:
        return redact_url(self.upstream)


def parse_listen(text: str) -> tuple[str, int]:
    """``127.0.0.1:8787``, ``:8787`` (loopback), ``8787``, ``[::1]:8787``, ``localhost:0`` -> (host, port).

    Port 0 picks a free port. The host must be given to listen beyond loopback: there is no
    "every interface" default.
    """
    text = text.strip()
    if not text:
        raise RequestError("--listen is empty; give HOST:PORT, e.g. 127.0.0.1:8787")
    if text.isdigit():
        host, port_text = DEFAULT_HOST, text
    elif text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or not rest.startswith(":"):
            raise RequestError(f"--listen {text!r}: an IPv6 address is written [ADDRESS]:PORT")
        port_text = rest[1:]
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep:
            raise RequestError(f"--listen {text!r}: give HOST:PORT, e.g. 127.0.0.1:8787")
        host = host or DEFAULT_HOST
    if not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise RequestError(f"--listen {text!r}: the port must be a number from 0 to 65535")
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (a name other than localhost is not assumed to be)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_upstream(url: str) -> str:
    """The upstream base URL, checked (http or https, a host, a port that is a number), without a trailing ``/``."""
    url = url.strip()
    shown = redact_url(url)
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as exc:
        raise RequestError(f"--upstream {shown!r} is not a URL ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise RequestError(f"--upstream must start with http:// or https://, got {shown!r}")
    if not parts.hostname:
        raise RequestError(f"--upstream has no host: {shown!r}")
    if parts.query or parts.fragment:
        raise RequestError(f"--upstream is a base URL: no ?query or #fragment ({shown!r})")
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def upstream_url(base: str, target: str) -> str:
    """The upstream URL of a client's request target (``/v1/chat/completions?x=1``) under ``base``."""
    parts = urlsplit(base)
    path, _, query = target.partition("?")
    if not path.startswith("/"):
        path = "/" + path
    prefix = parts.path
    if prefix.endswith("/v1") and (path == "/v1" or path.startswith("/v1/")):
        prefix = prefix[: -len("/v1")]
    return urlunsplit((parts.scheme, parts.netloc, prefix + path, query, ""))
