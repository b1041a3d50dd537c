"""The Capture source: point callscope at a live OpenAI-compatible server and watch its stream.

:class:`CaptureController` runs :class:`~callscope.engine.capture.client.StreamCapture`
on the Qt event loop through qasync (no thread: the client is async). The
client's line sink only queues (and the recorder only queues during bursts);
the GUI-side :class:`callscope.engine.streams.conformance.CaptureAnalyzer` is fed by
the shared :class:`~.base.LiveController` lifecycle at most once per frame,
so analysis and painting never delay a receive stamp. The panes show the
growing analysis (what the client assembles, the chunks, violations as they
are found); at the end the final analysis, computed from the stamped lines
exactly as ``callscope replay`` of the recording computes it, replaces it, and
the capture trace stays on disk (``record_path``) for Save / replay.

The dialog that collects the request is :mod:`callscope.dialogs.capture`. The
app's event loop must be a ``qasync.QEventLoop`` (``qasync.run`` / ``loop.run_forever``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QObject

from callscope.engine.analysis.report import plural
from callscope.engine.capture.client import CaptureResult, Line, StreamCapture
from callscope.engine.capture.recording import CaptureRecorder, analyze_capture_result, judged_with
from callscope.engine.capture.request import CaptureRequest
from callscope.engine.streams.conformance import DEFAULT_ATOMIC_SILENCE_MS, CaptureAnalyzer
from callscope.engine.streams.protocols import expected_choices
from callscope.live.base import LiveController, wait_for_task
from callscope.models.session import InspectorSession


class CaptureController(LiveController[Line]):
    """Runs one capture at a time on the qasync loop and keeps the session's panes in step with it."""

    kind = "capture"
    noun = "capture"

    def __init__(self, session: InspectorSession, parent: QObject | None = None,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(session, parent)
        self.loop = loop
        self.result: CaptureResult | None = None
        self._capture: StreamCapture | None = None
        self._task: asyncio.Task[None] | None = None
        self._last_ms = 0.0
        #: The client profiles that judge each capture (None: the defaults), as ``capture --client`` picks them.
        self.clients: tuple[str, ...] | None = None

    def start(self, request: CaptureRequest, name: str | None = None) -> bool:
        """Begin capturing (False if one is running). The panes switch to the live capture at once."""
        if self.running:
            return False
        self._begin()
        self.result = None
        self._last_ms = 0.0
        recorder = CaptureRecorder(self._next_recording(), request, extra=judged_with(DEFAULT_ATOMIC_SILENCE_MS,
                                                                                     self.clients))
        name = name or Path(self.record_path or "capture").stem
        url = request.public_url()  # redacted: safe to show
        # judged live as at the end: the request's protocol, its n, the chosen client profiles
        self._show_live(CaptureAnalyzer(name, url, url=url, protocol=request.protocol,
                                        expected_choices=expected_choices(request.body), clients=self.clients))
        self._capture = StreamCapture(request, self._sink(recorder))
        loop = self.loop or asyncio.get_event_loop()
        self._task = loop.create_task(self._run(self._capture, recorder, name))
        self.phaseChanged.emit(f"capturing {url}…")
        return True

    def _sink(self, recorder: CaptureRecorder):
        """The client's line sink: runs between two network reads, so it only records and queues."""

        def sink(lines: list[Line]) -> None:
            recorder.write(lines)
            self._last_ms = lines[-1][0]
            self._received(lines)

        return sink

    def stop(self) -> None:
        """End the capture now; what was received is analysed and stays shown."""
        if self._capture is not None:
            self._capture.stop()

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Window closing: stop, then let the task unwind (connection closed, recording finished).

        Waits in a local event loop (which also drives the qasync loop) for at most
        ``timeout_ms``; True when no capture is left running.
        """
        self.stop()
        self._feed.cancel()
        task = self._task
        wait_for_task(task, timeout_ms)
        return not self.running

    def _progress_text(self) -> str:
        steps = len(self.analysis.steps) if self.analysis is not None else 0
        return f"{plural(steps, 'chunk')} · {self._last_ms / 1000:.1f} s"

    async def _run(self, capture: StreamCapture, recorder: CaptureRecorder, name: str) -> None:
        try:
            result = await capture.run()
        except BaseException as exc:  # a bug, not a network failure (those end in result.error)
            recorder.close()
            if not isinstance(exc, Exception):
                self._settle()
                raise
            self._fail(f"capture crashed: {type(exc).__name__}: {exc}")
            return
        recorder.finish(result)
        self._finished(result, name)

    def _finished(self, result: CaptureResult, name: str) -> None:
        """The stream ended (or broke off): the final analysis is the one its recording replays to."""
        self.result = result
        self._last_ms = result.ended_ms or 0.0
        self._conclude(analyze_capture_result(result, name, clients=self.clients), f"capture · {result.url}")
        if result.error is not None:
            self._fail(result.error.message)
