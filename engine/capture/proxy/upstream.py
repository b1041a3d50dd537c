"""The proxy's upstream side: a minimal HTTP/1.1 client that hands over each network read as it came.

Why not httpx here (the capture client uses it): a chunked event stream
reaches httpx as one body piece per HTTP chunk, each through several layers
of Python, hundreds per network read; re-framing each for the client costs as
much again. A proxy that does that per SSE event is slower than the client
reading it, so it, not the network, sets the pace. This client reads the
socket (``StreamReader.read``: whatever has arrived, at once) and gives each
read whole, twice: as it was on the wire (``raw``, chunk framing included,
for a client that speaks the same framing: forwarded untouched in one send)
and with the framing undone (``body``, for the recording and for clients that
need other framing). Chunked decoding is one pass over the read with
``bytes.find``, a few operations per chunk.

Connections are kept alive and reused per origin; a request that finds its
kept connection closed by the server before any answer byte is sent once more
on a new one (the body is in memory). TLS verifies by default (the same
context as the capture client). Failures are :class:`UpstreamError` with the
capture client's stable kinds (refused, dns, tls, connect-timeout, connect,
stalled, closed, protocol) and one-line messages.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import socket
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

READ_SIZE = 65536
MAX_HEAD_BYTES = 64 * 1024
#: Idle kept-alive connections per origin, and how long one may idle before it is dropped.
MAX_IDLE = 16
IDLE_S = 30.0


class UpstreamError(Exception):
    """Why the upstream exchange failed: ``kind`` is the capture client's (refused, dns, tls, ...)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


@dataclass(slots=True)
class Head:
    """A response's status line and headers, as received (header names and values as bytes)."""

    version: bytes
    status: int
    reason: bytes
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)

    def get(self, name: bytes) -> bytes | None:
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    def tokens(self, name: bytes) -> set[bytes]:
        return {part.strip().lower() for key, value in self.headers if key.lower() == name for part in value.split(b",")}


class ChunkedDecoder:
    """Undoes ``Transfer-Encoding: chunked`` read by read; :meth:`feed` says how much of the read was the message's."""

    __slots__ = ("_state", "_left", "_line", "done")

    def __init__(self) -> None:
        self._state = 0  # 0 size line, 1 data, 2 CRLF after data, 3 trailer lines
        self._left = 0
        self._line = b""
        self.done = False

    def feed(self, data: bytes) -> tuple[bytes, int]:
        """(the body bytes in ``data``, how many bytes of ``data`` belong to the message)."""
        out: list[bytes] = []
        at, end = 0, len(data)
        find = data.find
        while at < end and not self.done:
            state = self._state
            if state == 0 and not self._line:  # the common case: a whole chunk (size line, data, CRLF) in this read
                newline = find(b"\n", at)
                if newline >= 0:
                    try:
                        size = int(data[at:newline], 16)  # "1a\r": int() takes the CR; an extension (";") cannot
                    except ValueError:
                        size = self._size(data[at:newline])
                    start = newline + 1
                    stop = start + size
                    if size and stop + 2 <= end and data[stop:stop + 2] == b"\r\n":
                        out.append(data[start:stop])
                        at = stop + 2
                        continue
                    self._left, at = size, start
                    self._state = 1 if size else 3
                    continue
            if state == 1:  # the rest of a chunk's data
                take = min(self._left, end - at)
                out.append(data[at:at + take])
                at += take
                self._left -= take
                if not self._left:
                    self._state = 2
                continue
            newline = find(b"\n", at)
            if newline < 0:
                self._line += data[at:]
                if len(self._line) > MAX_HEAD_BYTES:
                    raise UpstreamError("protocol", "the upstream sent a malformed chunked body (a line too long)")
                at = end
                break
            line = self._line + data[at:newline]
            self._line = b""
            at = newline + 1
            if state == 0:
                self._left = self._size(line)
                self._state = 1 if self._left else 3
            elif state == 2:
                if line.rstrip(b"\r"):
                    raise UpstreamError("protocol", "the upstream sent a chunk longer than its size said")
                self._state = 0
            elif not line.rstrip(b"\r"):  # the blank line after the last chunk (and any trailers)
                self.done = True
        return (out[0] if len(out) == 1 else b"".join(out)), at

    @staticmethod
    def _size(line: bytes) -> int:
        try:
            return int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise UpstreamError("protocol", f"the upstream sent a malformed chunk size {line[:40]!r}") from None


