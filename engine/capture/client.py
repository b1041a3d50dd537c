"""Capturing a live OpenAI-compatible stream: POST, then stamp every SSE line the moment it is read.

The reader does one thing per network read: take ``time.monotonic()``, split
the bytes into lines, hand them on. No JSON is parsed here; conformance
analysis (:mod:`engine.capture.conformance`) runs afterwards or elsewhere, so a
slow analysis can never delay a recorded receive time. Failures (refused,
DNS, TLS, HTTP status, not an event stream, closed mid-stream, stalled past the
read timeout) end the capture with a :class:`CaptureError` and keep every line
received before them.
"""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self
from urllib.parse import urlsplit

import httpx

from callscope.engine.capture.request import CaptureRequest, auth_headers

#: One received line: (ms since the request was sent, the line without its newline).
#: Times are kept unrounded here; traces and reports keep them to the microsecond (:func:`stamped`).
Line = tuple[float, str]
LineSink = Callable[[list[Line]], None]

#: How much of an error/non-SSE body is kept for the message.
BODY_EXCERPT = 300
_BODY_READ_LIMIT = 16_384


@dataclass(frozen=True, slots=True)
class CaptureError:
    """Why a capture ended early. ``kind`` is stable: refused, dns, tls, connect-timeout, connect,
    http-status, not-sse, stalled, closed, protocol."""

    kind: str
    message: str


@dataclass(slots=True)
class CaptureResult:
    """Everything a capture produced. Lines are kept even when ``error`` is set."""

    url: str  # redacted: safe to print and record
    lines: list[Line] = field(default_factory=list)
    status: int | None = None
    content_type: str | None = None
    error: CaptureError | None = None
    cancelled: bool = False
    done: bool = False  # ``data: [DONE]`` was received
    started: float | None = None  # time.monotonic() when the request was sent
    ended_ms: float | None = None  # when the capture ended, ms since ``started``

    @property
    def end_cause(self) -> str:
        """The trace end cause: ``cancelled`` (user stop), ``error`` (any failure), else ``stop``."""
        if self.cancelled:
            return "cancelled"
        return "error" if self.error is not None else "stop"

    @property
    def error_message(self) -> str | None:
        return self.error.message if self.error else None


def stamped(lines: list[Line]) -> list[Line]:
    """Receive times to the microsecond, as a trace stores them, so a live report equals its replay."""
    return [(round(ms, 3), line) for ms, line in lines]


def is_done_line(line: str) -> bool:
    return line.startswith("data:") and line[5:].strip() == "[DONE]"


