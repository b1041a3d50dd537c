"""Capturing a live OpenAI-compatible stream: POST, then stamp every SSE line the moment it is read.

The reader does one thing per network read: take ``time.monotonic()``, split
the bytes into lines, hand them on. No JSON is parsed here; conformance
analysis (:mod:`callscope.engine.streams.conformance`) runs afterwards or elsewhere, so a
slow analysis can never delay a recorded receive time. Splitting is linear in
the bytes received however long a line grows (:class:`LineSplitter`). Failures
(refused, DNS, TLS, HTTP status, not an event stream, closed mid-stream,
stalled past the read timeout, past the total deadline) end the capture with a
:class:`CaptureError` and keep every line received before them, including a
last line cut off before its newline. The API key and URL credentials never
reach a line, a message or an exception (:mod:`callscope.engine.capture.redact`).
"""

from __future__ import annotations

import asyncio
import functools
import os
import signal
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Self
from urllib.parse import urlsplit

import httpx

from callscope.engine.capture.redact import Redactor, redactor_for
from callscope.engine.capture.request import CaptureRequest, RequestError, auth_headers
from callscope.engine.core.json_text import dumps
from callscope.engine.streams.conformance import stream_ended
from callscope.engine.streams.protocols import DEFAULT_PROTOCOL, end_text, expected_choices

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
    http-status, not-sse, stalled, deadline, closed, protocol, request."""

    kind: str
    message: str


@dataclass(slots=True)
class CaptureResult:
    """Everything a capture produced. Lines are kept even when ``error`` is set."""

    url: str  # redacted: safe to print and record
    lines: list[Line] = field(default_factory=list)
    protocol: str = DEFAULT_PROTOCOL  # the request's protocol (what the stream is read as)
    expected_choices: int = 1  # the request's n
    status: int | None = None
    content_type: str | None = None
    error: CaptureError | None = None
    cancelled: bool = False
    done: bool = False  # ``data: [DONE]`` was received
    started: float | None = None  # time.monotonic() when the request was sent
    ended_ms: float | None = None  # when the capture ended, ms since ``started``
    cut_bytes: int = 0  # the last line arrived without its newline (kept): how many bytes it had

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


def data_line_count(lines: list[Line]) -> int:
    """How many received lines carry data (``data:``); comments (``: ping``), blank lines and other fields do not."""
    return sum(1 for _, line in lines if line.startswith("data:"))


class LineSplitter:
    """Bytes in, complete lines out (without their newline), in time linear in the bytes however long a line grows.

    Prepending the unfinished line to every read (``pending + data``) copies a
    long line once per read: a 50 MB line in 64 KB reads is some 20 GB of
    copying, tens of seconds that also delay every later receive stamp. Here
    the pieces of an unfinished line are only collected, and joined once when
    its newline arrives. ``copied`` counts the bytes those joins copy (each
    received byte at most once), so a test can check the work without timing it.
    """

    __slots__ = ("pieces", "copied")

    def __init__(self) -> None:
        #: The unfinished line's pieces. The reader reads it (and, when it is empty, fills it itself:
        #: the hot path inlines :meth:`split` for that case); nobody else touches it.
        self.pieces: list[bytes] = []
        self.copied = 0

    def split(self, data: bytes) -> list[bytes]:
        """The lines ``data`` completes, the first one joined with the pieces before it (a trailing CR kept)."""
        pieces = self.pieces
        if pieces and b"\n" not in data:  # the middle of a long line: ``in`` is memchr, split() a slower loop
            pieces.append(data)
            return []
        parts = data.split(b"\n")  # no newline: [data] itself, nothing copied
        tail = parts.pop()
        if pieces and parts:
            pieces.append(parts[0])
            parts[0] = joined = b"".join(pieces)
            self.copied += len(joined)
            pieces.clear()
        if tail:
            pieces.append(tail)
        return parts

    @property
    def pending(self) -> int:
        """Bytes of the unfinished line held so far."""
        return sum(len(piece) for piece in self.pieces)

    def rest(self) -> bytes:
        """The unfinished line (the stream ended before its newline), and forget it."""
        rest = b"".join(self.pieces)
        self.copied += len(rest)
        self.pieces.clear()
        return rest


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
        self.result = CaptureResult(url=request.public_url(), protocol=request.protocol,
                                    expected_choices=expected_choices(request.body))
        #: Masks the key and the URL's credentials in every line, message and exception (read from the env now).
        self.redactor: Redactor = redactor_for(request.url, request.api_key_env)
        #: Bytes to lines, linear in the bytes; its ``copied`` shows the work without timing it.
        self.splitter = LineSplitter()
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
                await self._stream_within_deadline()
                self._check_finished()
        except asyncio.CancelledError:
            self._mark_end(cancelled=True)
            if not self._stopping:
                raise
            if self._task is not None:
                self._task.uncancel()
        except httpx.HTTPError as exc:
            self._mark_end(error=classify_error(self.redactor.exception(exc), self.request))
        except RequestError as exc:
            self._mark_end(error=CaptureError("request", str(exc)))
        except Exception as exc:  # a bug, not a failed capture: re-raised, minus any secret in its message
            raise self.redactor.exception(exc)  # noqa: B904 - the same exception, traceback kept
        self._mark_end()
        return self.result

    # ------------------------------------------------------------ internals

    def _check_finished(self) -> None:
        """A stream that just ended (EOF) before its protocol's end (``[DONE]`` or a finish chunk,
        ``response.completed``, ``message_stop``) is a failed capture."""
        result = self.result
        if result.done or self._stopping or result.error is not None:
            return
        if data_line_count(result.lines) and stream_ended(result.lines, self.request.protocol):
            return
        message = (
            f"the server closed the stream before {end_text(self.request.protocol)}"
            if data_line_count(result.lines)
            else "the server ended the response without sending a single data line"
        )
        self._mark_end(error=CaptureError("closed", message))

    def _fail(self, error: CaptureError) -> None:
        """Record why the capture failed (the first reason wins), redacted, saying if the last line was cut."""
        result = self.result
        if result.error is not None:
            return
        message = error.message
        if result.cut_bytes:
            message += f"; the line being received was cut off after {result.cut_bytes} bytes (kept as received)"
        result.error = replace(error, message=self.redactor.text(message))

    def _mark_end(self, error: CaptureError | None = None, cancelled: bool = False) -> None:
        result = self.result
        if error is not None:
            self._fail(error)
        if cancelled:
            result.cancelled = True
        if result.ended_ms is None and result.started is not None:
            result.ended_ms = (time.monotonic() - result.started) * 1000.0

    async def _stream_within_deadline(self) -> None:
        """:meth:`_stream` under the request's total deadline.

        The read timeout is per read: a server that drips a byte every 50 ms
        never trips it. The deadline bounds the whole response; when it fires,
        what arrived so far is kept (the cancellation unwinds the reader where
        it stands, like :meth:`stop`).
        """
        deadline = self.request.deadline
        if deadline is None:
            await self._stream()
            return
        timeout = asyncio.timeout(deadline)
        try:
            async with timeout:
                await self._stream()
        except TimeoutError:
            if not timeout.expired():
                raise
            self._fail(CaptureError("deadline", self._deadline_message(deadline)))

    def _deadline_message(self, deadline: float) -> str:
        result = self.result
        if result.status is None:
            return f"no response within the {deadline:g} s deadline (--deadline)"
        if result.status >= 400 or not (result.content_type or "").lower().startswith("text/event-stream"):
            return (f"HTTP {result.status} ({result.content_type or 'no content type'}) answered, but its body "
                    f"did not finish within the {deadline:g} s deadline (--deadline)")
        lines = result.lines
        count = data_line_count(lines) - (1 if self.result.cut_bytes and lines[-1][1].startswith("data:") else 0)
        got = f"{count} whole data line{'' if count == 1 else 's'}" if count else "no whole data line"
        return f"deadline reached: the response was still coming after {deadline:g} s (--deadline); {got} arrived"

    async def _stream(self) -> None:
        request = self.request
        timeout = httpx.Timeout(
            connect=request.connect_timeout,
            read=request.read_timeout,
            write=request.connect_timeout,
            pool=request.connect_timeout,
        )
        headers = {"Accept": "text/event-stream", "Content-Type": "application/json",
                   **auth_headers(request.api_key_env, request.protocol)}
        body = dumps(request.body, ensure_ascii=False).encode("utf-8")  # any depth (httpx's json= recurses)
        verify = _tls_context(request.insecure)
        async with httpx.AsyncClient(verify=verify, timeout=timeout, transport=self._transport) as client:
            result = self.result
            result.started = time.monotonic()
            async with client.stream("POST", request.url, content=body, headers=headers) as response:
                result.status = response.status_code
                result.content_type = response.headers.get("content-type")
                if response.status_code >= 400:
                    body = self.redactor.data(await _read_some(response))  # before clipping: no half a key
                    reason = response.reason_phrase or ""
                    self._fail(CaptureError(
                        "http-status", f"HTTP {response.status_code} {reason}".rstrip() + _excerpt_suffix(body)
                    ))
                    return
                if not (result.content_type or "").lower().startswith("text/event-stream"):
                    body = self.redactor.data(await _read_some(response))
                    self._fail(CaptureError(
                        "not-sse",
                        f"HTTP {response.status_code} answered with {result.content_type or 'no content type'}, "
                        f"not text/event-stream (does the server stream?)" + _excerpt_suffix(body),
                    ))
                    return
                await self._read_lines(response)

    async def _read_lines(self, response: httpx.Response) -> None:
        """The hot loop: stamp, split, hand on. Nothing else happens between two reads.

        Written for CPython 3.11's costs (no comprehension frames, one append per
        line, strict decoding first): it has to keep up with a bare httpx reader.
        A line is stamped with the read that completed it (its newline). Checks
        that look at bytes (CR, ``[DONE]``, secrets) look at this read and at the
        first line, which may have been joined from earlier reads.
        """
        result = self.result
        started = result.started or time.monotonic()
        monotonic = time.monotonic
        lines = result.lines
        append = lines.append
        sink = self.on_lines
        split = self.splitter.split
        pieces = self.splitter.pieces
        redactor = self.redactor if self.redactor else None
        ms = 0.0
        skip_lf = False  # the last read ended in CR: an LF starting this one is the same line end
        end = _EarlyEnd()
        try:
            async with end:
                async for data in response.aiter_bytes():
                    if end.requested:
                        continue
                    ms = (monotonic() - started) * 1000.0
                    if skip_lf:
                        skip_lf = False
                        if data[:1] == b"\n":
                            data = data[1:]
                            if not data:
                                continue
                    if b"\r" in data:  # CR and CRLF end lines too (the SSE spec): made LF, once per read
                        skip_lf = data[-1:] == b"\r"
                        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
                    if pieces:  # a line began in an earlier read: the splitter joins it (once)
                        parts = split(data)
                        if not parts:
                            continue
                        head = parts[0]
                        # a [DONE] split over reads is in the joined first line, near its end (O(1), however long)
                        marked = b"[DONE]" in data or b"[DONE]" in head[-64:]
                        secret = redactor is not None and (redactor.hit(data) or redactor.hit(head))
                    else:  # the common case, inline: LineSplitter.split's rule without the call (~10% of a read)
                        parts = data.split(b"\n")
                        tail = parts.pop()
                        if tail:
                            pieces.append(tail)
                        if not parts:
                            continue
                        marked = b"[DONE]" in data
                        secret = redactor is not None and redactor.hit(data)
                    if secret and redactor is not None:
                        parts = [redactor.data(raw) for raw in parts]
                    first = len(lines)
                    try:
                        for raw in parts:  # blank lines too: they end events, and the recording keeps them
                            append((ms, raw.decode()))
                    except UnicodeDecodeError:
                        del lines[first:]
                        for raw in parts:
                            append((ms, raw.decode("utf-8", "replace")))
                    done = marked and _cut_at_done(lines, first)
                    if sink is not None and len(lines) > first:
                        sink(lines[first:])
                    if done:
                        result.done = True
                        end.request()  # [DONE] ends the stream, whatever the server does next
        finally:  # EOF, an error, a stall, the deadline or a stop: a line cut off before its newline is kept
            if not end.requested:
                self._keep_cut_line(ms)

    def _keep_cut_line(self, ms: float) -> None:
        """The bytes after the last newline, as one more line stamped with the read that brought them.

        A server that ends its last line without a newline (or dies mid-line)
        sent those bytes: they are kept, and a failure message says the line
        was cut (:meth:`_fail`).
        """
        rest = self.splitter.rest()
        raw = rest
        if not raw:
            return
        if self.redactor:
            raw = self.redactor.data(raw)
        line = (ms, raw.decode("utf-8", "replace"))
        self.result.lines.append(line)
        if is_done_line(line[1]):
            self.result.done = True  # ``data: [DONE]`` without its newline: sloppy, not cut
        else:
            self.result.cut_bytes = len(rest)
        if self.on_lines is not None:
            self.on_lines([line])


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
    """Drop whatever follows ``data: [DONE]`` (and the blank line that ends its event) among ``lines[first:]``;
    True if it was there."""
    for i in range(first, len(lines)):
        if is_done_line(lines[i][1]):
            keep = i + 2 if i + 1 < len(lines) and not lines[i + 1][1] else i + 1
            del lines[keep:]
            return True
    return False


async def capture(request: CaptureRequest, on_lines: LineSink | None = None) -> CaptureResult:
    """Run one capture to its end (``[DONE]``, EOF, or an error) on the running event loop."""
    return await StreamCapture(request, on_lines).run()


def capture_sync(request: CaptureRequest, on_lines: LineSink | None = None) -> CaptureResult:
    """:func:`capture` for the command line. Ctrl-C or SIGTERM end it like ``stop()``: the partial result comes back."""
    session = StreamCapture(request, on_lines)
    try:
        return asyncio.run(_run_until_terminated(session))
    except KeyboardInterrupt:
        session._mark_end(cancelled=True)
        return session.result


async def _run_until_terminated(session: StreamCapture) -> CaptureResult:
    """Run ``session``, stopping it on SIGTERM (``timeout 60 callscope capture ...``, a CI runner's cancel).

    Python's default SIGTERM ends the process on the spot: the lines still
    queued for the recording, the end record and the report would all be lost.
    """
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGTERM, session.stop)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no Unix signals
        return await session.run()
    try:
        return await session.run()
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


# ------------------------------------------------------------------ TLS


def _tls_context(insecure: bool) -> ssl.SSLContext | bool:
    """What httpx verifies with: nothing with ``--insecure``, else its default context, built once a process."""
    if insecure:
        return False
    return _verifying_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _verifying_context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    """httpx's default verifying context (it honours ``SSL_CERT_FILE``/``SSL_CERT_DIR``, hence the cache key).

    Loading the CA bundle costs some 20 ms, every capture; a context can be
    shared by any number of connections, so the GUI's next capture reuses it.
    """
    del cafile, capath  # the cache key: httpx reads them from the environment itself
    return httpx.create_ssl_context(verify=True)


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