class Exchange:
    """One request's answer: its :attr:`head`, then :meth:`reads` of its body; :meth:`close` when done with it."""

    def __init__(self, pool: Pool, connection: _Connection, head: Head, method: str, started: float) -> None:
        self.pool = pool
        self.connection = connection
        self.head = head
        self.started = started
        status = head.status
        self.framing = "none" if method == "HEAD" or status in (204, 304) or 100 <= status < 200 else (
            "chunked" if b"chunked" in head.tokens(b"transfer-encoding") else
            "length" if head.get(b"content-length") is not None else "close")
        self.length = 0
        if self.framing == "length":
            try:
                self.length = int(head.get(b"content-length") or b"")
            except ValueError:
                raise UpstreamError("protocol", "the upstream sent a Content-Length that is no number") from None
        self.finished = self.framing == "none" or (self.framing == "length" and self.length == 0)
        self.keep_alive = head.version == b"HTTP/1.1" and b"close" not in head.tokens(b"connection")

    async def reads(self, read_timeout: float) -> AsyncIterator[tuple[bytes, bytes]]:
        """Each network read of the body: ``(raw, body)``, as on the wire and with the framing undone."""
        reader = self.connection.reader  # what came with the head is already in its buffer
        decoder = ChunkedDecoder() if self.framing == "chunked" else None
        left = self.length
        while not self.finished:
            try:
                async with asyncio.timeout(read_timeout):
                    data = await reader.read(READ_SIZE)
            except TimeoutError:
                raise UpstreamError("stalled", f"stream stalled: nothing received for {read_timeout:g} s "
                                               "(read timeout)") from None
            except (ConnectionError, OSError) as exc:
                raise UpstreamError("closed", f"connection lost mid-stream: {exc}") from None
            if not data:
                if self.framing == "close":
                    self.finished = True
                    self.keep_alive = False
                    return
                raise UpstreamError("closed", "server closed the connection mid-stream (the answer was not "
                                              "complete)")
            if decoder is not None:
                body, used = decoder.feed(data)
                self.finished = decoder.done
            elif self.framing == "length":
                used = min(left, len(data))
                body = data[:used] if used < len(data) else data
                left -= used
                self.finished = left == 0
            else:
                body, used = data, len(data)
            if used < len(data):  # bytes past the answer's end: nothing should follow it
                self.keep_alive = False
            yield (data if used == len(data) else data[:used]), body

    def close(self) -> None:
        """Done with the answer: the connection goes back to the pool if it can carry another, else it is closed."""
        if self.finished and self.keep_alive:
            self.pool.release(self.connection)
        else:
            self.connection.close()


class _Connection:
    __slots__ = ("reader", "writer", "idle_since")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.idle_since = 0.0

    @property
    def usable(self) -> bool:
        return not self.writer.is_closing() and not self.reader.at_eof()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


