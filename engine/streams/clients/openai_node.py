"""openai-node (``openai`` on npm) 6.49.0: ``chat.completions.stream()`` and ``responses.stream()``.

Chat (``src/lib/ChatCompletionStream.ts``, ``#accumulateChatCompletion`` and
``finalizeChatCompletion``; ``AbstractChatCompletionRunner._addChatCompletion``):

- choices and tool calls are JavaScript arrays indexed by the wire ``index``: an index
  that starts at 1 or skips leaves a hole, and the final ``for...of`` over the calls
  (or the choices, for a choice index of 1) throws ``TypeError``; a missing ``index``
  sets a property (``arr[undefined]``) that ``map()`` never sees, so the call is lost;
- ``id``, ``type`` and ``function.name`` are *overwritten* by every truthy value,
  ``function.arguments`` is concatenated with JavaScript's ``+`` (an object becomes
  ``"[object Object]"``); a call without an id gets ``call_<uuid>``;
- when the current call changes (or a finish arrives) the previous call's done event
  throws on a call with no ``type``, or on an index with no call;
- the end throws without ``finish_reason`` or ``role``, or on a call without
  ``type``/``function.name``, or whose type is not ``function``.

Responses (``src/lib/responses/ResponseAccumulator.ts``): the snapshot starts from
``response.created`` (anything else first throws); ``output_item.added`` appends;
every delta and ``.done`` needs its ``output_index`` (else ``missing output``);
lifecycle events (``response.completed``...) *replace* the snapshot with the
response they carry, so the final calls are what ``response.completed`` says;
an event type it does not know throws.
"""

from __future__ import annotations

from typing import Any

from callscope.engine.streams.clients import _js
from callscope.engine.streams.clients._js import UNDEFINED, SparseArray, get, nullish, truthy
from callscope.engine.streams.clients.base import (
    GENERATED_ID,
    NOT_JSON,
    AssembledCall,
    Assembler,
    ClientProfile,
    Raised,
)
from callscope.engine.streams.sse import SseEvent


def _stream_data(event: SseEvent, obj: Any) -> Any:
    """What openai-node's ``Stream`` yields for one event (it throws on bad JSON and on an ``error`` field)."""
    if obj is NOT_JSON:
        raise Raised("SyntaxError", "Unexpected token in JSON")
    if truthy(obj) and isinstance(obj, dict) and truthy(obj.get("error", UNDEFINED)):
        raise Raised("APIError", "the stream carried an error")
    return obj


def _destructure(value: Any) -> dict[str, Any]:
    """``const {a, b} = value``: throws on null/undefined; a primitive has no fields."""
    if nullish(value):
        raise Raised("TypeError", f"Cannot destructure '{_js.string(value)}' as it is {_js.string(value)}.")
    return value if isinstance(value, dict) else {}


class _ChoiceState:
    __slots__ = ("current",)

    def __init__(self) -> None:
        self.current: Any = None  # null until a tool call is seen


