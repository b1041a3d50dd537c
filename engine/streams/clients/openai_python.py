"""openai-python (``openai`` on PyPI) 3.60.0: ``chat.completions.stream()`` and ``responses.stream()``.

Chat (``openai/lib/streaming/chat/_completions.py``, ``ChatCompletionStreamState``, and
``openai/lib/streaming/_deltas.py``, ``accumulate_delta``): chunks whose ``object`` is not
``chat.completion.chunk`` are skipped; every other one is merged into a snapshot with
``accumulate_delta``, which *concatenates every string field* (so an id or a name sent
again doubles), sets ``index`` and ``type`` to the last value sent, and merges a list of
tool calls by each entry's ``index`` as a Python list position (a missing index raises
``TypeError``, an index past the end is *inserted*, so 1 becomes 0, and then the event
building indexes the list with it and raises ``IndexError``). A choice index other than
0 in the first chunk raises ``IndexError``. A ``type`` turned null on a later chunk fails
an ``assert``. ``get_final_completion()`` raises on ``finish_reason`` ``length`` or
``content_filter`` (the library's own verdict, not a fault of the stream's).

Responses (``openai/lib/streaming/responses/_responses.py``, ``ResponseStreamState``): the
stream must start with ``response.created``; a delta for an output index never added
raises ``RuntimeError``; ``output_item.done`` must keep the item's identity; the final
response is ``response.completed``'s (its ``output``, or the items declared done when it
has none), and without ``response.completed`` ``get_final_response()`` raises.

This runs as plain dicts and lists with Python's own indexing, so the errors are the
library's own (the library is Python too); nothing of the SDK is imported.
"""

from __future__ import annotations

import json
from typing import Any

from callscope.engine.streams.clients.base import (
    NOT_JSON,
    AssembledCall,
    Assembler,
    ClientProfile,
    Raised,
    fresh,
)
from callscope.engine.streams.sse import SseEvent

CHUNK_OBJECT = "chat.completion.chunk"


def _call(call_id: Any, name: Any, arguments: Any) -> AssembledCall:
    """A call as the SDK holds it; arguments that are no string (kept as sent) are shown as JSON, and flagged."""
    if arguments is None or isinstance(arguments, str):
        return AssembledCall(call_id, name, arguments)
    return AssembledCall(call_id, name, json.dumps(arguments), not_string=True)


def _stream_data(event: SseEvent, obj: Any) -> Any:
    """What the SDK's ``Stream`` hands on for one event (it raises on bad JSON and on an ``error`` field)."""
    if obj is NOT_JSON:
        raise Raised("JSONDecodeError", "Expecting value: line 1 column 1 (char 0)")
    if isinstance(obj, dict) and obj.get("error"):
        raise Raised("APIError", "An error occurred during streaming")
    return obj


def _indexed(value: Any) -> bool:
    return isinstance(value, list) and any(isinstance(entry, dict) and "index" in entry for entry in value)


def accumulate_delta(acc: dict[Any, Any], delta: dict[Any, Any]) -> dict[Any, Any]:
    """``accumulate_delta`` of the SDK, on private copies (the delta is shared, never kept or changed)."""
    for key, value in delta.items():
        if key not in acc or acc[key] is None:
            if not _indexed(value):
                acc[key] = fresh(value)
                continue
            acc[key] = []
        current = acc[key]
        if key == "index" or key == "type":
            acc[key] = fresh(value)
            continue
        if isinstance(current, str) and isinstance(value, str):
            current += value
        elif isinstance(current, (int, float)) and isinstance(value, (int, float)):
            current += value
        elif isinstance(current, dict) and isinstance(value, dict):
            current = accumulate_delta(current, value)
        elif isinstance(current, list) and isinstance(value, list):
            if all(isinstance(x, (str, int, float)) for x in current) and (current or not _indexed(value)):
                current.extend(fresh(value))
                continue
            _merge_entries(current, value)
        acc[key] = current
    return acc


