"""The recording proxy: forward every request unchanged, every answer byte for byte as it arrives, and record streams.

Stack: asyncio streams on both sides. Requests are read with :mod:`h11` (the
HTTP/1.1 state machine httpx itself is built on: Content-Length and chunked
bodies, ``Expect: 100-continue``, keep-alive, pipelined requests); the upstream
is reached by :mod:`.upstream`, a minimal HTTP/1.1 client that hands over each
network read as it came. Nothing is buffered on the way back: each upstream
read is written to the client before the next one is awaited, in one send,
as it was on the wire when the client speaks the same framing (a chunked
answer keeps its very chunks; a Content-Length answer its length), re-chunked
read by read only for a close-delimited answer. The body bytes are always the
upstream's (still compressed, if they were).

Only hop-by-hop headers (RFC 9110 7.6.1: ``Connection`` and what it names,
``Keep-Alive``, ``TE``, ``Transfer-Encoding``, ``Upgrade``, ``Proxy-*``) and
``Host`` are not forwarded as they came. The client's API key and auth headers
go upstream as they came and are masked in everything recorded or printed
(:mod:`callscope.engine.capture.redact`).

A streaming answer (``text/event-stream``) is a turn recorded as a capture
trace as it arrives and judged like ``callscope capture`` (:mod:`.judge`: a
worker thread, or the command line's low-priority worker process, which reads
the turn while it streams). Forwarding comes first: the relay only queues each
read; reads are taken in (lines, recording, the judge's copy) in the stream's
quiet moments (:class:`_Stream`). The upstream unreachable is a
``502`` with one line; a client that goes away cancels its upstream request
(its recording ends ``cancelled``). :meth:`ProxyServer.stop` (Ctrl-C, SIGTERM,
the window's Stop) closes the listener and ends every open turn with its end
record.

What a client can make the proxy hold is bounded (:class:`ProxyConfig`): a
request body over the per-request limit is a ``413``, one that would take the
bodies held across every connection over the in-flight limit a ``503``, each
with one line; a request head that is not complete within the header timeout
is a ``408``, and a connection silent for the idle timeout (between requests,
or in the middle of a body) is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import Callable
from typing import Any

import h11

from callscope.engine.capture.client import (
    CaptureError,
    CaptureResult,
    Line,
    _tls_context,
    data_line_count,
)
from callscope.engine.capture.proxy.config import ProxyConfig, upstream_url
from callscope.engine.capture.proxy.judge import ProcessJudge, ThreadJudge
from callscope.engine.capture.proxy.lines import BodyDecoder, LineStamper
from callscope.engine.capture.proxy.listener import ProxyObserver, TurnListener
from callscope.engine.capture.proxy.turn import Turn
from callscope.engine.capture.proxy.upstream import Exchange, Pool, UpstreamError, tls_context
from callscope.engine.capture.recording import CaptureRecorder, judged_with
from callscope.engine.capture.redact import Redactor, redact_url, url_secrets
from callscope.engine.capture.request import CaptureRequest
from callscope.engine.core.bulk import FullCollectionHold
from callscope.engine.core.json_text import DOCUMENT_DEPTH, loads
from callscope.engine.streams.conformance import stream_ended
from callscope.engine.streams.protocols import (
    DEFAULT_PROTOCOL,
    all_protocols,
    end_markers,
    end_text,
    expected_choices,
    is_end_line,
)

READ_SIZE = 65536
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authenticate", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "content-length", "expect"})
#: Request headers whose values are secrets: masked in every recording and message (they still go upstream).
#: Every registered protocol's key headers are too (:func:`secret_headers`).
SECRET_HEADERS = ("authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie")
STOPPED = "the proxy was stopped"
CLIENT_GONE = "the client disconnected"
#: How an answer's body goes to the client: as on the wire, re-chunked per read, close-delimited, or none at all.
RAW, RECHUNK, CLOSE, NO_BODY = "raw", "rechunk", "close", "none"
#: After refusing a body, how long (and how much of it) the proxy still reads and drops, so that the client,
#: still sending, reads the refusal instead of a reset connection.
LINGER_SECONDS = 2.0
LINGER_BYTES = 64 * 1024 * 1024


class ProxyServer(TurnListener[Turn]):
    """``await start()``; turns come and go; ``await stop()`` ends it. One instance per listening socket.

    The listener, the turn bookkeeping and the judging are :class:`TurnListener`'s; this class forwards.
    """

    read_limit = READ_SIZE

    def __init__(self, config: ProxyConfig, observer: ProxyObserver | None = None,
                 judge: ThreadJudge | ProcessJudge | None = None) -> None:
        super().__init__(config, observer, judge)
        self.config: ProxyConfig = config
        self.pool = Pool(config.upstream, tls_context(config.insecure, _tls_context(config.insecure)),
                         config.connect_timeout, config.read_timeout)
        #: Request-body bytes held across every connection (a body is held until its exchange ends).
        self.bodies = BodyBudget(config.max_in_flight_bytes)

    def _close_resources(self) -> None:
        """The kept upstream connections close once every turn is over (``stop()``)."""
        self.pool.close()

    @property
    def open_turns(self) -> list[Turn]:
        return list(self.open.values())

    # ------------------------------------------------------------ one client connection

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = self._admit(writer)
        if task is None:
            return
        client = _Client(reader, writer, self.config, self.bodies)
        try:
            while not self._stopping:
                request = await client.read_request()
                if request is None:
                    break
                await self._exchange(client, *request)
                if client.broken or not client.keep_alive:
                    break
        except (ConnectionError, h11.ProtocolError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # stop(): the open turn (if any) has its end record already
        finally:
            client.release()
            self._release(task, writer)

    async def _exchange(self, client: _Client, request: h11.Request, body: bytes) -> None:
        target = request.target.decode("latin-1")
        method = request.method.decode("ascii", "replace")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw_items()]
        url = upstream_url(self.config.upstream, target)
        redactor = _redactor(headers, url)
        self.turn_count += 1
        turn = Turn(self.turn_count, method, redactor.text(redact_url(target) if "?" in target else target),
                    redact_url(url), body=_json_body(body, redactor))
        self.open[turn.number] = turn
        self._notify("turn_started", turn)
        hop = _hop_by_hop(headers)
        forwarded = [(k, v) for k, v in headers if k.lower() not in hop]
        recorder: CaptureRecorder | None = None
        stream: _Stream | None = None
        exchange: Exchange | None = None
        try:
            turn.started = time.monotonic()
            exchange = await self.pool.request(method, url, forwarded, body)
            head = exchange.head
            turn.status = head.status
            content_type = head.get(b"content-type")
            turn.content_type = content_type.decode("latin-1") if content_type is not None else None
            turn.streaming = (turn.content_type or "").lower().startswith("text/event-stream")
            mode = await client.respond(exchange)
            if turn.streaming:
                recorder = self._recorder(turn, redactor)
                encoding = head.get(b"content-encoding")
                stream = _Stream(turn, redactor, encoding.decode("latin-1") if encoding else None, recorder,
                                 self._lines_sink(turn))
                # the verdict worker reads the body as it streams (judge.py), so the verdict follows its end
                stream.judge_feed = self.judge.feeder(turn, self.config.atomic_silence_ms, self.config.clients,
                                                      redactor)
            await client.relay(exchange, mode, stream, self.config.read_timeout)
        except asyncio.CancelledError:
            self._end(turn, stream, recorder, CaptureError("cancelled", STOPPED), cancelled=True)
            raise
        except _ClientGone:
            client.broken = True
            if stream is not None and stream.done:  # it had the whole answer: how it hangs up is its business
                self._end(turn, stream, recorder, None)
            else:
                self._end(turn, stream, recorder, CaptureError("cancelled", CLIENT_GONE), cancelled=True)
        except UpstreamError as exc:
            error = CaptureError(exc.kind, redactor.text(exc.message))
            if turn.status is None:  # nothing answered yet: the client gets a 502 with the one line
                turn.error = f"upstream {error.message}"
                await client.fail(502, f"callscope proxy: {turn.error}")
            else:  # the answer broke off mid-way: the client sees it cut, as it was
                client.broken = True
            self._end(turn, stream, recorder, error)
        else:
            self._end(turn, stream, recorder, None)
        finally:
            if exchange is not None:
                exchange.close()

    # ------------------------------------------------------------ recording and judging

    def _recorder(self, turn: Turn, redactor: Redactor) -> CaptureRecorder | None:
        if self.session is None:
            return None
        turn.record_path = self.session.turn_path(turn.number)
        extra = {"protocol": turn.protocol, "proxy": {"turn": turn.number, "method": turn.method,
                                                      "target": turn.target, "status": turn.status},
                 **judged_with(self.config.atomic_silence_ms, self.config.clients)}
        request = CaptureRequest(turn.url, turn.body or {}, api_key_env="", protocol=turn.protocol or DEFAULT_PROTOCOL,
                                 insecure=self.config.insecure, connect_timeout=self.config.connect_timeout,
                                 read_timeout=self.config.read_timeout)
        try:
            return CaptureRecorder(turn.record_path, request, f"proxied turn {turn.number}: {turn.method} {turn.url}",
                                   redactor=redactor, extra=extra)
        except OSError as exc:
            turn.error = f"cannot record {turn.record_path}: {exc.strerror or exc}"
            turn.record_path = None
            return None

    def _lines_sink(self, turn: Turn) -> Callable[[list[Line]], None] | None:
        observer = self.observer
        if observer is None:
            return None
        return lambda lines: observer.turn_lines(turn, lines)

    def _end(self, turn: Turn, stream: _Stream | None, recorder: CaptureRecorder | None,
             error: CaptureError | None, cancelled: bool = False) -> None:
        """The turn is over: its recording gets its end record, then it is judged (off the loop) and listed."""
        turn.ended_ms = (time.monotonic() - turn.started) * 1000.0
        if error is not None and turn.error is None and (stream is not None or cancelled):
            turn.error = error.message
        if stream is not None:
            turn.result = stream.finish(turn.ended_ms, error, cancelled)
            if recorder is not None:
                recorder.finish(turn.result)
                if recorder.failed is not None:
                    turn.error = recorder.failed
        self._judge_later(turn)


class _ClientGone(Exception):
    """The client closed its connection (or it broke) while its answer was being relayed."""


class _Stream:
    """A streamed answer's recording side: decode, stamp, mask, queue for the recorder, hand to the observer.

    Forwarding comes first: the relay only stamps each read with its time and queues it
    (:meth:`feed`); the reads are taken in (decoded, split into lines, recorded, shown,
    handed to the verdict worker) when the stream has been quiet for :attr:`QUIET_S`, when
    the oldest queued read is :attr:`MAX_AGE_S` old, and at the end. A model streaming
    tokens pauses between them all the time, so its lines are taken in as they come; a
    burst is relayed at the pace of the relay alone, and taken in behind it, :attr:`SLICE`
    reads per event-loop turn (a millisecond or two), so the relay runs between slices: a
    whole 100 ms of a burst taken in at once held the relay for 30 ms, and the client,
    its socket buffer drained, waited. Each line keeps the time of the read that brought
    it, as if taken in at once, and the recorder counts a line's age from that read (a
    ``kill -9`` still loses at most its 250 ms).
    """

    QUIET_S = 0.005
    MAX_AGE_S = 0.1
    SLICE = 4

    def __init__(self, turn: Turn, redactor: Redactor, encoding: str | None, recorder: CaptureRecorder | None,
                 sink: Callable[[list[Line]], None] | None) -> None:
        self.turn = turn
        self.decoder = BodyDecoder(encoding)
        self.stamper = LineStamper(redactor)
        self.recorder = recorder
        self.sink = sink
        self.lines: list[Line] = []
        # The protocol's last event arrived: see :attr:`done`.
        self._done = False
        #: Bytes an end event holds: a read without them ends nothing (one C search per read).
        self._end_search = re.compile(b"|".join(re.escape(m) for m in end_markers(turn.protocol))).search
        self._reads: list[tuple[float, float, bytes]] = []  # (monotonic time, ms since the turn began, bytes)
        self._last_read = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._draining: asyncio.Handle | None = None  # the next slice, on the loop's next turn
        # Tens of thousands of (time, line) pairs are kept per turn: no full collection walks them while it streams.
        self._gc_hold = FullCollectionHold()
        self._gc_hold.hold()
        #: Takes each read's decoded bytes once they are split into lines (the verdict worker), or None.
        self.judge_feed: Callable[[float, bytes], None] | None = None

    def feed(self, data: bytes) -> None:
        """A read the relay just forwarded: stamped now, taken in at the stream's next quiet moment."""
        if not data:
            return
        now = time.monotonic()
        reads = self._reads
        reads.append((now, (now - self.turn.started) * 1000.0, data))
        self._last_read = now
        if self._draining is not None:
            return  # being taken in, a slice per turn: this read is in the queue
        if now - reads[0][0] >= self.MAX_AGE_S:
            self._drain()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.QUIET_S, self._tick)

    def _tick(self) -> None:
        self._timer = None
        if not self._reads:
            return
        now = time.monotonic()
        quiet = now - self._last_read
        oldest = now - self._reads[0][0]
        if quiet >= self.QUIET_S or oldest >= self.MAX_AGE_S:
            self._drain()
        else:
            wait = min(self.QUIET_S - quiet, self.MAX_AGE_S - oldest)
            self._timer = asyncio.get_running_loop().call_later(max(0.0, wait), self._tick)

    @property
    def done(self) -> bool:
        """The protocol's last event arrived (``[DONE]``, ``response.completed``, ``message_stop``): the turn is
        complete, however the client closes afterwards (any known protocol's when the path names none).
        Reads still queued are taken in first: they may hold it."""
        if self._reads:
            self.take_in()
        return self._done

    def _drain(self) -> None:
        """Take in the next :attr:`SLICE` queued reads now, and the rest a slice per later loop turn."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._draining = None
        self._take_reads(self.SLICE)
        if self._reads:
            self._draining = asyncio.get_running_loop().call_soon(self._drain)

    def take_in(self) -> None:
        """Every queued read, in order, now: decoded, split into stamped lines, recorded, shown, judged."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._draining is not None:
            self._draining.cancel()
            self._draining = None
        self._take_reads(len(self._reads))

    def _take_reads(self, count: int) -> None:
        reads, self._reads = self._reads[:count], self._reads[count:]
        for received, ms, data in reads:
            if self.decoder.error is not None:
                return
            try:
                decoded = self.decoder.decode(data)
                lines = self.stamper.feed(ms, decoded)
            except Exception as exc:  # noqa: BLE001 - a corrupt body must not break the relay
                self.decoder.error = f"the response body could not be decoded ({type(exc).__name__}: {exc})"
                return
            if self.judge_feed is not None:
                self.judge_feed(ms, decoded)
            if lines:
                self._take(lines, self._end_search(decoded) is not None, received)

    def _take(self, lines: list[Line], maybe_done: bool = True, received: float | None = None) -> None:
        self.lines.extend(lines)
        if maybe_done and not self._done:
            protocol = self.turn.protocol
            self._done = any(is_end_line(line, protocol) for _, line in lines)
        if self.recorder is not None:
            self.recorder.write(lines, received)
        if self.sink is not None:
            self.sink(lines)

    def finish(self, ended_ms: float, error: CaptureError | None, cancelled: bool) -> CaptureResult:
        self.take_in()
        self._gc_hold.release()
        rest = self.stamper.rest(ended_ms)
        if rest:
            self._take(rest)
        turn = self.turn
        if error is None and self.decoder.error is not None:
            error = CaptureError("protocol", self.decoder.error)
        if error is None and not cancelled and not self.done and not stream_ended(self.lines, turn.protocol):
            end = end_text(turn.protocol)
            error = CaptureError("closed", f"the server closed the stream before {end}" if data_line_count(self.lines)
                                 else "the server ended the response without sending a single data line")
        if error is not None and self.stamper.cut_bytes and error.kind != "cancelled":
            error = CaptureError(error.kind, error.message + f"; the line being received was cut off after "
                                 f"{self.stamper.cut_bytes} bytes (kept as received)")
        return CaptureResult(
            url=turn.url, lines=self.lines, protocol=turn.protocol,  # type: ignore[arg-type] - None: recognise it
            expected_choices=expected_choices(turn.body or {}), status=turn.status, content_type=turn.content_type,
            error=error, cancelled=cancelled, done=self.done, started=turn.started,
            ended_ms=ended_ms, cut_bytes=self.stamper.cut_bytes,
        )


