"""The one place a capture's secrets are taken out of everything it shows, records or raises.

A capture knows two kinds of secret: the API key (read from the environment
variable the request names, sent as a bearer token) and credentials in the URL
(``user:password@``, sent as HTTP Basic auth, and secret-looking query values
such as ``?api_key=``). Servers echo them back: a 401 page quoting the bearer
token, a debug proxy repeating the Authorization header in the stream. So
redaction cannot be a matter of "we never print the request": every text that
leaves a capture (received lines, error messages, the trace header, the end
record's detail, exception messages) goes through one :class:`Redactor`, built
by :func:`redactor_for` from the request.

Each secret is replaced by :data:`MASK` in its plain form and in the encodings a
server plausibly echoes it in (JSON-escaped, percent-encoded, and for URL
credentials the base64 of a Basic header). URLs in messages also lose their
``user:password@`` part. Values shorter than :data:`MIN_SECRET_CHARS` are not
masked in free text: they cannot be told apart from ordinary words, and masking
them would garble every line.
"""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from callscope.engine.core.json_text import dumps, loads

MASK = "***"
MIN_SECRET_CHARS = 4
#: Query parameters whose values are secrets (``?api_key=...``, ``&token=...``).
SECRET_QUERY_WORDS = ("key", "token", "secret", "auth", "sig", "password", "pass")
#: ``scheme://user:password@`` (or ``user@``) at the start of a URL inside free text.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#@\"'<>]+@")


def redact_url(url: str) -> str:
    """The URL minus credentials: no ``user:password@``, secret-looking query values replaced."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not parseable as a URL: still strip anything credential-shaped
        return _USERINFO.sub(r"\1", url)
    netloc = parts.netloc.rpartition("@")[2]
    query = parts.query
    if query:
        pairs = [(k, MASK if _is_secret_query(k) else v) for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _is_secret_query(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in SECRET_QUERY_WORDS)


def api_key(api_key_env: str | None) -> str:
    """The API key held by the environment variable ``api_key_env`` (stripped; empty when unset)."""
    return os.environ.get(api_key_env, "").strip() if api_key_env else ""


@dataclass(frozen=True, slots=True)
class Redactor:
    """Masks a fixed set of secret strings. Its repr never shows them (it may end up in a traceback)."""

    secrets: tuple[str, ...] = ()
    _raw: tuple[bytes, ...] = ()

    @classmethod
    def of(cls, values: list[str]) -> Redactor:
        """A redactor for ``values`` and their echoed encodings, longest first (so no secret is half-masked)."""
        found: set[str] = set()
        for value in values:
            if len(value) >= MIN_SECRET_CHARS:
                found.update(_variants(value))
        ordered = tuple(sorted(found, key=len, reverse=True))
        return cls(ordered, tuple(s.encode("utf-8") for s in ordered))

    def __repr__(self) -> str:
        return f"Redactor({len(self.secrets)} secret forms)"

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, text: str) -> str:
        """A message or URL made safe to show: every secret masked, no ``user:password@`` in a URL."""
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return _USERINFO.sub(r"\1", text) if "@" in text else text

    def hit(self, data: bytes) -> bool:
        """Whether ``data`` (received bytes) holds a secret: the cheap test before :meth:`data`."""
        return any(secret in data for secret in self._raw)

    def data(self, data: bytes) -> bytes:
        """Received bytes with every secret masked; nothing else changes (it is what the server sent)."""
        mask = MASK.encode()
        for secret in self._raw:
            if secret in data:
                data = data.replace(secret, mask)
        return data

    def value(self, value: Any) -> Any:
        """A JSON value (a trace header's request, tools, messages) with every string redacted, at any depth.

        It goes through JSON text (the depth-safe :mod:`callscope.engine.core.json_text`): a
        user's tools may nest deeper than a recursive walk could go, and a
        masked secret inside a JSON string leaves the text valid JSON.
        """
        text = dumps(value, ensure_ascii=False)
        safe = self.text(text)
        return value if safe == text else loads(safe)

    def exception(self, exc: BaseException) -> BaseException:
        """``exc`` (and its causes) with secrets taken out of their messages, in place, for re-raising."""
        seen: set[int] = set()
        current: BaseException | None = exc
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            current.args = tuple(self.text(a) if isinstance(a, str) else _bytes_arg(self, a) for a in current.args)
            current = current.__cause__ or current.__context__
        return exc


def _bytes_arg(redactor: Redactor, arg: Any) -> Any:
    return redactor.data(arg) if isinstance(arg, bytes) else arg


def _variants(value: str) -> set[str]:
    """A secret as a server may echo it: as is, JSON-escaped (``\\/`` too), percent-encoded."""
    escaped = dumps(value)[1:-1]
    return {value, escaped, escaped.replace("/", "\\/"), dumps(value, ensure_ascii=False)[1:-1],
            quote(value, safe="")}


def url_secrets(url: str) -> list[str]:
    """The secrets a URL carries: its password (decoded and as written), Basic-auth forms, secret query values."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found: list[str] = []
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    if userinfo:
        user, _, password = userinfo.partition(":")
        plain_user, plain_password = unquote(user), unquote(password)
        found += [password, plain_password]
        for pair in {f"{plain_user}:{plain_password}", f"{user}:{password}"}:
            found.append(base64.b64encode(pair.encode("utf-8")).decode("ascii"))
        if password == "":  # a token given as the user name alone (https://TOKEN@host)
            found += [user, plain_user]
    for name, value in parse_qsl(parts.query, keep_blank_values=True):
        if _is_secret_query(name) and value:
            found += [value, quote(value, safe="")]
    return found


def redactor_for(url: str, api_key_env: str | None) -> Redactor:
    """The redactor of one capture: its API key (read from the environment now) and its URL's credentials."""
    key = api_key(api_key_env)
    values = url_secrets(url)
    if key:
        values.append(key)
    return Redactor.of(values)
