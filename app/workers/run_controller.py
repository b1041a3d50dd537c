"""The GUI-thread side of a live run: starts and stops the worker, analyses tokens as they arrive.

Worker signals are connected only to methods of this object, which lives on
the GUI thread, so every slot runs there. Tokens are buffered and fed to a
GUI-side :class:`Analyzer` at most once per frame; the panes see the growing
analysis through :meth:`InspectorSession.grow`. When the worker finishes,
its final analysis replaces the growing one; if it fails, the tokens received
so far are finished as an ``error`` run and stay on screen (and can be saved).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal

from callscope.engine.analysis.analyzer import Analysis, Analyzer
from callscope.engine.formats import make_parser
from callscope.engine.inspector.live import provisional_analysis, refresh_scalars
from callscope.engine.inspector.sources import AnalysisSource
from callscope.models.session import InspectorSession
from callscope.widgets.frame_throttle import FrameThrottle
from callscope.workers.run_worker import RunPlan, RunRequest, RunWorker

#: Seconds of token analysis per frame; a burst faster than that is spread over several frames.
FEED_BUDGET_S = 0.004


class RunController(QObject):
    started = Signal()
    phaseChanged = Signal(str)
    progress = Signal(int, float)  # tokens so far, tokens/s
    ended = Signal(object)  # the finished Analysis
    failed = Signal(str)
    _request = Signal(object)

    def __init__(self, session: InspectorSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.thread = QThread()
        self.thread.setObjectName("callscope-decode")
        self.worker = RunWorker()
        self.worker.moveToThread(self.thread)
        self._request.connect(self.worker.run)
        self.worker.phase.connect(self._on_phase)
        self.worker.prepared.connect(self._on_prepared)
        self.worker.tokensReady.connect(self._on_tokens_ready)
        self.worker.finished.connect(self._on_finished)
        self.worker.failed.connect(self._on_failed)
        self.thread.start()
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)  # never leave the decode thread running at exit
        self.running = False
        self.analyzer: Analyzer | None = None
        self.analysis: Analysis | None = None
        self.tools = None
        self.record_dir = Path(tempfile.mkdtemp(prefix="callscope-runs-"))
        self.record_path: str | None = None
        self.tokens_received = 0
        self._pending: list[tuple[bytes, float, int]] = []
        self._first_ms: float | None = None
        self._last_ms: float | None = None
        self._feed = FrameThrottle(self._flush, parent=self)

    # ------------------------------------------------------------ control

    def start(self, request: RunRequest) -> bool:
        if self.running:
            return False
        self.running = True
        self.worker.stop_event.clear()
        self.worker.buffer.clear()
        self.analyzer = None
        self.analysis = None
        self.tools = request.tools
        self.tokens_received = 0
        self._pending.clear()
        self._first_ms = self._last_ms = None
        if request.record is None:
            self._runs = getattr(self, "_runs", 0) + 1
            request.record = str(self.record_dir / f"run-{self._runs}.jsonl")
        self.record_path = request.record
        self.started.emit()
        self._request.emit(request)
        return True

    def stop(self) -> None:
        """Ask the decode loop to stop (takes effect before the next token)."""
        self.worker.stop_event.set()

    def shutdown(self, timeout_ms: int = 30000) -> bool:
        """Stop any run and end the thread (window closing); True if the thread ended."""
        if self.thread.isFinished():
            return True
        self.stop()
        self.thread.quit()
        ended = self.thread.wait(timeout_ms)
        self._feed.cancel()
        return bool(ended)

    # ------------------------------------------------------------ worker signals (GUI thread)

    def _on_phase(self, text: str) -> None:
        self.phaseChanged.emit(text)

    def _on_prepared(self, plan: RunPlan) -> None:
        # Same parser as the worker's: a prompt ending inside <think> starts the generation as reasoning.
        parser = make_parser(plan.format_id, plan.tools, thinking=plan.thinking)
        self.analyzer = Analyzer(plan.name, plan.source, "token", True, parser)
        self.analysis = provisional_analysis(self.analyzer)
        self.session.show_analysis(self.analysis, source=None)
        self.phaseChanged.emit(f"processing prompt ({plan.prompt_tokens} tokens, {plan.model_name})…")

    def _on_tokens_ready(self) -> None:
        """The worker buffered tokens: take them all (one queued signal, however many tokens)."""
        items = self.worker.buffer.take()
        if items:
            self._received(items)

    def on_token(self, data: bytes, ms: float, token: int) -> None:
        """One token from a per-token producer (a signal per token); same path as a batch of one."""
        self._received([(data, ms, token)])

    def _received(self, items: list[tuple[bytes, float, int]]) -> None:
        self._pending.extend(items)
        self.tokens_received += len(items)
        if self._first_ms is None:
            self._first_ms = items[0][1]
            self.phaseChanged.emit("generating…")
        self._last_ms = items[-1][1]
        self._feed.request()

    def _flush(self) -> None:
        """Analyse buffered tokens for at most :data:`FEED_BUDGET_S` per frame; the rest waits a frame."""
        if self.analyzer is None or not self._pending:
            return
        feed = self.analyzer.feed_bytes
        deadline = time.perf_counter() + FEED_BUDGET_S
        done = 0
        for data, ms, token in self._pending:
            feed(data, ms, (token,))
            done += 1
            if done % 64 == 0 and time.perf_counter() > deadline:
                break
        del self._pending[:done]
        if self._pending:
            self._feed.request()
        assert self.analysis is not None
        refresh_scalars(self.analysis, self.analyzer)
        self.session.grow()
        self.progress.emit(self.tokens_received, self.tokens_per_second)

    @property
    def tokens_per_second(self) -> float:
        if self._first_ms is None or self._last_ms is None or self._last_ms <= self._first_ms:
            return 0.0
        return (self.tokens_received - 1) * 1000.0 / (self._last_ms - self._first_ms)

    def _on_finished(self, result) -> None:
        self.worker.buffer.take()
        self._feed.cancel()
        self._pending.clear()
        self.running = False
        analysis: Analysis = result.analysis
        self.analysis = analysis
        self.session.open(AnalysisSource([analysis], self.tools, label=f"live run · {analysis.name}"), analysis.source.policy)
        self.progress.emit(self.tokens_received, self.tokens_per_second)
        self.ended.emit(analysis)

    def drain(self) -> None:
        """Analyse every buffered token now (the run ended, or a test wants the final state)."""
        while self._pending and self.analyzer is not None:
            self._flush()
        self._feed.flush()

    def _on_failed(self, message: str) -> None:
        self._on_tokens_ready()
        self.drain()
        self.running = False
        if self.analyzer is not None and self.analyzer.steps:
            analysis = self.analyzer.finish("error")
            self.analysis = analysis
            self.session.open(AnalysisSource([analysis], self.tools, label=f"failed run · {analysis.name}"), analysis.source.policy)
        self.failed.emit(message)
