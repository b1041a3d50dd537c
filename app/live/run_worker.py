"""The live decode on its own thread: load the model once, run requests, emit every token.

The worker object lives on a persistent ``QThread`` that owns the ``Llama``
(llama-cpp-python is not thread-safe). Requests arrive by a queued signal;
each token is handed to the GUI thread as ``(data, ms, token_id)``,
which keeps its own analysis of the same bytes (the GUI never touches the
worker's objects). Tokens go through a :class:`TokenBuffer`: one "tokens
ready" signal covers every token decoded since the GUI last looked. ``stop_event`` is the only thing other threads touch: the
decode loop checks it between tokens, so Stop takes effect within one token
once prompt processing is over.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from callscope.engine.analysis.analyzer import SourceInfo
from callscope.live.token_buffer import TokenBuffer


@dataclass(slots=True)
class RunRequest:
    """Everything one live run needs (validated by the decode engine, on the worker thread)."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    model_path: str | None = None
    format_id: str = "auto"
    policy: str = "incremental"
    force_tool: str = "any"
    max_tokens: int = 256
    seed: int = 7
    record: str | None = None
    name: str = "run"
    demo: str | None = None  # a demo preset's forced-call settings and sampling (callscope.engine.decode.demos)
    #: A chat template to prompt with (callscope.engine.templates.chat.ChatTemplate; the Template pane's), else the model's.
    template: Any = None
    #: ``--thinking``: auto (the text decides when the prompt opened reasoning), on, off.
    thinking: str = "auto"


@dataclass(slots=True)
class RunPlan:
    """What the GUI needs to analyse the same tokens itself, sent once the prompt is ready."""

    source: SourceInfo
    format_id: str
    tools: list[dict[str, Any]] | None
    name: str
    prompt_tokens: int
    model_name: str
    extra: dict[str, Any] = field(default_factory=dict)
    #: How the parser starts: inside reasoning (True), outside (False), undecided ("auto": the text decides).
    thinking: bool | str = False
    #: The run's completion id, created time and model (the worker's recording and final analysis use it):
    #: the growing analysis shows the chunk ids the finished one will have, not a placeholder.
    identity: Any = None


class RunWorker(QObject):
    phase = Signal(str)
    prepared = Signal(object)  # RunPlan
    tokensReady = Signal()  # new tokens in :attr:`buffer` (at most one notification in flight)
    finished = Signal(object)  # callscope.engine.decode.session.LiveResult
    failed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.stop_event = threading.Event()
        self.buffer = TokenBuffer()
        self._model: Any = None
        self._model_key: str | None = None

    @Slot(object)
    def run(self, request: RunRequest) -> None:
        try:
            from callscope.engine.core.errors import DecodeError
        except ImportError as exc:  # pragma: no cover - decode engine missing
            self.failed.emit(f"live runs are not available in this build: {exc}")
            return
        try:
            self._run(request)
        except DecodeError as exc:
            self.failed.emit(str(exc))
        except Exception as exc:  # noqa: BLE001 - a crash must reach the user as a dialog, not kill the thread
            self.failed.emit(f"the run failed unexpectedly: {type(exc).__name__}: {exc}")

    def _run(self, request: RunRequest) -> None:
        from callscope.engine.decode.demos import get_demo
        from callscope.engine.decode.loop import SamplerSettings
        from callscope.engine.decode.session import LiveRun, RunSettings

        model = self._load(request.model_path)
        self.phase.emit("processing prompt…")
        demo = get_demo(request.demo) if request.demo else None
        settings = RunSettings(
            messages=request.messages,
            tools=request.tools,
            format_id=request.format_id,
            template=request.template,
            force_tool=request.force_tool,
            policy=request.policy,
            max_tokens=request.max_tokens,
            sampler=SamplerSettings(seed=request.seed, repeat_penalty=demo.repeat_penalty if demo else 1.0),
            record=request.record,
            name=request.name,
            thinking=request.thinking,
            **(demo.run_options(request.tools) if demo else {}),
        )
        live = LiveRun(model, settings)
        self.prepared.emit(
            RunPlan(live.source_info(), live.plan.format_id, request.tools, request.name, len(live.prompt_tokens), model.info.name,
                    thinking=live.thinking, identity=live.identity)
        )
        result = live.run(self.stop_event, self._on_token)
        self.finished.emit(result)

    def _load(self, path: str | None) -> Any:
        from callscope.engine.core.gguf import default_model_path
        from callscope.engine.decode.model import load_model

        key = path or default_model_path()
        if self._model is None or self._model_key != key:
            from callscope.engine.decode.probe import backend_known

            self.phase.emit("loading model…" if backend_known() else "checking the llama.cpp build (once), loading model…")
            self._model = None
            self._model = load_model(key, seed=0)
            self._model_key = key
        return self._model

    def _on_token(self, step: Any, _analyzer: Any) -> None:
        if self.buffer.push(step.data, float(step.ms), int(step.token)):
            self.tokensReady.emit()