class Pool:
    """Kept-alive connections to one upstream origin, and the requests sent over them."""

    def __init__(self, base_url: str, context: ssl.SSLContext | None, connect_timeout: float,
                 read_timeout: float) -> None:
        parts = urlsplit(base_url)
        self.scheme = parts.scheme
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.context = context if parts.scheme == "https" else None
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        default = self.port == (443 if parts.scheme == "https" else 80)
        host = f"[{self.host}]" if ":" in self.host else self.host
        self.authority = (host if default else f"{host}:{self.port}").encode("idna")
        self.where = f"{self.host}:{self.port}"
        self.basic: bytes | None = None
        if parts.username is not None:
            pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            self.basic = b"Basic " + base64.b64encode(pair)
        self._idle: list[_Connection] = []

    async def request(self, method: str, url: str, headers: list[tuple[str, str]], body: bytes) -> Exchange:
        """Send the request for ``url`` (of this origin) and read the answer's head (the body: :meth:`Exchange.reads`)."""
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        head = self._request_head(method, target, headers, body)
        for attempt in (0, 1):
            connection, reused = self._idle_connection(), True
            if connection is None:
                connection, reused = await self._connect(), False
            started = time.monotonic()
            try:
                connection.writer.write(head + body)
                await connection.writer.drain()
                answer = await self._read_head(connection, method)
            except _StaleConnection:
                connection.close()
                if reused and attempt == 0:
                    continue  # the server had closed the kept connection: once more on a new one
                raise UpstreamError("closed", "the upstream closed the connection before answering") from None
            except BaseException:
                connection.close()
                raise
            return Exchange(self, connection, answer, method, started)
        raise AssertionError("unreachable")  # pragma: no cover

    def _request_head(self, method: str, target: str, headers: list[tuple[str, str]], body: bytes) -> bytes:
        lines = [f"{method} {target} HTTP/1.1".encode("latin-1"), b"Host: " + self.authority]
        names = set()
        for key, value in headers:
            names.add(key.lower())
            lines.append(key.encode("latin-1") + b": " + value.encode("latin-1"))
        if self.basic is not None and "authorization" not in names:
            lines.append(b"Authorization: " + self.basic)
        if body or method in ("POST", "PUT", "PATCH"):
            lines.append(b"Content-Length: %d" % len(body))
        return b"\r\n".join(lines) + b"\r\n\r\n"

    def _idle_connection(self) -> _Connection | None:
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            if connection.usable and now - connection.idle_since < IDLE_S:
                return connection
            connection.close()
        return None

    def close(self) -> None:
        """Close every kept connection (the proxy stops)."""
        while self._idle:
            self._idle.pop().close()

    def release(self, connection: _Connection) -> None:
        if not connection.usable or len(self._idle) >= MAX_IDLE:
            connection.close()
            return
        connection.idle_since = time.monotonic()
        self._idle.append(connection)

    async def _connect(self) -> _Connection:
        try:
            async with asyncio.timeout(self.connect_timeout):
                reader, writer = await asyncio.open_connection(
                    self.host, self.port, ssl=self.context, limit=READ_SIZE * 4,
                    server_hostname=self.host if self.context is not None else None)
        except TimeoutError:
            raise UpstreamError("connect-timeout", f"no connection to {self.where} within "
                                                   f"{self.connect_timeout:g} s") from None
        except socket.gaierror as exc:
            raise UpstreamError("dns", f"cannot resolve host {self.host!r} ({exc.strerror or exc})") from None
        except ssl.SSLError as exc:
            hint = " (is it a plain-HTTP server? try http://)" if "WRONG_VERSION_NUMBER" in str(exc) else ""
            raise UpstreamError("tls", f"TLS handshake with {self.where} failed: {exc}{hint}") from None
        except ConnectionRefusedError:
            raise UpstreamError("refused", f"connection refused by {self.where} (is the server running?)") from None
        except OSError as exc:
            raise UpstreamError("connect", f"cannot connect to {self.where}: {exc.strerror or exc}") from None
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return _Connection(reader, writer)

    async def _read_head(self, connection: _Connection, method: str) -> Head:
        """The answer's head; informational answers (100 Continue, 103 Early Hints) are skipped."""
        reader = connection.reader
        first = True
        while True:
            try:
                async with asyncio.timeout(self.read_timeout):
                    raw = await reader.readuntil(b"\r\n\r\n")
            except TimeoutError:
                raise UpstreamError("stalled", f"no answer within {self.read_timeout:g} s (read timeout)") from None
            except asyncio.IncompleteReadError as exc:
                if first and not exc.partial:
                    raise _StaleConnection from None
                raise UpstreamError("closed", "the upstream closed the connection in the middle of its answer's "
                                              "head") from None
            except asyncio.LimitOverrunError:
                raise UpstreamError("protocol", f"the upstream's answer head is over {MAX_HEAD_BYTES // 1024} KiB"
                                    ) from None
            except (ConnectionError, OSError) as exc:
                if first:
                    raise _StaleConnection from None
                raise UpstreamError("closed", f"connection lost: {exc}") from None
            first = False
            head = _parse_head(raw)
            if head.status >= 200 or head.status == 101:
                return head


class _StaleConnection(Exception):
    """The connection was closed before a single byte of the answer came (a kept connection the server dropped)."""


def _parse_head(raw: bytes) -> Head:
    lines = raw[:-4].split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        raise UpstreamError("protocol", f"the upstream did not answer HTTP: {lines[0][:60]!r}")
    head = Head(parts[0], int(parts[1]), parts[2] if len(parts) > 2 else b"")
    for line in lines[1:]:
        key, colon, value = line.partition(b":")
        if not colon or not key or key != key.strip():
            raise UpstreamError("protocol", f"the upstream sent a malformed header line {line[:60]!r}")
        head.headers.append((key, value.strip()))
    return head


def tls_context(insecure: bool, verifying: ssl.SSLContext | bool) -> ssl.SSLContext:
    """The context upstream TLS uses: the capture client's verifying one, or (``--insecure``) none that checks."""
    if isinstance(verifying, ssl.SSLContext) and not insecure:
        return verifying
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