class ChatAssembler(Assembler):
    __slots__ = ("started", "choices", "states", "done")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        super().__init__(protocol, tools)
        self.started = False
        self.choices = SparseArray()
        self.states: dict[str, _ChoiceState] = {}
        self.done = False

    def event(self, event: SseEvent, obj: Any) -> None:
        if self.done:
            return
        if event.data.startswith("[DONE]"):
            self.done = True
            return
        chunk = _stream_data(event, obj)
        if nullish(chunk):
            raise Raised("TypeError", "Cannot destructure the chunk")
        choices = get(chunk, "choices")
        self.started = True
        if not isinstance(choices, list):
            raise Raised("TypeError", "chunk.choices is not iterable")
        for choice in choices:
            self._accumulate(_destructure(choice))
        for choice in choices:
            self._events(_destructure(choice))

    def fragment(self, choice: int, index: int, text: str) -> bool:
        if self.done or not self.started:
            return False
        snapshot = self.choices.items.get(choice)
        if snapshot is None or truthy(snapshot["finish_reason"]):
            return False
        calls = snapshot["message"].get("tool_calls")
        call = calls.items.get(index) if calls is not None else None
        function = call.get("function") if call is not None else None
        if function is None or type(function.get("arguments")) is not str:
            return False
        state = self.states.get(_js.string(snapshot["index"]))
        if state is None or type(state.current) is not int or state.current != index:
            return False
        function["arguments"] += text
        return True

    # ------------------------------------------------------------ #accumulateChatCompletion

    def _accumulate(self, choice: dict[str, Any]) -> None:
        index = choice.get("index", UNDEFINED)
        snapshot = self.choices.at(index)
        if snapshot is UNDEFINED:
            snapshot = {"finish_reason": choice.get("finish_reason", UNDEFINED), "index": index, "message": {}}
            self.choices.set(index, snapshot)
        if truthy(choice.get("finish_reason", UNDEFINED)):
            snapshot["finish_reason"] = choice["finish_reason"]
        delta = choice.get("delta", UNDEFINED)
        if not truthy(delta):
            return
        fields = delta if isinstance(delta, dict) else {}
        message = snapshot["message"]
        role = fields.get("role", UNDEFINED)
        if truthy(role):
            message["role"] = role
        function_call = fields.get("function_call", UNDEFINED)
        if truthy(function_call):
            self._function_call(message, function_call)
        content = fields.get("content", UNDEFINED)
        if truthy(content):
            message["content"] = (message.get("content") or "") + _js.string(content)
        tool_calls = fields.get("tool_calls", UNDEFINED)
        if truthy(tool_calls):
            if not isinstance(tool_calls, list):
                raise Raised("TypeError", "tool_calls is not iterable")
            calls = message.get("tool_calls")
            if calls is None:
                calls = message["tool_calls"] = SparseArray()
            for entry in tool_calls:
                self._tool_call(calls, _destructure(entry))

    @staticmethod
    def _function_call(message: dict[str, Any], function_call: Any) -> None:
        current = message.get("function_call")
        if current is None:
            message["function_call"] = dict(function_call) if isinstance(function_call, dict) else function_call
            return
        if truthy(get(function_call, "name")):
            current["name"] = function_call["name"]
        if truthy(get(function_call, "arguments")):
            current["arguments"] = _js.string(current.get("arguments") or "") + _js.string(function_call["arguments"])

    @staticmethod
    def _tool_call(calls: SparseArray, entry: dict[str, Any]) -> None:
        index = entry.get("index", UNDEFINED)
        call = calls.at(index)
        if nullish(call):
            call = {}
            calls.set(index, call)
        if truthy(entry.get("id", UNDEFINED)):
            call["id"] = entry["id"]
        if truthy(entry.get("type", UNDEFINED)):
            call["type"] = entry["type"]
        fn = entry.get("function", UNDEFINED)
        if not truthy(fn):
            return
        function = call.get("function")
        if function is None:
            name = get(fn, "name")
            function = call["function"] = {"name": "" if nullish(name) else name, "arguments": ""}
        if truthy(get(fn, "name")):
            function["name"] = fn["name"]
        if truthy(get(fn, "arguments")):
            function["arguments"] = _js.string(function["arguments"]) + _js.string(fn["arguments"])

    # ------------------------------------------------------------ #addChunk's done events

    def _events(self, choice: dict[str, Any]) -> None:
        snapshot = self.choices.at(choice.get("index", UNDEFINED))
        key = _js.string(snapshot["index"])
        state = self.states.get(key)
        if state is None:
            state = self.states[key] = _ChoiceState()
        if truthy(snapshot["finish_reason"]) and not nullish(state.current):
            self._tool_done(snapshot, state.current)
        delta = choice.get("delta", UNDEFINED)
        tool_calls = get(delta, "tool_calls")
        for entry in tool_calls if isinstance(tool_calls, list) else ():
            index = get(entry, "index")
            if not _js.strict_equal(state.current, index):
                if not nullish(state.current):
                    self._tool_done(snapshot, state.current)
            state.current = index

    @staticmethod
    def _tool_done(snapshot: dict[str, Any], index: Any) -> None:
        calls = snapshot["message"].get("tool_calls")
        call = calls.at(index) if calls is not None else UNDEFINED
        if not truthy(call):
            raise Raised("Error", "no tool call snapshot")
        if not truthy(call.get("type", UNDEFINED)):
            raise Raised("Error", "tool call snapshot missing `type`")

    # ------------------------------------------------------------ finalizeChatCompletion and after

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        if not self.started:
            raise Raised("OpenAIError", "request ended without sending any chunks")
        calls: dict[int, list[AssembledCall]] = {}
        content: dict[int, str] = {}
        for position, choice in sorted(self.choices.items.items()):
            message = choice["message"]
            if not truthy(choice["finish_reason"]):
                raise Raised("OpenAIError", f"missing finish_reason for choice {_js.string(choice['index'])}")
            if not truthy(message.get("role", UNDEFINED)):
                raise Raised("OpenAIError", f"missing role for choice {_js.string(choice['index'])}")
            content[position] = _js.string(message["content"]) if "content" in message else ""
            if message.get("function_call") is not None:
                self._check_function_call(message["function_call"])
                calls[position] = []
                continue
            calls[position] = self._final_calls(message.get("tool_calls"))
        for position in range(self.choices.length):  # normalizeToolCallIds: for...of over the choices
            if position not in self.choices.items:
                raise Raised("TypeError", "Cannot read properties of undefined (reading 'message')")
        return calls, content

    @staticmethod
    def _check_function_call(function_call: Any) -> None:
        if nullish(get(function_call, "arguments")):
            raise Raised("OpenAIError", "missing function_call.arguments")
        if not truthy(get(function_call, "name")):
            raise Raised("OpenAIError", "missing function_call.name")

    @staticmethod
    def _final_calls(tool_calls: SparseArray | None) -> list[AssembledCall]:
        if tool_calls is None:
            return []
        found = []
        for call in tool_calls.items.values():  # tool_calls.map(): holes skipped
            fn = call.get("function") or {}
            if nullish(call.get("type", UNDEFINED)):
                raise Raised("OpenAIError", "missing tool_calls[].type")
            if nullish(fn.get("name", UNDEFINED)):
                raise Raised("OpenAIError", "missing tool_calls[].function.name")
            if nullish(fn.get("arguments", UNDEFINED)):
                raise Raised("OpenAIError", "missing tool_calls[].function.arguments")
        for position in range(tool_calls.length):  # then for...of: a hole is undefined
            call = tool_calls.items.get(position)
            if call is None:
                raise Raised("TypeError", "Cannot read properties of undefined (reading 'type')")
            if call["type"] != "function":
                raise Raised("OpenAIError", f"Currently only `function` tool calls are supported; Received "
                                            f"`{_js.string(call['type'])}`")
            fn = call["function"]
            call_id = call.get("id", UNDEFINED)
            found.append(AssembledCall(call_id if truthy(call_id) else GENERATED_ID, fn["name"], fn["arguments"],
                                       not_string=not isinstance(fn["arguments"], str)))
        return found


