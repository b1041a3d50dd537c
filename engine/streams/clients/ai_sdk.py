"""The Vercel AI SDK 6.0.333 with @ai-sdk/openai-compatible 2.0.92 (provider-utils 4.0.65): ``streamText``.

What opencode and other agents use for any OpenAI-compatible server. Read from
``@ai-sdk/openai-compatible/src/chat/openai-compatible-chat-language-model.ts``
(``doStream``), ``@ai-sdk/provider-utils/src/streaming-tool-call-tracker.ts`` and
``ai/src/generate-text/parse-tool-call.ts``:

- every chunk is validated against a zod schema (``choices`` must be an array, a
  tool-call delta must have a ``function`` object whose ``name``/``arguments`` are
  strings or null, ``index`` a number or null...); a chunk that fails, or carries
  ``error``, becomes an ``error`` part: the application is told the stream failed;
- only ``choices[0]`` is read (its index is not looked at);
- tool-call deltas without a name are held per index until a name arrives; then a
  tracker matches each delta to a call by id, index and name: a delta naming
  *another* name on the same index starts a new call (so a name split in two makes
  two calls, and the argument fragments that follow, matching both, are dropped as
  ambiguous); a repeated id or name continues the call; a missing id is generated;
- calls are emitted at the end (ordered by index); a stream without ``finish_reason``
  ends in an error;
- ``streamText`` then checks each call: a name the request did not offer, or
  arguments that are not JSON (empty ones read as ``{}``), make an *invalid* call.
"""

from __future__ import annotations

import json
from typing import Any

from callscope.engine.streams.clients._js import UNDEFINED, nullish
from callscope.engine.streams.clients._partial_json import js_parse
from callscope.engine.streams.clients.base import (
    GENERATED_ID,
    NOT_JSON,
    AssembledCall,
    Assembler,
    ClientProfile,
    Raised,
)
from callscope.engine.streams.sse import SseEvent

# ---------------------------------------------------------------- the chunk schema


def _nullish(value: Any, check: Any) -> bool:
    return value is UNDEFINED or value is None or check(value)


def _string(value: Any) -> bool:
    return isinstance(value, str)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _object(value: Any, fields: dict[str, Any]) -> bool:
    return isinstance(value, dict) and all(check(value.get(key, UNDEFINED)) for key, check in fields.items())


_TOOL_CALL = {
    "index": lambda v: _nullish(v, _number),
    "id": lambda v: _nullish(v, _string),
    "function": lambda v: _object(v, {"name": lambda n: _nullish(n, _string),
                                      "arguments": lambda a: _nullish(a, _string)}),
    "extra_content": lambda v: _nullish(v, lambda e: _object(e, {"google": lambda g: _nullish(
        g, lambda x: _object(x, {"thought_signature": lambda t: _nullish(t, _string)}))})),
}
_DELTA = {
    "role": lambda v: _nullish(v, lambda r: r in ("assistant", "")),
    "content": lambda v: _nullish(v, lambda c: isinstance(c, str) or (isinstance(c, list) and all(
        isinstance(p, dict) and isinstance(p.get("type"), str) for p in c))),
    "reasoning_content": lambda v: _nullish(v, _string),
    "reasoning": lambda v: _nullish(v, _string),
    "tool_calls": lambda v: _nullish(v, lambda t: isinstance(t, list) and all(_object(e, _TOOL_CALL) for e in t)),
}
_USAGE_NUMBERS = ("prompt_tokens", "completion_tokens", "total_tokens")
_CHUNK = {
    "id": lambda v: _nullish(v, _string),
    "created": lambda v: _nullish(v, _number),
    "model": lambda v: _nullish(v, _string),
    "choices": lambda v: isinstance(v, list) and all(_object(c, {
        "delta": lambda d: _nullish(d, lambda x: _object(x, _DELTA)),
        "finish_reason": lambda f: _nullish(f, _string)}) for c in v),
    "usage": lambda v: _nullish(v, lambda u: _object(u, {
        **{k: (lambda n: _nullish(n, _number)) for k in _USAGE_NUMBERS},
        "prompt_tokens_details": lambda d: _nullish(d, lambda x: _object(
            x, {"cached_tokens": lambda n: _nullish(n, _number)})),
        "completion_tokens_details": lambda d: _nullish(d, lambda x: _object(x, {
            k: (lambda n: _nullish(n, _number))
            for k in ("reasoning_tokens", "accepted_prediction_tokens", "rejected_prediction_tokens")})),
    })),
}


def valid_chunk(obj: Any) -> bool:
    return _object(obj, _CHUNK)


# ---------------------------------------------------------------- the tracker