class StreamCapture:
    """One capture session. ``await run()``; ``stop()`` ends it early and keeps what was received.

    ``on_lines`` is called after every network read with the lines that read
    completed (already stamped). Keep it cheap: it runs between reads.
    """

    def __init__(
        self,
        request: CaptureRequest,
        on_lines: LineSink | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.request = request
        self.on_lines = on_lines
        self.result = CaptureResult(url=request.public_url())
        self._transport = transport
        self._task: asyncio.Task[Any] | None = None
        self._stopping = False

    def stop(self) -> None:
        """End the capture now (GUI Stop button); ``run()`` returns the partial result, marked cancelled."""
        self._stopping = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def run(self) -> CaptureResult:
        self._task = asyncio.current_task()
        try:
            if self._stopping:  # stopped before it began
                self.result.cancelled = True
            else:
                await self._stream()
                if not self.result.done and not self._stopping and not _ends_with_finish(self.result.lines):
                    message = (
                        "the server closed the stream before a finish chunk or [DONE]"
                        if self.result.lines
                        else "the server ended the response without sending a single data line"
                    )
                    self._mark_end(error=CaptureError("closed", message))
        except asyncio.CancelledError:
            self._mark_end(cancelled=True)
            if not self._stopping:
                raise
            if self._task is not None:
                self._task.uncancel()
        except httpx.HTTPError as exc:
            self._mark_end(error=classify_error(exc, self.request))
        self._mark_end()
        return self.result

    # ------------------------------------------------------------ internals

    def _mark_end(self, error: CaptureError | None = None, cancelled: bool = False) -> None:
        result = self.result
        if error is not None and result.error is None:
            result.error = error
        if cancelled:
            result.cancelled = True
        if result.ended_ms is None and result.started is not None:
            result.ended_ms = (time.monotonic() - result.started) * 1000.0

    async def _stream(self) -> None:
        request = self.request
        timeout = httpx.Timeout(
            connect=request.connect_timeout,
            read=request.read_timeout,
            write=request.connect_timeout,
            pool=request.connect_timeout,
        )
        headers = {"Accept": "text/event-stream", **auth_headers(request.api_key_env)}
        async with httpx.AsyncClient(verify=not request.insecure, timeout=timeout, transport=self._transport) as client:
            result = self.result
            result.started = time.monotonic()
            async with client.stream("POST", request.url, json=request.body, headers=headers) as response:
                result.status = response.status_code
                result.content_type = response.headers.get("content-type")
                if response.status_code >= 400:
                    body = await _read_some(response)
                    reason = response.reason_phrase or ""
                    result.error = CaptureError(
                        "http-status", f"HTTP {response.status_code} {reason}".rstrip() + _excerpt_suffix(body)
                    )
                    return
                if not (result.content_type or "").lower().startswith("text/event-stream"):
                    body = await _read_some(response)
                    result.error = CaptureError(
                        "not-sse",
                        f"HTTP {response.status_code} answered with {result.content_type or 'no content type'}, "
                        f"not text/event-stream (does the server stream?)" + _excerpt_suffix(body),
                    )
                    return
                await self._read_lines(response)

    async def _read_lines(self, response: httpx.Response) -> None:
        """The hot loop: stamp, split, hand on. Nothing else happens between two reads.

        Written for CPython 3.11's costs (no comprehension frames, one append per
        line, strict decoding first): it has to keep up with a bare httpx reader.
        """
        result = self.result
        started = result.started or time.monotonic()
        monotonic = time.monotonic
        lines = result.lines
        append = lines.append
        sink = self.on_lines
        pending = b""
        ms = 0.0
        async with _EarlyEnd() as end:
            async for data in response.aiter_bytes():
                if end.requested:
                    continue
                ms = (monotonic() - started) * 1000.0
                if pending:
                    data = pending + data
                parts = data.split(b"\n")
                pending = parts.pop()
                if not parts:
                    continue
                first = len(lines)
                crlf = b"\r" in data
                try:
                    for raw in parts:
                        if crlf:
                            raw = raw.rstrip(b"\r")
                        if raw:  # blank lines separate events
                            append((ms, raw.decode()))
                except UnicodeDecodeError:
                    del lines[first:]
                    for raw in parts:
                        raw = raw.rstrip(b"\r")
                        if raw:
                            append((ms, raw.decode("utf-8", "replace")))
                done = b"[DONE]" in data and _cut_at_done(lines, first)
                if sink is not None and len(lines) > first:
                    sink(lines[first:])
                if done:
                    result.done = True
                    end.request()  # [DONE] ends the stream, whatever the server does next
        if end.requested:
            return
        tail = pending.rstrip(b"\r")
        if tail:  # a last line without its newline
            fresh = [(ms, tail.decode("utf-8", "replace"))]
            lines.extend(fresh)
            result.done = is_done_line(fresh[0][1])
            if sink is not None:
                sink(fresh)


class _EarlyEnd:
    """Stop reading a response body early without abandoning httpx's async generators.

    Breaking out of ``async for ... in response.aiter_bytes()`` leaves httpx's
    and httpcore's generators suspended; they are finalised later in another
    task, where their clean-up fails (anyio: "cancel scope in a different
    task"). Instead, :meth:`request` cancels the pending read in this task, so
    the cancellation unwinds every generator where it stands, and the context
    manager swallows that one cancellation.
    """

    def __init__(self) -> None:
        self.requested = False
        self._timeout: asyncio.Timeout | None = None

    async def __aenter__(self) -> Self:
        self._timeout = asyncio.timeout(None)
        await self._timeout.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> bool:
        assert self._timeout is not None
        try:
            await self._timeout.__aexit__(*exc_info)
        except TimeoutError:
            if self.requested:
                return True
            raise
        return False

    def request(self) -> None:
        if not self.requested and self._timeout is not None:
            self.requested = True
            self._timeout.reschedule(asyncio.get_running_loop().time())


def _cut_at_done(lines: list[Line], first: int) -> bool:
    """Drop whatever follows ``data: [DONE]`` among ``lines[first:]``; True if it was there."""
    for i in range(first, len(lines)):
        if is_done_line(lines[i][1]):
            del lines[i + 1 :]
            return True
    return False


async def capture(request: CaptureRequest, on_lines: LineSink | None = None) -> CaptureResult:
    """Run one capture to its end (``[DONE]``, EOF, or an error) on the running event loop."""
    return await StreamCapture(request, on_lines).run()


def capture_sync(request: CaptureRequest, on_lines: LineSink | None = None) -> CaptureResult:
    """:func:`capture` for the command line. Ctrl-C ends it like ``stop()``: the partial result comes back."""
    session = StreamCapture(request, on_lines)
    try:
        return asyncio.run(session.run())
    except KeyboardInterrupt:
        session._mark_end(cancelled=True)
        return session.result


# ------------------------------------------------------------------ errors


async def _read_some(response: httpx.Response) -> bytes:
    """The first part of a body (error pages, JSON answers): enough for a message, bounded."""
    data = b""
    try:
        async with _EarlyEnd() as end:
            async for piece in response.aiter_bytes():
                if not end.requested:
                    data += piece
                    if len(data) >= _BODY_READ_LIMIT:
                        end.request()
    except httpx.HTTPError:
        pass
    return data


def _excerpt_suffix(body: bytes) -> str:
    text = " ".join(body.decode("utf-8", "replace").split())
    if not text:
        return ""
    return ": " + (text if len(text) <= BODY_EXCERPT else text[: BODY_EXCERPT - 1] + "…")


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def classify_error(exc: httpx.HTTPError, request: CaptureRequest) -> CaptureError:
    """One clear line per failure, naming the host and the timeout where they matter."""
    parts = urlsplit(request.url)
    host = parts.hostname or "?"
    where = f"{host}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    chain = _causes(exc)
    text = str(exc) or type(exc).__name__
    if isinstance(exc, httpx.ConnectTimeout):
        return CaptureError("connect-timeout", f"no connection to {where} within {request.connect_timeout:g} s")
    if isinstance(exc, httpx.ReadTimeout):
        return CaptureError("stalled", f"stream stalled: nothing received for {request.read_timeout:g} s (read timeout)")
    if isinstance(exc, httpx.TimeoutException):
        return CaptureError("stalled", f"timed out ({type(exc).__name__}): {text}")
    if isinstance(exc, httpx.ConnectError):
        if any(isinstance(c, socket.gaierror) for c in chain) or "Name or service not known" in text or "nodename" in text:
            return CaptureError("dns", f"cannot resolve host {host!r} ({text})")
        if any(isinstance(c, ssl.SSLError) for c in chain) or "SSL" in text or "certificate" in text.lower():
            hint = "" if request.insecure else " (use --insecure only if you trust this server)"
            if "WRONG_VERSION_NUMBER" in text or "record layer" in text.lower():
                hint = " (is it a plain-HTTP server? try http://)"
            return CaptureError("tls", f"TLS handshake with {where} failed: {text}{hint}")
        if any(isinstance(c, ConnectionRefusedError) for c in chain) or "refused" in text.lower():
            return CaptureError("refused", f"connection refused by {where} (is the server running?)")
        return CaptureError("connect", f"cannot connect to {where}: {text}")
    if isinstance(exc, httpx.RemoteProtocolError):
        return CaptureError("closed", f"server closed the connection mid-stream ({text})")
    if isinstance(exc, (httpx.ReadError, httpx.NetworkError)):
        return CaptureError("closed", f"connection lost mid-stream: {text}")
    return CaptureError("protocol", f"{type(exc).__name__}: {text}")


def _ends_with_finish(lines: list[tuple[float | None, str]], look_back: int = 8) -> bool:
    """Whether one of the last data lines carries a ``finish_reason`` (a server that omits ``[DONE]``)."""
    for _, line in reversed(lines[-look_back:]):
        if not line.startswith("data:"):
            continue
        try:
            chunk = json.loads(line[5:])
        except ValueError:
            continue
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        if isinstance(choices, list) and any(isinstance(c, dict) and c.get("finish_reason") for c in choices):
            return True
    return False