# ---------------------------------------------------------------- Responses

#: Events the accumulator knows; any other type throws "Unhandled response stream event".
_LIFECYCLE = frozenset({"response.created", "response.queued", "response.in_progress", "response.completed",
                        "response.failed", "response.incomplete"})
_IGNORED = frozenset({"response.audio.delta", "response.audio.done", "response.audio.transcript.delta",
                      "response.audio.transcript.done", "response.image_generation_call.partial_image",
                      "response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed",
                      "response.mcp_list_tools.failed", "keepalive", "error"})
#: Events that need their output item (``getOutput`` throws without it).
_ON_OUTPUT = frozenset({
    "response.output_item.done", "response.content_part.added", "response.content_part.done",
    "response.output_text.delta", "response.output_text.done", "response.output_text.annotation.added",
    "response.refusal.delta", "response.refusal.done", "response.function_call_arguments.delta",
    "response.function_call_arguments.done", "response.reasoning_text.delta", "response.reasoning_text.done",
    "response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
    "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done",
    "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done",
    "response.code_interpreter_call_code.delta", "response.code_interpreter_call_code.done",
    "response.code_interpreter_call.in_progress", "response.code_interpreter_call.interpreting",
    "response.code_interpreter_call.completed", "response.file_search_call.in_progress",
    "response.file_search_call.searching", "response.file_search_call.completed",
    "response.web_search_call.in_progress", "response.web_search_call.searching",
    "response.web_search_call.completed", "response.image_generation_call.in_progress",
    "response.image_generation_call.generating", "response.image_generation_call.completed",
    "response.mcp_call.in_progress", "response.mcp_call.completed", "response.mcp_call.failed"})