def _non_blank(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _starts_structured(value: Any) -> bool:
    return isinstance(value, str) and value.lstrip()[:1] in ("{", "[")


class _ArgumentState:
    """Whether the arguments so far hold one complete JSON object or array (``StreamingToolCallArgumentState``)."""

    __slots__ = ("kind", "stack", "in_string", "escaped", "complete")

    def __init__(self, initial: str) -> None:
        self.kind = "undetermined"
        self.stack: list[str] = []
        self.in_string = self.escaped = self.complete = False
        self.append(initial)

    def append(self, delta: str) -> None:
        for char in delta:
            if self.kind == "undetermined":
                if char.isspace():
                    continue
                if char not in "{[":
                    self.kind = "other"
                    continue
                self.kind, self.stack = "structured", [char]
                continue
            if self.kind != "structured" or self.complete:
                continue
            if self.in_string:
                if self.escaped:
                    self.escaped = False
                elif char == "\\":
                    self.escaped = True
                elif char == '"':
                    self.in_string = False
            elif char == '"':
                self.in_string = True
            elif char in "{[":
                self.stack.append(char)
            elif char in "}]":
                if self.stack[-1] != ("{" if char == "}" else "["):
                    self.kind = "other"
                    continue
                self.stack.pop()
                if not self.stack:
                    self.complete = True


class _Call:
    __slots__ = ("id", "index", "sequence", "name", "arguments", "finished")

    def __init__(self, call_id: str, index: Any, sequence: int, name: str, arguments: str) -> None:
        self.id, self.index, self.sequence = call_id, index, sequence
        self.name, self.arguments = name, arguments
        self.finished = False

    @property
    def complete(self) -> bool:
        """``argumentState.hasCompleteStructuredValue``: a function of the arguments so far, read only when a
        delta could start a new call (computed then, not on every fragment)."""
        return _ArgumentState(self.arguments).complete


class Tracker:
    """``StreamingToolCallTracker`` (type validation ``none``, as the openai-compatible provider configures it)."""

    __slots__ = ("calls", "by_id", "by_index", "used")

    def __init__(self) -> None:
        self.calls: list[_Call] = []
        self.by_id: dict[str, list[_Call]] = {}
        self.by_index: dict[Any, list[_Call]] = {}
        self.used: set[str] = set()

    def delta(self, index: Any, wire_id: Any, name: Any, arguments: Any) -> None:
        has_blank_name = isinstance(name, str) and not name.strip()
        wire_id, name = _non_blank(wire_id), _non_blank(name)
        resolved = self._resolve(wire_id, index, name, name is not None and _starts_structured(arguments))
        if resolved == "ambiguous":
            return
        if resolved == "new":
            if has_blank_name:
                return
            call = self._new(index, wire_id, name, arguments)
        else:
            call = resolved
            if wire_id is not None:
                self._associate(self.by_id, wire_id, call)
            if not call.finished and not nullish(arguments):
                call.arguments += arguments
        if index is not None:
            self._associate(self.by_index, index, call)

    @staticmethod
    def _associate(table: dict[Any, list[_Call]], key: Any, call: _Call) -> None:
        calls = table.setdefault(key, [])
        if call not in calls:
            calls.append(call)

    def _resolve(self, wire_id: str | None, index: Any, name: str | None, explicit: bool) -> Any:
        indexed = self.by_index.get(index) if index is not None else None
        matching = [c for c in indexed or () if name is None or c.name == name]
        if wire_id is not None:
            with_id = self.by_id.get(wire_id)
            if with_id is not None:
                if index is not None:
                    found = self._matching([c for c in matching if c in with_id], explicit)
                    if found != "new":
                        return found
                    if name is not None:
                        return "new"
                    if indexed is not None:
                        return "ambiguous"
                    return self._matching(list(with_id), False)
                if name is not None:
                    return self._matching([c for c in with_id if c.name == name], explicit)
                return self._matching(list(with_id), False)
            if matching:
                return "new" if explicit else self._matching(matching, False)
            return "new"
        if indexed is not None:
            return self._matching(matching, explicit)
        if name is not None:
            return "new"
        open_calls = [c for c in self.calls if not c.finished]
        if len(open_calls) == 1:
            return open_calls[0]
        return "ambiguous" if open_calls else "new"

    @staticmethod
    def _matching(calls: list[_Call], explicit: bool) -> Any:
        if not calls:
            return "new"
        if not explicit:
            return calls[0] if len(calls) == 1 else "ambiguous"
        open_calls = [c for c in calls if not c.complete]
        if len(open_calls) == 1:
            return open_calls[0]
        return "ambiguous" if open_calls else "new"

    def _new(self, index: Any, wire_id: str | None, name: str | None, arguments: Any) -> _Call:
        if name is None:
            raise Raised("AI_InvalidResponseDataError", "Expected 'function.name' to be a string.")
        if wire_id is not None and wire_id not in self.used:
            self.used.add(wire_id)
            call_id = wire_id
        else:
            call_id = GENERATED_ID
        call = _Call(call_id, index, len(self.calls), name, "" if nullish(arguments) else arguments)
        self.calls.append(call)
        if wire_id is not None:
            self._associate(self.by_id, wire_id, call)
        return call

    def flush(self) -> list[_Call]:
        calls = self.calls
        if all(c.index is not None for c in calls):
            calls = sorted(calls, key=lambda c: (c.index, c.sequence))
        done = [c for c in calls if not c.finished]
        for call in done:
            call.finished = True
        return done


# ---------------------------------------------------------------- the stream


class ChatAssembler(Assembler):
    __slots__ = ("tracker", "pending", "forwarded", "finish_reason", "text", "choice_key")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        super().__init__(protocol, tools)
        self.tracker = Tracker()
        self.pending: dict[Any, list[Any]] = {}  # index -> [id, buffered arguments]
        self.forwarded: set[Any] = set()
        self.finish_reason: Any = None
        self.text: list[str] = []
        self.choice_key: int | None = None

    def event(self, event: SseEvent, obj: Any) -> None:
        if event.data == "[DONE]":
            return
        if obj is NOT_JSON:
            raise Raised("AI_JSONParseError", "JSON parsing failed")
        if not valid_chunk(obj):
            raise Raised("AI_TypeValidationError", f"Type validation failed: Value: {event.data[:80]}")
        if "error" in obj:
            raise Raised("AI_APICallError", "the chunk carries an error")
        choices = obj["choices"]
        if not choices:
            return
        choice = choices[0]
        if self.choice_key is None:
            index = choice.get("index")
            self.choice_key = index if isinstance(index, int) and not isinstance(index, bool) else 0
        if choice.get("finish_reason") is not None:
            self.finish_reason = choice["finish_reason"]
        delta = choice.get("delta")
        if delta is None:
            return
        content = delta.get("content")
        if isinstance(content, str):
            self.text.append(content)
        elif isinstance(content, list):
            self.text += [p["text"] for p in content if p.get("type") == "text" and isinstance(p.get("text"), str)]
        refusal = delta.get("refusal")
        if isinstance(refusal, str):
            self.text.append(refusal)
        for call in delta.get("tool_calls") or ():
            self._tool_delta(call)

    def fragment(self, choice: int, index: int, text: str) -> bool:
        if self.choice_key is None or index not in self.forwarded:
            return False
        calls = self.tracker.by_index.get(index)
        if calls is None or len(calls) != 1:
            return False
        calls[0].arguments += text
        return True

    def _tool_delta(self, call: dict[str, Any]) -> None:
        """``processToolCallDelta``: hold deltas per index until the call's name arrives."""
        index = call.get("index")
        function = call["function"]
        if index is None or index in self.forwarded:
            self.tracker.delta(index, call.get("id"), function.get("name"), function.get("arguments"))
            return
        held = self.pending.get(index)
        if held is None:
            held = self.pending[index] = [call.get("id"), ""]
        elif held[0] is None and call.get("id") is not None:
            held[0] = call["id"]
        if function.get("arguments") is not None:
            held[1] += function["arguments"]
        if function.get("name") is not None:
            self.tracker.delta(index, held[0], function["name"], held[1])
            del self.pending[index]
            self.forwarded.add(index)

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        for index, (call_id, arguments) in self.pending.items():
            self.tracker.delta(index, call_id, UNDEFINED, arguments)
        self.pending.clear()
        emitted = self.tracker.flush()
        if self.finish_reason is None:
            raise Raised("AI_InvalidResponseDataError", "Response stream ended without a finish reason.")
        key = self.choice_key or 0
        return {key: [self._parsed(call) for call in emitted]}, {key: "".join(self.text)}

    def _parsed(self, call: _Call) -> AssembledCall:
        """``parseToolCall``: an unknown name or arguments that are not JSON make an invalid call."""
        known = self.tools is None or call.name in self.tools
        text = call.arguments
        if not text.strip():
            value, parses = ({} if known else _js_value(text)), True
        else:
            value = _js_value(text)
            parses = value is not _BAD
        if known and parses:
            return AssembledCall(call.id, call.name, json.dumps(value), parsed=True)
        shown = json.dumps(value) if value is not _BAD else text
        return AssembledCall(call.id, call.name, shown, parsed=value is not _BAD, invalid=True)


_BAD = object()


def _js_value(text: str) -> Any:
    try:
        return js_parse(text)
    except (ValueError, RecursionError):
        return _BAD


PROFILE = ClientProfile(
    id="ai-sdk", library="ai 6.0.333 + @ai-sdk/openai-compatible 2.0.92 (npm)", version="6.0.333",
    assemblers={"chat": ChatAssembler}, default=True,
    about="streamText through @ai-sdk/openai-compatible (opencode): zod-validated chunks, a call tracker by "
          "id/index/name, invalid calls for unknown names or bad JSON")
