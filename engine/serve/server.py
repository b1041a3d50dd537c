"""The ``callscope serve`` server: an OpenAI-compatible endpoint on loopback that plays a source to real clients.

Requests are recognised by path: every registered protocol's endpoint
(``POST /v1/chat/completions``, ``/v1/responses``, ``/v1/messages``), and
``GET /v1/models``. Anything else is a ``404`` JSON error shaped like
OpenAI's; a body that is not a JSON object, or has nothing to answer, a
``400``. A request with ``"stream": true`` gets an event stream, each piece at
its recorded time (divided by ``speed``; ``None``: at once); one without gets
the final message.

Each answer is a turn, like a proxied one (:class:`~callscope.engine.capture.proxy.turn.Turn`):
the lines the client was sent are stamped as they go, handed to the observer
(the CLI's one line per turn, the window's Serve source), judged like
``callscope capture`` judges a stream, and with ``record_dir`` recorded as a
capture trace in a session folder (so ``callscope replay``, and ``serve``
itself, read it back). A turn is complete once its protocol's last event was
sent, however the client closes afterwards; a client that leaves before that
cancels the turn (a live generation stops).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from callscope.engine.capture.client import CaptureError, CaptureResult, Line
from callscope.engine.capture.proxy.judge import ProcessJudge, ThreadJudge
from callscope.engine.capture.proxy.listener import ProxyObserver, TurnListener
from callscope.engine.capture.proxy.turn import Turn
from callscope.engine.capture.recording import CaptureRecorder, judged_with
from callscope.engine.capture.request import CaptureRequest
from callscope.engine.core.json_text import DOCUMENT_DEPTH, loads
from callscope.engine.serve.errors import ServeError
from callscope.engine.serve.http import BadRequest, ClientGone, Connection, HttpRequest
from callscope.engine.serve.reply import Reply
from callscope.engine.streams.conformance import DEFAULT_ATOMIC_SILENCE_MS
from callscope.engine.streams.protocols import all_protocols, get_protocol, is_end_line, protocol_for_path

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8788
MODELS_PATH = "/models"
CLIENT_GONE = "the client disconnected"
STOPPED = "callscope serve was stopped"


@dataclass(frozen=True, slots=True)
class ServeConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    #: Recorded times are divided by this (2: twice as fast); None: every piece at once (``--speed max``).
    speed: float | None = 1.0
    #: ``--policy atomic`` for captured streams: each call sent whole, when it was complete.
    atomic: bool = False
    record_dir: Path | None = None
    atomic_silence_ms: float = DEFAULT_ATOMIC_SILENCE_MS
    clients: tuple[str, ...] | None = None


class Replier(Protocol):
    """What answers requests: recorded streams (:class:`RecordingReplier`) or a live model
    (:class:`~callscope.engine.serve.model.ModelSource`, which also has ``start()`` and ``close()``)."""

    label: str

    def names(self) -> list[str]: ...

    def reply(self, protocol: str, body: dict[str, Any]) -> Reply: ...


@dataclass(slots=True)
class ServedTurn(Turn):
    """A turn ``serve`` answered: also what it served."""

    served: str | None = None

    def summary(self) -> str:
        if self.judged_summary is not None:
            return self.judged_summary
        text = Turn.summary(self).replace(", not streamed (passed through)", ", not streamed")
        return text + (f" · served {self.served}" if self.served else "")


class ServeServer(TurnListener[ServedTurn]):
    """``await start()``; requests are answered; ``await stop()`` ends it. One instance per listening socket.

    The listener, the turn bookkeeping and the judging are :class:`TurnListener`'s (shared with the proxy);
    this class answers.
    """

    def __init__(self, config: ServeConfig, replier: Replier, observer: ProxyObserver | None = None,
                 judge: ThreadJudge | ProcessJudge | None = None) -> None:
        super().__init__(config, observer, judge)
        self.config: ServeConfig = config
        self.replier = replier

    # ------------------------------------------------------------ one connection

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = self._admit(writer)
        if task is None:
            return
        connection = Connection(reader, writer)
        try:
            while not self._stopping:
                try:
                    request = await connection.next_request()
                except BadRequest as exc:
                    await connection.fail(exc)
                    break
                if request is None:
                    break
                await self._exchange(connection, request)
                if not connection.keep_alive:
                    break
        except (ConnectionError, ClientGone, asyncio.CancelledError):
            pass
        finally:
            self._release(task, writer)

    async def _exchange(self, connection: Connection, request: HttpRequest) -> None:
        self.turn_count += 1
        body = _json_object(request.body)
        turn = ServedTurn(self.turn_count, request.method, request.target, self.url + request.target,
                          body=body if isinstance(body, dict) else None)
        self.open[turn.number] = turn
        self._notify("turn_started", turn)
        turn.started = time.monotonic()
        try:
            await self._answer(connection, request, turn, body)
        except ServeError as exc:
            turn.status, turn.content_type, turn.error = exc.status, "application/json", exc.message
            with contextlib.suppress(ClientGone):
                await connection.send_json(exc.status, exc.body())
        except ClientGone:
            turn.error = turn.error or CLIENT_GONE
        except asyncio.CancelledError:
            turn.error = turn.error or STOPPED
            self._end(turn)
            raise
        self._end(turn)

    async def _answer(self, connection: Connection, request: HttpRequest, turn: ServedTurn, body: Any) -> None:
        path = request.path.rstrip("/")
        protocol = protocol_for_path(path)
        if path.endswith(MODELS_PATH) and protocol is None:
            if request.method != "GET":
                raise ServeError(405, f"{request.method} {request.path}: the model list is read with GET")
            turn.status, turn.content_type = 200, "application/json"
            await connection.send_json(200, models_list(self.replier.names()))
            return
        if protocol is None:
            paths = ", ".join(spec.path for spec in all_protocols())
            raise ServeError(404, f"Invalid URL ({request.method} {request.path}): callscope serve answers POST "
                             f"{paths} and GET /v1/models", code="unknown_url")
        if request.method != "POST":
            raise ServeError(405, f"{request.method} {request.path}: this endpoint takes POST")
        spec = get_protocol(protocol)
        if not isinstance(body, dict):
            raise ServeError(400, "the request body is not a JSON object" if body is not None or request.body
                             else "the request has no body (a JSON object was expected)")
        if not spec.has_input(body):
            raise ServeError(400, f"the request has nothing to answer: a {spec.label} request needs its messages",
                             param="messages")
        reply = self.replier.reply(protocol, body)
        turn.served = reply.name
        await reply.prepare()
        if body.get("stream") is True:
            await self._stream(connection, turn, reply)
            return
        message = await reply.message()
        turn.status, turn.content_type = 200, "application/json"
        await connection.send_json(200, message)

    # ------------------------------------------------------------ a streamed answer

    async def _stream(self, connection: Connection, turn: ServedTurn, reply: Reply) -> None:
        turn.status, turn.content_type, turn.streaming = 200, "text/event-stream", True
        recorder = self._recorder(turn)
        lines: list[Line] = []
        state = {"done": False}
        sender = asyncio.ensure_future(self._send(connection, turn, reply, lines, recorder, state))
        watch = asyncio.ensure_future(connection.closed())
        error: CaptureError | None = None
        cancelled = False
        try:
            await asyncio.wait({sender, watch}, return_when=asyncio.FIRST_COMPLETED)
            if not sender.done():  # the client left while it was being answered
                sender.cancel()
                with contextlib.suppress(asyncio.CancelledError, ClientGone):
                    await sender
            elif sender.exception() is not None and not isinstance(sender.exception(), ClientGone):
                error = CaptureError("protocol", f"the answer broke off: {sender.exception()}")
            if not state["done"] and error is None:
                cancelled = True
                reply.cancel()
        except asyncio.CancelledError:
            sender.cancel()
            reply.cancel()
            error, cancelled = CaptureError("cancelled", STOPPED), True
            raise
        finally:
            watch.cancel()
            if cancelled and error is None:
                error = CaptureError("cancelled", CLIENT_GONE)
                turn.error = CLIENT_GONE
            self._finish(turn, lines, recorder, error, cancelled, state["done"])

    async def _send(self, connection: Connection, turn: ServedTurn, reply: Reply, lines: list[Line],
                    recorder: CaptureRecorder | None, state: dict[str, bool]) -> None:
        await connection.start_stream([("x-callscope-served", _header_value(reply.name))])
        speed = self.config.speed
        protocol = turn.protocol
        sink = self.observer.turn_lines if self.observer is not None else None
        async for ms, text in reply.pieces():
            if ms is not None and speed is not None:
                delay = turn.started + ms / speed / 1000.0 - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            await connection.send(text)
            sent = (time.monotonic() - turn.started) * 1000.0
            new = [(sent, line) for line in text[:-1].split("\n")] if text.endswith("\n") else \
                [(sent, line) for line in text.split("\n")]
            lines.extend(new)
            if not state["done"] and any(is_end_line(line, protocol) for _, line in new):
                state["done"] = True
            if recorder is not None:
                recorder.write(new)
            if sink is not None:
                sink(turn, new)
        await connection.end_stream()
        state["done"] = True

    def _recorder(self, turn: ServedTurn) -> CaptureRecorder | None:
        if self.session is None:
            return None
        turn.record_path = self.session.turn_path(turn.number)
        extra = {"protocol": turn.protocol, "serve": {"turn": turn.number, "target": turn.target,
                                                      "served": turn.served},
                 **judged_with(self.config.atomic_silence_ms, self.config.clients)}
        request = CaptureRequest(turn.url, turn.body or {}, api_key_env="", protocol=turn.protocol or "")
        try:
            return CaptureRecorder(turn.record_path, request, f"served turn {turn.number}: {turn.served}",
                                   extra=extra)
        except (OSError, ValueError) as exc:
            turn.error = f"cannot record {turn.record_path}: {getattr(exc, 'strerror', None) or exc}"
            turn.record_path = None
            return None

    def _finish(self, turn: ServedTurn, lines: list[Line], recorder: CaptureRecorder | None,
                error: CaptureError | None, cancelled: bool, done: bool) -> None:
        ended = (time.monotonic() - turn.started) * 1000.0
        turn.result = CaptureResult(url=turn.url, lines=lines, protocol=turn.protocol or "", status=turn.status,
                                    content_type=turn.content_type, error=error, cancelled=cancelled, done=done,
                                    started=turn.started, ended_ms=ended)
        if recorder is not None:
            recorder.finish(turn.result)
            if recorder.failed is not None:
                turn.error = recorder.failed

    # ------------------------------------------------------------ judging

    def _end(self, turn: ServedTurn) -> None:
        turn.ended_ms = (time.monotonic() - turn.started) * 1000.0
        self._judge_later(turn)


def models_list(names: list[str]) -> dict[str, Any]:
    """``GET /v1/models``: OpenAI's list, with the fields Anthropic's list has beside them (both SDKs read it)."""
    data = [{"id": n, "object": "model", "type": "model", "created": 0, "created_at": "1970-01-01T00:00:00Z",
             "owned_by": "callscope", "display_name": n} for n in names]
    return {"object": "list", "data": data, "has_more": False,
            "first_id": names[0] if names else None, "last_id": names[-1] if names else None}


def _json_object(raw: bytes) -> Any:
    """The body as JSON (None when empty or not JSON at all)."""
    if not raw.strip():
        return None
    try:
        return loads(raw.decode("utf-8"), DOCUMENT_DEPTH)
    except (UnicodeDecodeError, ValueError):
        return None


def _header_value(text: str) -> str:
    return "".join(c if 0x20 <= ord(c) < 0x7F else "?" for c in text)[:200]