class ResponsesAssembler(Assembler):
    __slots__ = ("snapshot", "done")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        super().__init__(protocol, tools)
        self.snapshot: dict[str, Any] | None = None
        self.done = False

    def event(self, event: SseEvent, obj: Any) -> None:
        if self.done:
            return
        if event.data.startswith("[DONE]"):
            self.done = True
            return
        data = _stream_data(event, obj)
        kind = get(data, "type")
        if self.snapshot is None:
            if kind != "response.created":
                raise Raised("OpenAIError", "When snapshot hasn't been set yet, expected 'response.created' event, "
                                            f"got {_js.string(kind)}")
            self.snapshot = self._replacement(data)
            return
        if kind in _LIFECYCLE:
            self.snapshot = self._replacement(data)
        elif kind == "response.output_item.added":
            item = get(data, "item")
            self._output().append(dict(item) if isinstance(item, dict) else item)
        elif kind in _ON_OUTPUT:
            self._on_output(kind, data)
        elif kind not in _IGNORED:
            raise Raised("OpenAIError", f"Unhandled response stream event: {event.data[:80]}")

    @staticmethod
    def _replacement(data: Any) -> dict[str, Any]:
        response = get(data, "response")
        if not isinstance(response, dict):
            raise Raised("TypeError", "the event carries no response object")
        snapshot = dict(response)
        output = snapshot.get("output")
        snapshot["output"] = [dict(item) if isinstance(item, dict) else item for item in output] \
            if isinstance(output, list) else output
        return snapshot

    def _output(self) -> list[Any]:
        assert self.snapshot is not None
        output = self.snapshot.get("output")
        if not isinstance(output, list):
            raise Raised("TypeError", "Cannot read properties of undefined (reading 'push')")
        return output

    def _on_output(self, kind: str, data: dict[str, Any]) -> None:
        output = self._output()
        position = _js.array_index(get(data, "output_index"))
        item = output[position] if position is not None and position < len(output) else UNDEFINED
        if not truthy(item):
            raise Raised("OpenAIError", f"missing output at index {_js.string(get(data, 'output_index'))}")
        if kind == "response.output_item.done":
            new = get(data, "item")
            output[position] = dict(new) if isinstance(new, dict) else new
        elif kind == "response.function_call_arguments.delta" and get(item, "type") == "function_call":
            item["arguments"] = _js.string(item.get("arguments", UNDEFINED)) + _js.string(get(data, "delta"))
        elif kind == "response.function_call_arguments.done" and get(item, "type") == "function_call":
            item["arguments"] = get(data, "arguments")
        elif kind in ("response.content_part.added", "response.output_text.delta", "response.output_text.done"):
            self._text(kind, item, data)

    @staticmethod
    def _text(kind: str, item: Any, data: dict[str, Any]) -> None:
        if get(item, "type") != "message":
            return
        content = item.get("content")
        if not isinstance(content, list):
            raise Raised("TypeError", "the message item has no content array")
        if kind == "response.content_part.added":
            part = get(data, "part")
            if get(part, "type") != "reasoning_text":
                content.append(dict(part) if isinstance(part, dict) else part)
            return
        position = _js.array_index(get(data, "content_index"))
        part = content[position] if position is not None and position < len(content) else UNDEFINED
        if not truthy(part):
            raise Raised("OpenAIError", f"missing content at index {_js.string(get(data, 'content_index'))}")
        if get(part, "type") != "output_text":
            raise Raised("OpenAIError", f"expected content to be 'output_text', got {_js.string(get(part, 'type'))}")
        if kind == "response.output_text.delta":
            part["text"] = _js.string(part.get("text", UNDEFINED)) + _js.string(get(data, "delta"))
        else:
            part["text"] = get(data, "text")

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        if self.snapshot is None:
            raise Raised("OpenAIError", "request ended without sending any events")
        output = self.snapshot.get("output")
        calls, texts = [], []
        for item in output if isinstance(output, list) else ():
            kind = get(item, "type")
            if kind == "function_call":
                call_id = item.get("call_id")
                arguments = item.get("arguments")
                calls.append(AssembledCall(call_id, item.get("name"), arguments,
                                           not_string=not isinstance(arguments, str)))
            elif kind == "message" and isinstance(item.get("content"), list):
                texts += [p.get("text") or "" for p in item["content"] if get(p, "type") == "output_text"]
        return {0: calls}, {0: "".join(t if isinstance(t, str) else _js.string(t) for t in texts)}


PROFILE = ClientProfile(
    id="openai-node", library="openai (npm)", version="6.49.0",
    assemblers={"chat": ChatAssembler, "responses": ResponsesAssembler}, default=True,
    about="chat.completions.stream() / responses.stream(): overwrites id and name, holes in arrays throw")