def _merge_entries(current: list[Any], entries: list[Any]) -> None:
    for entry in entries:
        if not isinstance(entry, dict):
            raise TypeError(f"Unexpected list delta entry is not a dictionary: {entry}")
        try:
            index = entry["index"]
        except KeyError:
            raise RuntimeError(f"Expected list delta entry to have an `index` key; {entry}") from None
        if not isinstance(index, int):
            raise TypeError(f"Unexpected, list delta entry `index` value is not an integer; {index}")
        try:
            found = current[index]
        except IndexError:
            current.insert(index, fresh(entry))
        else:
            if not isinstance(found, dict):
                raise TypeError("not handled yet")
            current[index] = accumulate_delta(found, entry)


def _delta_of(choice: Any) -> dict[str, Any]:
    if not isinstance(choice, dict):
        raise AttributeError(f"'{type(choice).__name__}' object has no attribute 'delta'")
    delta = choice.get("delta")
    if not isinstance(delta, dict):
        raise AttributeError(f"'{type(delta).__name__}' object has no attribute 'to_dict'")
    return delta


def _without_delta(choice: dict[str, Any]) -> dict[str, Any]:
    return {k: fresh(v) for k, v in choice.items() if k != "delta"}


class _ChoiceEvents:
    """``ChoiceEventState``: which tool call is current, which were declared done."""

    __slots__ = ("current", "done")

    def __init__(self) -> None:
        self.current: Any = None
        self.done: set[Any] = set()


class ChatAssembler(Assembler):
    __slots__ = ("choices", "started", "states", "stopped")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        super().__init__(protocol, tools)
        self.choices: list[Any] = []
        self.started = False
        self.states: list[_ChoiceEvents] = []
        self.stopped = False

    def event(self, event: SseEvent, obj: Any) -> None:
        if self.stopped:
            return
        if event.data.startswith("[DONE]"):
            self.stopped = True  # the SDK stops reading at [DONE]
            return
        chunk = _stream_data(event, obj)
        if not isinstance(chunk, dict):
            raise AttributeError(f"'{type(chunk).__name__}' object has no attribute 'object'")
        if chunk.get("object") != CHUNK_OBJECT:
            return  # the stream helper skips it (Azure's content-filter events)
        if not self.started:
            self._first(chunk)
        else:
            self._accumulate(chunk)
        for choice in self._choices_of(chunk):
            self._build_events(choice)

    @staticmethod
    def _choices_of(chunk: dict[str, Any]) -> list[Any]:
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            raise AttributeError("'NoneType' object is not iterable" if choices is None else
                                 f"'{type(choices).__name__}' chunk.choices cannot be read")
        return choices

    def fragment(self, choice: int, index: int, text: str) -> bool:
        if self.stopped or not self.started or not 0 <= choice < len(self.choices) or choice >= len(self.states):
            return False
        snapshot = self.choices[choice]
        state = self.states[choice]
        calls = snapshot.get("message", {}).get("tool_calls") if isinstance(snapshot, dict) else None
        if type(calls) is not list or not 0 <= index < len(calls) or state.current != index:
            return False
        call = calls[index]
        function = call.get("function") if type(call) is dict else None
        if type(function) is not dict or type(function.get("arguments")) is not str:
            return False
        if snapshot.get("finish_reason") and index not in state.done:
            return False
        call["index"] = index
        function["arguments"] += text
        return True

    # ------------------------------------------------------------ _accumulate_chunk

    def _first(self, chunk: dict[str, Any]) -> None:
        """``_convert_initial_chunk_into_snapshot``: the chunk's choices, each placed at its own index."""
        if "choices" not in chunk:
            raise KeyError("choices")
        choices = [fresh(c) for c in self._choices_of(chunk)]
        for choice in chunk["choices"]:
            delta = _delta_of(choice)
            choices[choice.get("index")] = {**_without_delta(choice), "message": accumulate_delta({}, delta)}
        self.choices = choices
        self.started = True

    def _accumulate(self, chunk: dict[str, Any]) -> None:
        for choice in self._choices_of(chunk):
            delta = _delta_of(choice)
            try:
                snapshot = self.choices[choice.get("index")]
                message = snapshot["message"]
                before = [tc.get("type") if isinstance(tc, dict) else None for tc in message.get("tool_calls") or []]
                accumulate_delta(message, delta)
                after = message.get("tool_calls") or []
                for position, kind in enumerate(before):
                    new = after[position]
                    if kind == "function":
                        assert new.get("type") == "function"
            except IndexError:
                snapshot = {**_without_delta(choice), "message": accumulate_delta({}, delta)}
                self.choices.append(snapshot)
            if choice.get("finish_reason"):
                snapshot["finish_reason"] = choice["finish_reason"]
            for entry in delta.get("tool_calls") or []:
                (snapshot["message"].get("tool_calls") or [])[entry.get("index")]

    # ------------------------------------------------------------ _build_events

    def _build_events(self, choice: dict[str, Any]) -> None:
        index = choice.get("index")
        try:
            state = self.states[index]
        except IndexError:
            state = _ChoiceEvents()
            self.states.append(state)
        snapshot = self.choices[index]
        delta = choice["delta"]
        tool_calls = snapshot["message"].get("tool_calls")
        if delta.get("tool_calls"):
            assert tool_calls is not None
            for entry in delta["tool_calls"]:
                call = tool_calls[entry.get("index")]
                if call.get("type") == "function":
                    assert entry.get("function") is not None
        if snapshot.get("finish_reason") and state.current is not None:
            self._done(snapshot, state, state.current)
        for entry in delta.get("tool_calls") or []:
            entry_index = entry.get("index")
            if state.current != entry_index and state.current is not None:
                self._done(snapshot, state, state.current)
            state.current = entry_index

    @staticmethod
    def _done(snapshot: dict[str, Any], state: _ChoiceEvents, index: Any) -> None:
        """``_add_tool_done_event`` (arguments are parsed only for strict tools, which this does not know of)."""
        if index in state.done:
            return
        state.done.add(index)
        tool_calls = snapshot["message"].get("tool_calls")
        assert tool_calls is not None
        tool_calls[index]

    # ------------------------------------------------------------ get_final_completion

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        if not self.started:
            raise AssertionError("no chunk was received (current_completion_snapshot is None)")
        calls: dict[int, list[AssembledCall]] = {}
        content: dict[int, str] = {}
        for position, choice in enumerate(self.choices):
            reason = choice.get("finish_reason")
            if reason == "length":
                raise Raised("LengthFinishReasonError", "finish_reason is length", deliberate=True)
            if reason == "content_filter":
                raise Raised("ContentFilterFinishReasonError", "finish_reason is content_filter", deliberate=True)
            message = choice.get("message") or {}
            key = choice.get("index") if isinstance(choice.get("index"), int) else position
            text = message.get("content")
            content[key] = text if isinstance(text, str) else ""
            found = []
            for call in message.get("tool_calls") or []:
                if call.get("type") == "custom":
                    continue
                function = call.get("function") or {}
                found.append(_call(call.get("id"), function.get("name"), function.get("arguments")))
            calls[key] = found
        return calls, content