class BodyBudget:
    """The request-body bytes held across every connection, against the proxy's in-flight limit (one event loop)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.held = 0

    def take(self, size: int) -> bool:
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def give_back(self, size: int) -> None:
        self.held -= size


class _Timeout(Exception):
    """The client sent nothing within its deadline."""


class _Client:
    """One client connection: h11 reads its requests; answers are written as the upstream framed them."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, config: ProxyConfig,
                 bodies: BodyBudget) -> None:
        self.reader = reader
        self.writer = writer
        self.config = config
        self.bodies = bodies
        self.held = 0  # this connection's share of ``bodies``
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=READ_SIZE * 4)
        self.broken = False
        self.keep_alive = True
        self.http11 = True
        #: When the first byte of the request being read arrived (its head must be complete by the header timeout).
        self.head_started: float | None = None

    def release(self) -> None:
        """The request body read last is no longer held (its exchange is over)."""
        self.bodies.give_back(self.held)
        self.held = 0

    async def read_request(self) -> tuple[h11.Request, bytes] | None:
        """The next request and its whole body, or None when the client closed the connection (or was refused)."""
        self.release()
        request: h11.Request | None = None
        body: list[bytes] = []
        size = 0
        limit = self.config.max_request_bytes
        while True:
            try:
                event = await self._next_event(request is not None)
            except _Timeout:
                return await self._timed_out(request is not None)
            if isinstance(event, h11.ConnectionClosed):
                return None
            if isinstance(event, h11.Request):
                request = event
                self.head_started = None
                declared = _content_length(event)
                if declared is not None and declared > limit:
                    return await self._refuse(413, f"callscope proxy: the request body ({declared} bytes) is over the "
                                              f"{_mib(limit)} limit")
            elif isinstance(event, h11.Data):
                size += len(event.data)
                if size > limit:
                    return await self._refuse(413, f"callscope proxy: the request body is over the {_mib(limit)} limit")
                if not self.bodies.take(len(event.data)):
                    return await self._refuse(503, f"callscope proxy: {_mib(self.bodies.limit)} of request bodies "
                                              "are in flight already; retry when they are done")
                self.held += len(event.data)
                body.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                assert request is not None
                self._next_cycle(request)
                return request, b"".join(body)

    async def _timed_out(self, in_body: bool) -> None:
        """A silent client: an idle connection is closed without a word, a half-sent request gets a 408."""
        if in_body:
            await self.fail(408, f"callscope proxy: the request body stalled for {self.config.idle_timeout:g} s")
        elif self.head_started is not None:
            await self.fail(408, f"callscope proxy: the request head was not complete within "
                            f"{self.config.header_timeout:g} s")
        return None

    async def _refuse(self, status: int, message: str) -> None:
        """Refuse the body being sent: the one line, then read and drop a bounded rest so the client sees it."""
        self.release()
        await self.fail(status, message)
        with contextlib.suppress(OSError, RuntimeError):
            self.writer.write_eof()
        dropped = 0
        with contextlib.suppress(OSError, TimeoutError, ConnectionError):
            async with asyncio.timeout(LINGER_SECONDS):
                while dropped < LINGER_BYTES:
                    data = await self.reader.read(READ_SIZE)
                    if not data:
                        break
                    dropped += len(data)
        return None

    def _next_cycle(self, request: h11.Request) -> None:
        """The answer is ours to write: a fresh parser for the next request, holding what already arrived of it."""
        connection = {part.strip().lower() for k, v in request.headers if k == b"connection" for part in v.split(b",")}
        self.http11 = request.http_version == b"1.1"
        self.keep_alive = self.http11 and b"close" not in connection
        data, closed = self.h11.trailing_data
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=READ_SIZE * 4)
        if data:
            self.head_started = asyncio.get_running_loop().time()  # a pipelined request's head: its clock runs
            self.h11.receive_data(data)
        if closed:
            self.h11.receive_data(b"")

    async def _next_event(self, in_body: bool) -> Any:
        """The next h11 event; :class:`_Timeout` when the client is silent past its deadline.

        Waiting for a request (or for more of its body) the deadline is the idle timeout from now;
        once a request's first byte is in, its head must be complete by the header timeout.
        """
        loop = asyncio.get_running_loop()
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                await self.fail(exc.error_status_hint, f"callscope proxy: bad request ({exc})")
                raise
            if event is not h11.NEED_DATA:
                return event
            if self.h11.they_are_waiting_for_100_continue:
                self.writer.write(self.h11.send(h11.InformationalResponse(status_code=100, headers=[])))
            if in_body or self.head_started is None:
                deadline = loop.time() + self.config.idle_timeout
            else:
                deadline = self.head_started + self.config.header_timeout
            try:
                async with asyncio.timeout_at(deadline):
                    data = await self.reader.read(READ_SIZE)
            except TimeoutError:
                raise _Timeout from None
            if data and not in_body and self.head_started is None:
                self.head_started = loop.time()
            self.h11.receive_data(data)

    async def respond(self, exchange: Exchange) -> str:
        """The upstream's status line and end-to-end headers, at once; returns how the body will be framed."""
        head = exchange.head
        hop = {k.encode("latin-1") for k in _hop_by_hop([(k.decode("latin-1"), v.decode("latin-1"))
                                                         for k, v in head.headers])}
        lines = [b"HTTP/1.1 %d %s" % (head.status, head.reason)]
        keep = hop - {b"content-length"} if exchange.framing in ("none", "length") else hop
        lines += [k + b": " + v for k, v in head.headers if k.lower() not in keep]
        if exchange.framing == "none":
            mode = NO_BODY
        elif exchange.framing == "length":
            mode = RAW
        elif exchange.framing == "chunked" and self.http11:
            mode = RAW
            lines.append(b"Transfer-Encoding: chunked")
        elif self.http11:
            mode = RECHUNK
            lines.append(b"Transfer-Encoding: chunked")
        else:
            mode = CLOSE
        if mode == CLOSE or not self.keep_alive:
            self.keep_alive = False
            lines.append(b"Connection: close")
        self.writer.write(b"\r\n".join(lines) + b"\r\n\r\n")
        await self._drain()
        return mode

    async def relay(self, exchange: Exchange, mode: str, stream: _Stream | None, read_timeout: float) -> None:
        """Every upstream read to the client in one send before the next is awaited; a client that leaves
        cancels the rest at once (even while the upstream is silent), and so the upstream request."""
        task = asyncio.current_task()
        assert task is not None
        gone = False

        def client_closed(watch: asyncio.Task[None]) -> None:
            nonlocal gone
            if not watch.cancelled():
                watch.exception()  # a reset connection is a client gone too (and its exception is retrieved)
                gone = True
                task.cancel()

        watch = asyncio.get_running_loop().create_task(self._watch_client())
        watch.add_done_callback(client_closed)
        write, transport = self.writer.write, self.writer.transport
        try:
            async for raw, body in exchange.reads(read_timeout):
                if mode == RAW:
                    write(raw)
                elif body and mode == RECHUNK:
                    write(b"%x\r\n%s\r\n" % (len(body), body))
                elif body:
                    write(body)
                if stream is not None:
                    stream.feed(body)
                if transport.get_write_buffer_size():
                    await self._drain()
            if mode == RECHUNK:
                write(b"0\r\n\r\n")
            await self._drain()
        except asyncio.CancelledError:
            if gone and task.uncancel() == 0:  # our own cancellation (the client left), not stop()'s
                raise _ClientGone from None
            raise
        finally:
            watch.remove_done_callback(client_closed)
            if not watch.done():
                watch.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watch

    async def _watch_client(self) -> None:
        """Returns when the client has closed its side; anything it sends meanwhile (a pipelined request) is kept."""
        while True:
            data = await self.reader.read(READ_SIZE)
            if not data:
                return
            if self.head_started is None:
                self.head_started = asyncio.get_running_loop().time()
            self.h11.receive_data(data)

    async def _drain(self) -> None:
        try:
            await self.writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise _ClientGone from exc

    async def fail(self, status: int, message: str) -> None:
        """An answer of our own (502 upstream unreachable, 400 bad request): one line of text, then close."""
        body = (message + "\n").encode("utf-8")
        reason = {400: b"Bad Request", 408: b"Request Timeout", 413: b"Content Too Large", 502: b"Bad Gateway",
                  503: b"Service Unavailable"}.get(status, b"Error")
        self.writer.write(b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
                          b"connection: close\r\n\r\n%s" % (status, reason, len(body), body))
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self.writer.drain()
        self.broken = True


