"""One client connection of ``callscope serve``: HTTP/1.1 requests in (h11), JSON or event-stream answers out.

Requests are read whole (bounded: a body over :data:`MAX_BODY` is a ``413``, a
head not complete within :data:`HEAD_TIMEOUT` a ``408``, a connection silent
for :data:`IDLE_TIMEOUT` between requests is closed). A streamed answer is sent
chunked, each piece in one send before the next is awaited; while it is
being sent, :meth:`Connection.closed` tells when the client went away.
Keep-alive and pipelined requests work as the SDKs use them.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

import h11

from callscope.engine.core.json_text import dumps
from callscope.engine.serve.errors import ServeError

READ_SIZE = 65536
MAX_BODY = 32 * 1024 * 1024
HEAD_TIMEOUT = 30.0
IDLE_TIMEOUT = 600.0
_REASONS = {200: b"OK", 400: b"Bad Request", 404: b"Not Found", 405: b"Method Not Allowed", 408: b"Request Timeout",
            410: b"Gone", 413: b"Content Too Large", 500: b"Internal Server Error", 503: b"Service Unavailable"}
SERVER = b"callscope-serve"


class ClientGone(Exception):
    """The client closed its connection (or it broke) while its answer was being sent."""


class BadRequest(Exception):
    """A request h11 cannot read, or one too large: answered with ``status`` and the connection closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(slots=True)
class HttpRequest:
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    def header(self, name: str) -> str | None:
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)


class Connection:
    """One client connection, read and written through h11."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=READ_SIZE * 4)
        self.eof = False

    # ------------------------------------------------------------ requests

    async def next_request(self) -> HttpRequest | None:
        """The next request, whole; None when the client closed (or may not send another)."""
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            self.h11.start_next_cycle()
        elif self.h11.our_state is not h11.IDLE:
            return None
        request: h11.Request | None = None
        body: list[bytes] = []
        size = 0
        while True:
            event = await self._next_event(HEAD_TIMEOUT if request is None and self._has_partial() else
                                           IDLE_TIMEOUT)
            if isinstance(event, h11.ConnectionClosed) or event is None:
                return None
            if isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                size += len(event.data)
                if size > MAX_BODY:
                    raise BadRequest(413, f"the request body is over {MAX_BODY >> 20} MiB")
                body.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                assert request is not None
                return HttpRequest(request.method.decode("ascii", "replace"), request.target.decode("latin-1"),
                                   [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers],
                                   b"".join(body))

    def _has_partial(self) -> bool:
        return bool(self.h11.trailing_data[0])

    async def _next_event(self, timeout: float) -> Any:
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                raise BadRequest(exc.error_status_hint, f"bad request ({exc})") from None
            if event is not h11.NEED_DATA:
                return event
            if self.h11.they_are_waiting_for_100_continue:
                self.writer.write(self.h11.send(h11.InformationalResponse(status_code=100, headers=[])))
            try:
                data = await asyncio.wait_for(self.reader.read(READ_SIZE), timeout)
            except TimeoutError:
                if timeout == HEAD_TIMEOUT:
                    raise BadRequest(408, f"the request was not complete within {HEAD_TIMEOUT:g} s") from None
                return None
            if not data:
                self.eof = True
            self.h11.receive_data(data)

    # ------------------------------------------------------------ answers

    def _head(self, status: int, headers: list[tuple[str, str]]) -> bytes:
        pairs = [(b"server", SERVER), *((k.encode("latin-1"), v.encode("latin-1")) for k, v in headers)]
        return self.h11.send(h11.Response(status_code=status, headers=pairs, reason=_REASONS.get(status, b"")))

    async def send_json(self, status: int, document: Any, headers: list[tuple[str, str]] | None = None) -> None:
        """A whole JSON answer."""
        body = dumps(document, ensure_ascii=False).encode("utf-8")
        data = self._head(status, [("content-type", "application/json"), ("content-length", str(len(body))),
                                   *(headers or [])])
        data += self.h11.send(h11.Data(data=body)) + self.h11.send(h11.EndOfMessage())
        self.writer.write(data)
        await self.drain()

    async def start_stream(self, headers: list[tuple[str, str]] | None = None) -> None:
        """The head of an event stream (chunked, or close-delimited for an HTTP/1.0 client)."""
        self.writer.write(self._head(200, [("content-type", "text/event-stream; charset=utf-8"),
                                           ("cache-control", "no-cache"), *(headers or [])]))
        await self.drain()

    async def send(self, text: str) -> None:
        """One piece of the stream, in one send."""
        self.writer.write(self.h11.send(h11.Data(data=text.encode("utf-8"))))
        if self.writer.transport.get_write_buffer_size():
            await self.drain()

    async def end_stream(self) -> None:
        self.writer.write(self.h11.send(h11.EndOfMessage()))
        await self.drain()

    async def fail(self, error: BadRequest) -> None:
        """An answer to a request that could not be read: one JSON error, then the connection closes."""
        with contextlib.suppress(h11.LocalProtocolError, ClientGone):
            await self.send_json(error.status, ServeError(error.status, error.message).body(),
                                 [("connection", "close")])

    async def drain(self) -> None:
        try:
            await self.writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise ClientGone from exc

    async def closed(self) -> None:
        """Returns once the client has closed its side (what it sends meanwhile, a pipelined request, is kept)."""
        while not self.eof:
            data = await self.reader.read(READ_SIZE)
            if not data:
                self.eof = True
                return
            self.h11.receive_data(data)

    @property
    def keep_alive(self) -> bool:
        return self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE and not self.eof
