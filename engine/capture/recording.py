"""Capture traces: every received line recorded as it arrives, and read back into the same Analysis.

A capture trace is a ``callscope.trace/1`` file with ``source: capture``, unit
``chunk``, one ``line`` record per received SSE line (its receive time, the
line as it came), then an ``end`` record. The report of a live capture is
computed from exactly what the trace keeps (lines, end cause, why it ended, the
redacted URL), so ``callscope replay capture.jsonl`` prints the same report
offline.

Why a capture ended early (refused, stalled, closed mid-stream) is not a
received line, but the report names it; it is kept as the end record's
``detail``. Traces written before the end record had a ``detail`` kept it as one
SSE *comment* line (``: callscope-capture-ended <message>``) just before the
end record; those are still read (and the comment is never taken for a
received line).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable
from typing import Any

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.capture.client import CaptureResult, Line, stamped
from callscope.engine.capture.redact import Redactor, redactor_for
from callscope.engine.capture.request import CaptureRequest
from callscope.engine.recordings.capture_trace import ATOMIC_SILENCE_KEY, CLIENTS_KEY
from callscope.engine.recordings.trace import TraceHeader, TraceWriter
from callscope.engine.streams.conformance import DEFAULT_ATOMIC_SILENCE_MS, analyze_capture_streams
from callscope.engine.streams.sse import EVENTS


def capture_header(request: CaptureRequest, description: str = "", redactor: Redactor | None = None,
                   extra: dict[str, Any] | None = None) -> TraceHeader:
    """The trace header of a capture: the request minus anything secret (no key, redacted URL).

    The body is the user's, but it goes through the redactor too: a request
    file that carries the key (some proxies want it in the body) must not put
    it in the recording. ``extra`` adds what the report depends on beyond the
    request (:data:`ATOMIC_SILENCE_KEY`, :data:`CLIENTS_KEY`, a proxy's turn), so
    the replay judges the stream as the live capture did; a ``protocol`` of None
    (a proxied stream on a path of no known protocol) is left to be recognised.
    """
    redactor = redactor if redactor is not None else redactor_for(request.url, request.api_key_env)
    body = redactor.value(request.body)
    settings = {k: v for k, v in body.items() if k not in ("messages", "tools")}
    tools = body.get("tools")
    return TraceHeader(
        source="capture",
        format=None,
        tools=tools if isinstance(tools, list) else None,
        messages=body.get("messages") if isinstance(body.get("messages"), list) else None,
        description=redactor.text(description) or f"capture of {request.public_url()}",
        unit="chunk",
        # "sse": the recording keeps blank lines, so events are read as the spec says (older ones did not)
        extra=_header_extra(request, settings, redactor.value(extra) if extra else None),
    )


def judged_with(atomic_silence_ms: float, clients: tuple[str, ...] | None) -> dict[str, Any]:
    """The header ``extra`` that makes a replay judge like this capture: its atomic silence, its profiles."""
    found: dict[str, Any] = {ATOMIC_SILENCE_KEY: atomic_silence_ms}
    if clients is not None:
        found[CLIENTS_KEY] = list(clients)
    return found


def _header_extra(request: CaptureRequest, settings: dict[str, Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    found: dict[str, Any] = {"url": request.public_url(), "request": settings, "protocol": request.protocol,
                             "sse": EVENTS}
    found.update(extra or {})
    if found.get("protocol") is None:
        del found["protocol"]
    return found


class CaptureRecorder:
    """Writes received lines to a capture trace, in the stream's quiet moments, and never much later.

    Pass :meth:`write` as the client's ``on_lines``; call :meth:`finish` with the result.
    Encoding and writing a line costs more than reading it, so during a burst
    lines are only queued: they are written (and handed to the OS) once the
    stream has been quiet for a moment (LLM streams pause between tokens all the
    time), and at the latest when the oldest queued line is :data:`MAX_AGE_S`
    old, and at :meth:`finish`. ``MAX_AGE_S`` is the trace writer's own flush
    interval: a capture killed with -9 loses at most the last 250 ms of
    received lines, however steadily the server streams (the trace then has no
    end record: it replays as truncated). Recording never delays a network
    read by more than one batch. Outside an event loop lines are written at once.
    ``clock`` is for tests.
    """

    QUIET_S = 0.01
    TICK_S = 0.05
    MAX_AGE_S = TraceWriter.FLUSH_INTERVAL_S

    def __init__(
        self,
        path: str | os.PathLike[str],
        request: CaptureRequest,
        description: str = "",
        clock: Callable[[], float] = time.monotonic,
        *,
        redactor: Redactor | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        #: The request's own secrets by default; a proxy passes the client's (its key, its auth headers).
        self.redactor = redactor if redactor is not None else redactor_for(request.url, request.api_key_env)
        # Batches are flushed whole (flush()), not record by record: one write to the OS per batch.
        self.writer = TraceWriter(path, capture_header(request, description, self.redactor, extra), flush_each=False)
        self._clock = clock
        self._pending: list[Line] = []
        self._last_write = 0.0
        self._oldest = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Why the recording stopped early (disk full, a removed drive), or None. The capture goes on
        #: without it: a failing disk must not cost the user the report of what the server sent.
        self.failed: str | None = None

    def write(self, lines: list[Line], received: float | None = None) -> None:
        """Queue lines the client just received (they are already redacted); write the queue when it is due.

        ``received``: when the first of them arrived, on this recorder's clock, if that was earlier than
        now (a proxy takes a burst in behind its relay): their age counts from then.
        """
        now = self._clock()
        if not self._pending:
            self._oldest = now if received is None else min(now, received)
        self._pending.extend(lines)
        self._last_write = now
        if now - self._oldest >= self.MAX_AGE_S:  # a burst with no quiet moment: the oldest may wait no longer
            self.flush()
            return
        if self._timer is not None:
            return
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return
        self._schedule()

    def _schedule(self) -> None:
        """The next look at the queue: after a tick, or sooner if the oldest line falls due before that."""
        assert self._loop is not None
        due = self._oldest + self.MAX_AGE_S - self._clock()
        self._timer = self._loop.call_later(max(0.0, min(self.TICK_S, due)), self._tick)

    def _tick(self) -> None:
        self._timer = None
        now = self._clock()
        if now - self._last_write >= self.QUIET_S or now - self._oldest >= self.MAX_AGE_S:
            self.flush()
        if self._pending and self._loop is not None and not self._loop.is_closed():
            self._schedule()

    @property
    def queued(self) -> int:
        """Lines received but not yet written."""
        return len(self._pending)

    def flush(self) -> None:
        """Write every queued line now and hand them to the OS (a kill -9 after this loses none of them)."""
        pending, self._pending = self._pending, []
        if self.failed is not None:
            return
        try:
            self.writer.write_lines(pending)
            self.writer.flush()
        except OSError as exc:
            self._give_up(exc)

    def finish(self, result: CaptureResult) -> None:
        """The rest of the lines, why the capture ended (if early), and the end record."""
        self._cancel_timer()
        self.flush()
        if self.failed is not None:
            return
        ms = result.ended_ms if result.ended_ms is not None else (result.lines[-1][0] if result.lines else None)
        if ms is not None and result.lines and result.lines[-1][0] is not None:
            ms = max(ms, result.lines[-1][0])  # the end is never stamped before the last line
        detail = self.redactor.text(result.error.message) if result.error is not None else None
        try:
            self.writer.end(result.end_cause, ms, detail)
            self.writer.close()
        except OSError as exc:
            self._give_up(exc)

    def close(self) -> None:
        """Close without an end record (the capture died): queued lines are kept, the trace reads as truncated."""
        self._cancel_timer()
        if not self.writer.closed:
            self.flush()
            try:
                self.writer.close()
            except OSError as exc:
                self._give_up(exc)

    def _give_up(self, exc: OSError) -> None:
        """Writing failed: stop recording (what is on disk stays a readable, truncated trace), say why later."""
        self.failed = f"the recording {self.writer.path} stopped: {exc.strerror or exc}"
        self._pending = []
        with contextlib.suppress(OSError):
            self.writer.close()
        with contextlib.suppress(OSError):
            self.writer.close()  # a close whose flush failed may have raised before forgetting the file

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def analyze_capture_result(
    result: CaptureResult,
    name: str = "capture",
    atomic_silence_ms: float = DEFAULT_ATOMIC_SILENCE_MS,
    clients: tuple[str, ...] | None = None,
) -> Analysis:
    """The Analysis of a finished live capture (what ``callscope capture`` prints); its primary choice."""
    return analyze_capture_results(result, name, atomic_silence_ms, clients)[0]


def analyze_capture_results(
    result: CaptureResult,
    name: str = "capture",
    atomic_silence_ms: float = DEFAULT_ATOMIC_SILENCE_MS,
    clients: tuple[str, ...] | None = None,
) -> list[Analysis]:
    """Every choice's Analysis of a finished live capture, the primary first (``n > 1`` gives several)."""
    return analyze_capture_streams(
        stamped(result.lines),
        name,
        result.url,
        url=result.url,
        error=result.error_message,
        cancelled=result.cancelled,
        atomic_silence_ms=atomic_silence_ms,
        protocol=result.protocol,
        clients=clients,
        expected_choices=result.expected_choices,
    )
