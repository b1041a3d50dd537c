"""``callscope serve --model``: the packaged model (or any GGUF) answering live, a reference server that streams calls right.

Each request is rendered with the chat template (:func:`~callscope.engine.decode.prompting.plan_prompt`,
as ``callscope run`` does), generated token by token with a grammar that forces
a real call when a call is wanted, and each chunk the streaming policy emits is
written in the protocol the client asked for, the moment it is emitted. The
request's ``tools`` are the tools; its ``tool_choice`` decides the grammar:

- a named function: that function is forced;
- ``required``: a call to any of the tools (or to ``--force-tool NAME``);
- ``auto`` or none: a call (as ``required``) when the conversation ends with the
  user's turn, and a text answer once a tool's result came back (so an agent's
  loop ends: a small model forced to call again would never stop);
- ``none``, or no tools: a text answer. With tools in the prompt it is held to
  :data:`TEXT_GRAMMAR` (plain words: a small model imitating the calls it saw
  in the conversation would write one otherwise).

One worker thread owns the model (llama.cpp's ``Llama`` is not thread-safe):
requests are generated one after the other. A client that goes away stops its
generation between two tokens.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callscope.engine.core.errors import DecodeError
from callscope.engine.core.tools import ToolsError, validate_tools
from callscope.engine.core.wire import WireChunk
from callscope.engine.decode.demos import DEFAULT_MAX_STRING
from callscope.engine.decode.grammar import ANY, OFF
from callscope.engine.decode.loop import SamplerSettings
from callscope.engine.decode.messages import validate_messages
from callscope.engine.decode.model import LoadedModel
from callscope.engine.decode.prompting import AUTO
from callscope.engine.serve.errors import ServeError
from callscope.engine.serve.reply import Piece, Reply
from callscope.engine.streams.protocols import get_protocol
from callscope.engine.streams.writer import ProtocolWriter, final_message, neutral_chunks

_END = object()  # the generation is over
#: A text answer, when the request has tools but no call is wanted: plain words that cannot open a call in any format.
TEXT_GRAMMAR = "root ::= [A-Z] [a-zA-Z0-9 ,.!?'-]{0,160}"


@dataclass(frozen=True, slots=True)
class ModelOptions:
    """How ``serve --model`` generates: ``callscope run``'s settings, minus the request (the client sends it)."""

    path: str | None = None  # a GGUF; None: the packaged SmolLM2-135M-Instruct
    format_id: str = AUTO
    template: Any = None  # a ChatTemplate, or None for the model's own
    force_tool: str = ANY  # what a wanted call may be: any tool, or always this one
    max_calls: int = 1
    min_calls: int = 1
    content_chars: int = 0
    max_string: int = DEFAULT_MAX_STRING
    forms: dict[str, str] = field(default_factory=dict)
    policy: str = "incremental"
    max_tokens: int = 512  # the most one answer may have (a request asking for less gets less)
    sampler: SamplerSettings = field(default_factory=SamplerSettings)
    n_ctx: int | None = None


class ModelSource:
    """The model, owned by one worker thread; :meth:`reply` answers one request with a live generation.

    A :class:`~callscope.engine.serve.server.Replier`: :meth:`start` (load) before serving, :meth:`close` after.
    """

    def __init__(self, options: ModelOptions, load: Any = None) -> None:
        self.options = options
        self.model: LoadedModel | None = None
        self._executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="callscope-model")
        self._load = load  # tests may load another way; default: callscope.engine.decode.model.load_model

    @property
    def label(self) -> str:
        return f"the model {self.model.info.file_name}" if self.model is not None else "the model"

    def start(self) -> None:
        """Load the model in its thread, now (a model that cannot load is an error at start, not per request)."""
        self.model = self._executor.submit(self._load_model).result()

    def _load_model(self) -> LoadedModel:
        if self._load is not None:
            return self._load(self.options)
        from callscope.engine.decode.model import load_model

        return load_model(self.options.path, n_ctx=self.options.n_ctx, seed=self.options.sampler.seed)

    def names(self) -> list[str]:
        return [Path(self.model.info.file_name).stem if self.model is not None else "model"]

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

    def reply(self, protocol: str, body: dict[str, Any]) -> LiveReply:
        """A live generation answering ``body`` (a request of ``protocol``); a :class:`ServeError` for a request
        that cannot be rendered (bad messages, a tool_choice naming no tool)."""
        chat = get_protocol(protocol).chat_request(body)
        messages = [_text_message(m) for m in chat.get("messages") or [] if isinstance(m, dict)]
        try:
            messages, _ = validate_messages(messages)
            tools = validate_tools(chat["tools"]) if chat.get("tools") else None
        except (DecodeError, ToolsError) as exc:
            raise ServeError(400, str(exc), param="messages") from None
        force = forced_tool(chat.get("tool_choice"), tools, messages, self.options.force_tool)
        limit = _requested_max(chat)
        settings = _settings(self.options, messages, tools, force, limit)
        return LiveReply(self, protocol, settings, body.get("model"))

    # ------------------------------------------------------------ in the model's thread

    def generate(self, settings: Any, stop: threading.Event, emit: Any) -> Any:
        """Prepare (the prompt, the grammar: a :class:`DecodeError` here is the request's fault), then generate,
        calling ``emit(chunks)`` with the chunks each token made the policy send, and ``emit(None)`` before it."""
        from callscope.engine.decode.session import LiveRun

        assert self.model is not None
        live = LiveRun(self.model, settings)
        emit(live)
        sent = 0

        def on_token(step: Any, analyzer: Any) -> None:
            nonlocal sent
            chunks = analyzer.chunks
            if len(chunks) > sent:
                emit(chunks[sent:])
                sent = len(chunks)

        result = live.run(stop, on_token)
        rest = result.analysis.chunks[sent:]
        if rest:
            emit(list(rest))
        return result