# ---------------------------------------------------------------- Responses

_LIFECYCLE = frozenset({"response.created", "response.queued", "response.in_progress", "response.completed",
                        "response.failed", "response.incomplete"})
_KEYED_BY_CALL_ID = ("function_call", "custom_tool_call", "shell_call", "shell_call_output")


def _identity(item: dict[str, Any]) -> tuple[Any, Any, Any]:
    kind = item.get("type")
    if kind in _KEYED_BY_CALL_ID:
        return kind, None, item.get("call_id")
    return kind, item.get("id"), item.get("call_id")


def _compatible(previous: dict[str, Any], replacement: dict[str, Any]) -> bool:
    return previous.get("id") == replacement.get("id") or (
        previous.get("id") is None and previous.get("type") in ("function_call", "custom_tool_call"))


class ResponsesAssembler(Assembler):
    __slots__ = ("snapshot", "items", "completed", "positions", "final", "stopped")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        super().__init__(protocol, tools)
        self.snapshot: dict[str, Any] | None = None
        self.items: dict[Any, dict[str, Any]] = {}  # output_index -> the item added
        self.completed: dict[Any, dict[str, Any]] = {}  # output_index -> the item declared done
        self.positions: dict[tuple[Any, Any, Any], Any] = {}
        self.final: list[Any] | None = None
        self.stopped = False

    def event(self, event: SseEvent, obj: Any) -> None:
        if self.stopped:
            return
        if event.data.startswith("[DONE]"):
            self.stopped = True
            return
        data = _stream_data(event, obj)
        if not isinstance(data, dict):
            raise AttributeError(f"'{type(data).__name__}' object has no attribute 'type'")
        kind = data.get("type")
        if self.snapshot is None:
            if kind != "response.created":
                raise RuntimeError(f"Expected to have received `response.created` before `{kind}`")
            response = data.get("response")
            self.snapshot = dict(response) if isinstance(response, dict) else {}
            return
        if kind in _LIFECYCLE:
            response = data.get("response") if isinstance(data.get("response"), dict) else {}
            if response.get("id") != self.snapshot.get("id"):
                raise RuntimeError("Lifecycle response identity changed.")
            if kind == "response.completed":
                self._completed(response)
        elif kind == "response.output_item.added":
            self._added(data)
        elif kind == "response.output_item.done":
            self._item_done(data)
        elif kind == "response.content_part.added":
            output = self._item(data.get("output_index"))
            if output.get("type") == "message":
                output.setdefault("content", []).append(fresh(data.get("part")))
        elif kind == "response.output_text.delta":
            output = self._item(data.get("output_index"))
            assert output.get("type") == "message"
            part = output.get("content", [])[data.get("content_index")]
            assert part.get("type") == "output_text"
            part["text"] = (part.get("text") or "") + data.get("delta")
        elif kind == "response.function_call_arguments.delta":
            output = self._item(data.get("output_index"))
            assert output.get("type") == "function_call"
            output["arguments"] = (output.get("arguments") or "") + data.get("delta")

    def _item(self, index: Any) -> dict[str, Any]:
        try:
            return self.items[index]
        except KeyError:
            raise RuntimeError(f"Received a content event for output index {index} before receiving its output "
                               "item") from None

    def _added(self, data: dict[str, Any]) -> None:
        item = data.get("item")
        if item is None:
            return
        index = data.get("output_index")
        if index in self.items:
            raise RuntimeError(f"Duplicate response output index {index}.")
        self.items[index] = fresh(item) if isinstance(item, dict) else {}

    def _item_done(self, data: dict[str, Any]) -> None:
        item = data.get("item") if isinstance(data.get("item"), dict) else {}
        index = data.get("output_index")
        added = self.items.get(index)
        if added is not None and (_identity(added) != _identity(item) or not _compatible(added, item)):
            raise RuntimeError("Completed output item identity changed.")
        identity = _identity(item)
        position = self.positions.get(identity)
        if position is not None and position != index:
            raise RuntimeError("Response snapshot has conflicting output identities.")
        previous = self.completed.get(index)
        if previous is not None:
            self.positions.pop(_identity(previous), None)
        self.completed[index] = item
        self.positions[identity] = index

    def _completed(self, response: dict[str, Any]) -> None:
        output = response.get("output")
        final = {_identity(i): i for i in output or [] if isinstance(i, dict)}
        for item in self.completed.values():
            last = final.get(_identity(item))
            if last is not None and not _compatible(item, last):
                raise RuntimeError("Completed response output identity changed.")
        for index, item in self.items.items():
            last = final.get(_identity(item))
            if index not in self.completed and (last is None or not _compatible(item, last)):
                raise RuntimeError("Cannot complete response with unfinished output items.")
        if output is None:
            output = [self.completed[i] for i in sorted(self.completed)]
        self.final = list(output)

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        if self.final is None:
            raise RuntimeError("Didn't receive a `response.completed` event.")
        calls, texts = [], []
        for item in self.final:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "function_call":
                calls.append(_call(item.get("call_id"), item.get("name"), item.get("arguments")))
            elif item.get("type") == "message":
                texts += [p.get("text") or "" for p in item.get("content") or []
                          if isinstance(p, dict) and p.get("type") == "output_text"]
        return {0: calls}, {0: "".join(t for t in texts if isinstance(t, str))}


PROFILE = ClientProfile(
    id="openai-python", library="openai (PyPI)", version="3.60.0",
    assemblers={"chat": ChatAssembler, "responses": ResponsesAssembler}, default=True,
    about="chat.completions.stream() / responses.stream(): concatenates every string field, indexes lists by index")
