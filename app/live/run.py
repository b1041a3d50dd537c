"""The GUI-thread side of a live model run: starts and stops the decode worker, hands its tokens on.

The worker (:mod:`.run_worker`) owns the model on its own thread and decodes;
this controller lives on the GUI thread, so its worker-signal slots run there.
When the prompt is ready the worker sends a :class:`~.run_worker.RunPlan`
and the GUI builds its own :class:`~callscope.engine.analysis.analyzer.Analyzer` of the
same bytes (it never touches the worker's objects); tokens then arrive through
the worker's :class:`~.token_buffer.TokenBuffer` and follow the shared
lifecycle of :class:`~.base.LiveController`. When the worker finishes, its
final analysis replaces the growing one; if it fails, the tokens received so
far are finished as an ``error`` run and stay on screen (and can be saved).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject, QThread, Signal

from callscope.engine.analysis.analyzer import Analyzer, TokenItem
from callscope.engine.analysis.report import plural
from callscope.engine.formats import make_parser
from callscope.live.base import LiveController
from callscope.live.run_worker import RunPlan, RunRequest, RunWorker
from callscope.models.session import InspectorSession
from callscope.ui.errors import gui_wording


class RunController(LiveController[TokenItem]):
    kind = "run"
    noun = "live run"
    _request = Signal(object)

    def __init__(self, session: InspectorSession, parent: QObject | None = None) -> None:
        super().__init__(session, parent)
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
        self._first_ms: float | None = None
        self._last_ms: float | None = None

    # ------------------------------------------------------------ control

    def start(self, request: RunRequest) -> bool:
        """Queue ``request`` on the worker (False if a run is going); the panes switch once the prompt is ready."""
        if self.running:
            return False
        self.worker.stop_event.clear()
        self.worker.buffer.clear()
        self._first_ms = self._last_ms = None
        self._begin(request.tools)
        if request.record is None:
            request.record = self._next_recording()
        self.record_path = request.record
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

    @property
    def tokens_received(self) -> int:
        return self.received

    @property
    def tokens_per_second(self) -> float:
        if self._first_ms is None or self._last_ms is None or self._last_ms <= self._first_ms:
            return 0.0
        return (self.received - 1) * 1000.0 / (self._last_ms - self._first_ms)

    def _progress_text(self) -> str:
        """The tokens the panes show (analysed), not those still queued: the status line and the transport agree."""
        shown = len(self.analysis.steps) if self.analysis is not None else 0
        return f"{plural(shown, 'token')} · {self.tokens_per_second:.1f} tok/s"

    # ------------------------------------------------------------ worker signals (GUI thread)

    def _on_phase(self, text: str) -> None:
        self.phaseChanged.emit(text)

    def _on_prepared(self, plan: RunPlan) -> None:
        # Same parser as the worker's: a prompt ending inside <think> starts the generation as reasoning.
        parser = make_parser(plan.format_id, plan.tools, thinking=plan.thinking)
        self._show_live(Analyzer(plan.name, plan.source, "token", True, parser, plan.identity))
        self.phaseChanged.emit(f"processing prompt ({plan.prompt_tokens} tokens, {plan.model_name})…")

    def _on_tokens_ready(self) -> None:
        """The worker buffered tokens: take them all (one queued signal, however many tokens)."""
        items = self.worker.buffer.take()
        if items:
            self._received(items)

    def on_token(self, data: bytes, ms: float, token: int) -> None:
        """One token from a per-token producer (a signal per token); same path as a batch of one."""
        self._received([(data, ms, token)])

    def _received(self, items: list[TokenItem]) -> None:
        if self._first_ms is None:
            self._first_ms = items[0][1]
            self.phaseChanged.emit("generating…")
        self._last_ms = items[-1][1]
        super()._received(items)

    def _on_finished(self, result) -> None:
        self.worker.buffer.take()  # the worker's own analysis has every token: what is queued is moot
        self._conclude(result.analysis, f"live run · {result.analysis.name}")

    def _on_failed(self, message: str) -> None:
        self._on_tokens_ready()
        self._fail(gui_wording(message))  # the engine words its errors for the CLI