class LiveReply(Reply):
    """One live generation, its chunks written in the client's protocol as the policy emits them."""

    def __init__(self, source: ModelSource, protocol: str, settings: Any, model: Any) -> None:
        self.source = source
        self.protocol = protocol
        self.settings = settings
        self.model = model if isinstance(model, str) and model else None
        self.name = source.names()[0]
        self.stop = threading.Event()
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.writer: ProtocolWriter | None = None
        self.chunks: list[WireChunk] = []
        self._job: asyncio.Future[Any] | None = None

    async def prepare(self) -> None:
        """Start the generation; returns once its prompt and grammar are ready (or raises a :class:`ServeError`)."""
        loop = asyncio.get_running_loop()

        def emit(item: Any) -> None:
            loop.call_soon_threadsafe(self.queue.put_nowait, item)

        self._job = loop.run_in_executor(self.source._executor, self.source.generate, self.settings, self.stop, emit)
        self._job.add_done_callback(lambda _: self.queue.put_nowait(_END))  # after every chunk emitted
        first = await self.queue.get()
        if first is _END:
            exc = self._job.exception()
            if isinstance(exc, DecodeError):
                raise ServeError(400, f"cannot generate for this request: {exc}")
            raise ServeError(500, f"the generation failed: {exc}")
        self.identity = first.identity
        self.writer = get_protocol(self.protocol).writer(first.identity, self.model)

    async def pieces(self) -> AsyncIterator[Piece]:
        assert self.writer is not None
        opening = self.writer.start()
        if opening:
            yield None, "".join(opening)
        while True:
            item = await self.queue.get()
            if item is _END:
                break
            events = []
            for chunk in neutral_chunks(item):
                self.chunks.append(chunk)
                events += self.writer.write(chunk)
            if events:
                yield None, "".join(events)
        if self._job is not None and self._job.exception() is not None and not self.chunks:
            raise ServeError(500, f"the generation failed: {self._job.exception()}")
        yield None, "".join(self.writer.end())

    async def message(self) -> dict[str, Any]:
        assert self.writer is not None
        while (item := await self.queue.get()) is not _END:
            self.chunks += neutral_chunks(item)
        return final_message(self.writer, self.chunks)

    def cancel(self) -> None:
        self.stop.set()


def forced_tool(choice: Any, tools: list[dict[str, Any]] | None, messages: list[dict[str, Any]], default: str) -> str:
    """What the grammar forces for a request's ``tool_choice`` (see the module's docstring): a tool name, any, off."""
    names = [t["function"]["name"] for t in tools or []]
    if not names or choice == "none":
        return OFF
    if isinstance(choice, dict):
        function = choice.get("function") if isinstance(choice.get("function"), dict) else choice
        name = function.get("name")
        if name not in names:
            raise ServeError(400, f"tool_choice names {name!r}, which is not among the request's tools "
                             f"({', '.join(names)})", param="tool_choice")
        return str(name)
    if choice not in (None, "auto", "required"):
        raise ServeError(400, f"tool_choice {choice!r} is none of auto, none, required or a named function",
                         param="tool_choice")
    if choice != "required" and messages and messages[-1].get("role") == "tool":
        return OFF  # a tool's result came back: the answer is text (an agent's loop ends)
    return default if default in names or default == ANY else ANY


def _text_message(message: dict[str, Any]) -> dict[str, Any]:
    """A message whose content is a string: text parts joined (images and other parts have no place in a prompt)."""
    content = message.get("content")
    if isinstance(content, list):
        text = "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
        message = {**message, "content": text}
    if message.get("role") == "developer":
        message = {**message, "role": "system"}
    return message


def _requested_max(chat: dict[str, Any]) -> int | None:
    for key in ("max_completion_tokens", "max_tokens"):
        value = chat.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _settings(options: ModelOptions, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
              force: str, limit: int | None) -> Any:
    from callscope.engine.decode.session import RunSettings

    return RunSettings(messages=messages, tools=tools, format_id=options.format_id, template=options.template,
                       force_tool=force, max_calls=options.max_calls, min_calls=options.min_calls,
                       content_chars=options.content_chars, max_string=options.max_string, forms=dict(options.forms),
                       policy=options.policy, max_tokens=min(limit or options.max_tokens, options.max_tokens),
                       sampler=options.sampler, name="serve",
                       grammar=TEXT_GRAMMAR if force == OFF and tools else None)
