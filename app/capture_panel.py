"""The Capture source: point callscope at a live OpenAI-compatible server and watch its stream.

- :class:`CaptureDialog` collects URL, request body (JSON editor), API-key
  *variable name*, TLS and timeout; it only collects, :func:`request_from_values`
  validates (one-line :class:`~engine.capture.request.RequestError` messages).
- :class:`CaptureController` runs :class:`~engine.capture.client.StreamCapture`
  on the Qt event loop through qasync (no thread: the client is async). The
  client's line sink only queues (and the recorder only queues during bursts);
  the GUI-side :class:`~engine.capture.conformance.CaptureAnalyzer` is fed at
  most once per frame, so analysis and painting never delay a receive stamp.
  The panes show the growing analysis (what the client assembles, the chunks,
  violations as they are found); at the end the final analysis replaces it and
  the capture trace stays on disk (``record_path``) for Save / replay.

Wiring (main window): a "Capture…" action next to Open and Run opens
:class:`CaptureDialog`; on accept, ``controller.start(request_from_values(dialog.values()))``
(a ``RequestError`` goes to the error presenter); a Stop action calls
``controller.stop()``; ``controller.failed`` goes to the error presenter
(what was received stays on screen); ``controller.shutdown()`` on close. The
app's event loop must be a ``qasync.QEventLoop`` (``qasync.run`` / ``loop.run_forever``).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QEventLoop, QObject, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.capture.client import CaptureResult, Line, StreamCapture
from callscope.engine.capture.conformance import CaptureAnalyzer
from callscope.engine.capture.recording import CaptureRecorder, analyze_capture_result
from callscope.engine.capture.request import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    CaptureRequest,
    endpoint_url,
    parse_body,
)
from callscope.engine.inspector.sources import AnalysisSource
from callscope.models.session import InspectorSession
from callscope.widgets import theme
from callscope.widgets.dialogs import lay_out_source_dialog
from callscope.widgets.frame_throttle import FrameThrottle

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_BODY = {
    "messages": [{"role": "user", "content": "What is the weather in Paris? Use the tool."}],
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ],
    "tool_choice": "auto",
    "max_tokens": 256,
    "stream": True,
}


@dataclass(slots=True)
class CaptureValues:
    url: str
    body_text: str
    api_key_env: str
    insecure: bool
    read_timeout: float


def request_from_values(values: CaptureValues) -> CaptureRequest:
    """Validate what the dialog collected; raises ``RequestError`` with a one-line message."""
    return CaptureRequest(
        endpoint_url(values.url),
        parse_body(values.body_text, "request body"),
        api_key_env=values.api_key_env.strip() or DEFAULT_API_KEY_ENV,
        insecure=values.insecure,
        connect_timeout=DEFAULT_CONNECT_TIMEOUT,
        read_timeout=values.read_timeout,
    )


class CaptureDialog(QDialog):
    def __init__(self, parent: QWidget | None = None, values: CaptureValues | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Capture a live server")
        self.resize(720, 640)
        self.url = QLineEdit(values.url if values else DEFAULT_URL)
        self.url.setToolTip("base URL, /v1, or the full /v1/chat/completions endpoint")
        self.body = QPlainTextEdit(values.body_text if values else json.dumps(DEFAULT_BODY, indent=2))
        self.body.setFont(theme.mono_font(9))
        self.key = QLineEdit(values.api_key_env if values else DEFAULT_API_KEY_ENV)
        self.key.setToolTip("name of the environment variable holding the API key (sent as a bearer token, never saved)")
        self.insecure = QCheckBox("do not verify the TLS certificate")
        self.insecure.setChecked(values.insecure if values else False)
        self.timeout = QDoubleSpinBox()
        self.timeout.setRange(0.1, 3600.0)
        self.timeout.setValue(values.read_timeout if values else DEFAULT_READ_TIMEOUT)
        self.timeout.setSuffix(" s")
        self.timeout.setToolTip("longest silence to wait for before giving up (read timeout)")
        form = QFormLayout()
        form.addRow("URL", self.url)
        form.addRow("API key variable", self.key)
        form.addRow("TLS", self.insecure)
        form.addRow("read timeout", self.timeout)
        lay_out_source_dialog(self, form, 'request body (JSON; "stream": true is forced)', self.body, "Capture")

    def values(self) -> CaptureValues:
        return CaptureValues(
            self.url.text().strip(), self.body.toPlainText(), self.key.text().strip(),
            self.insecure.isChecked(), float(self.timeout.value()),
        )


class CaptureController(QObject):
    """Runs one capture at a time on the qasync loop and keeps the session's panes in step with it."""

    started = Signal()
    progress = Signal(int, float)  # data lines received, ms since the request was sent
    ended = Signal(object)  # the final Analysis
    failed = Signal(str)  # why the capture ended early (what was received stays shown)

    def __init__(self, session: InspectorSession, parent: QObject | None = None,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.loop = loop
        self.record_dir = Path(tempfile.mkdtemp(prefix="callscope-captures-"))
        self.record_path: str | None = None
        self.analyzer: CaptureAnalyzer | None = None
        self.analysis: Analysis | None = None
        self.result: CaptureResult | None = None
        self._capture: StreamCapture | None = None
        self._task: asyncio.Task[None] | None = None
        self._pending: list[Line] = []
        self._count = 0
        self._feed = FrameThrottle(self._flush, parent=self)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self, request: CaptureRequest, name: str | None = None) -> bool:
        """Begin capturing (False if one is running). The panes switch to the live capture at once."""
        if self.running:
            return False
        self._count += 1
        name = name or f"capture-{self._count}"
        self.record_path = str(self.record_dir / f"{name}.jsonl")
        recorder = CaptureRecorder(self.record_path, request)
        url = request.public_url()
        self.analyzer = CaptureAnalyzer(name, url, url=url)
        self.analysis = self.analyzer.provisional()
        self.result = None
        self._pending.clear()
        self.session.show_analysis(self.analysis, source=None)

        def sink(lines: list[Line]) -> None:  # between two network reads: queue only
            recorder.write(lines)
            self._pending.extend(lines)
            self._feed.request()

        self._capture = StreamCapture(request, sink)
        loop = self.loop or asyncio.get_event_loop()
        self._task = loop.create_task(self._run(self._capture, recorder, name))
        self.started.emit()
        return True

    def stop(self) -> None:
        """End the capture now; what was received is analysed and stays shown."""
        if self._capture is not None:
            self._capture.stop()

    def shutdown(self, wait_ms: int = 5000) -> bool:
        """Window closing: stop, then let the task unwind (connection closed, recording finished).

        Waits in a local event loop (which also drives the qasync loop) for at most
        ``wait_ms``; True when no capture is left running.
        """
        self.stop()
        self._feed.cancel()
        task = self._task
        if task is not None and not task.done() and wait_ms > 0:
            waiter = QEventLoop()
            deadline = QTimer()
            deadline.setSingleShot(True)
            deadline.timeout.connect(waiter.quit)
            task.add_done_callback(lambda _t: waiter.quit())
            deadline.start(wait_ms)
            if not task.done():
                waiter.exec()
            deadline.stop()
        return not self.running

    async def _run(self, capture: StreamCapture, recorder: CaptureRecorder, name: str) -> None:
        try:
            result = await capture.run()
        except BaseException as exc:  # a bug, not a network failure (those end in result.error)
            recorder.close()
            self._feed.cancel()
            if not isinstance(exc, Exception):
                raise
            self.failed.emit(f"capture crashed: {type(exc).__name__}: {exc}")
            return
        recorder.finish(result)
        self._finished(result, name)

    def _flush(self) -> None:
        if self.analyzer is None or self.analysis is None or not self._pending:
            return
        lines, self._pending = self._pending, []
        self.analyzer.feed_lines(lines)
        self.analyzer.refresh(self.analysis)
        self.session.grow()
        self.progress.emit(len(self.analysis.steps), lines[-1][0])

    def _finished(self, result: CaptureResult, name: str) -> None:
        self._feed.cancel()
        self._pending.clear()
        self.result = result
        final = analyze_capture_result(result, name)
        self.analysis = final
        label = f"capture · {result.url}"
        self.session.open(AnalysisSource([final], None, label=label), final.source.policy)
        self.progress.emit(len(final.steps), result.ended_ms or 0.0)
        self.ended.emit(final)
        if result.error is not None:
            self.failed.emit(result.error.message)