def _hop_by_hop(headers: list[tuple[str, str]]) -> frozenset[str]:
    """The headers not to forward: the fixed hop-by-hop set and whatever ``Connection`` names."""
    named = {part.strip().lower() for k, v in headers if k.lower() == "connection" for part in v.split(",")}
    return HOP_BY_HOP | named


def _content_length(request: h11.Request) -> int | None:
    """The body length a request declares (h11 has checked it is one number), or None (chunked, or no body)."""
    for key, value in request.headers:
        if key == b"content-length":
            return int(value)
    return None


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


def secret_headers() -> frozenset[str]:
    """:data:`SECRET_HEADERS` and every header a registered protocol puts its key in (``ProtocolSpec.auth``)."""
    probe = "callscope-key-probe"
    named = {k.lower() for spec in all_protocols() for k, v in spec.auth(probe).items() if probe in v}
    return frozenset(SECRET_HEADERS) | named


def _redactor(headers: list[tuple[str, str]], url: str) -> Redactor:
    """Masks this request's secrets: its auth headers (whole, and the token after the scheme) and URL credentials."""
    values: list[str] = []
    secret = secret_headers()
    for key, value in headers:
        if key.lower() in secret:
            values.append(value.strip())
            _, _, token = value.strip().partition(" ")
            if token:
                values.append(token.strip())
            if key.lower() == "cookie":
                values += [part.partition("=")[2].strip() for part in value.split(";")]
    return Redactor.of(values + url_secrets(url))


def _json_body(body: bytes, redactor: Redactor) -> dict[str, Any] | None:
    """The request body when it is a JSON object a trace header can hold, secrets masked; else None."""
    if not body or body[:1] not in (b"{", b" ", b"\n", b"\r", b"\t"):
        return None
    try:
        value = loads(body.decode("utf-8"), DOCUMENT_DEPTH)
    except (UnicodeDecodeError, ValueError):
        return None
    return redactor.value(value) if isinstance(value, dict) else None
