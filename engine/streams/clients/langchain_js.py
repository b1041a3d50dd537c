"""@langchain/openai 1.5.8 with @langchain/core 1.4.0 (npm): ``ChatOpenAI.stream()``, chunks joined with ``concat()``.

``dist/chat_models/completions.js`` reads ``choices[0]`` of each chunk (its index is
ignored) and, for an assistant delta, makes ``tool_call_chunks`` of the raw tool calls
(``converters/completions.js``); a chunk whose content is not a string is dropped.
``concat()`` (``messages/ai.js``, ``messages/base.js``: ``_mergeLists``/``_mergeDicts``)
merges a tool-call chunk into the one with the same ``index`` (and the same id when both
have one); merging *overwrites* ``id`` and ``name`` with any non-empty value (so a name
split in two keeps only its last piece) and concatenates arguments; values of different
types throw. (The raw ``tool_calls`` are merged the same way into ``additional_kwargs``; that merge is not emulated: it
throws only where this one throws too, but for fields of the raw delta no tool-call chunk has.)
At the end (``collapseToolCallChunks``, ``messages/utils.js``) chunks are grouped by id
and index, the arguments joined and read by ``parsePartialJson``: an object with an id
makes a tool call, anything else (no id, arguments that do not read as an object) an
``invalid_tool_call``.
"""

from __future__ import annotations

import json
from typing import Any

from callscope.engine.streams.clients import _js
from callscope.engine.streams.clients._js import UNDEFINED, get, nullish, truthy
from callscope.engine.streams.clients._partial_json import langchain_js
from callscope.engine.streams.clients.base import NOT_JSON, AssembledCall, Assembler, ClientProfile, Raised
from callscope.engine.streams.sse import SseEvent

_OVERWRITTEN = ("id", "name", "output_version", "model_provider")
_IGNORED = ("index", "created", "timestamp")


def _has_index(item: Any) -> bool:
    return isinstance(item, dict) and _js.typeof(item.get("index", UNDEFINED)) in ("number", "string")


def _has_id(item: Any) -> bool:
    return isinstance(item, dict) and not nullish(item.get("id", UNDEFINED)) and item.get("id") != ""


def _merge_target(merged: list[Any], item: Any) -> int:
    """``_findMergeTarget``: the entry ``item`` merges into, or -1."""
    item_index, item_id = _has_index(item), _has_id(item)
    if not item_index and not item_id:
        return -1
    for position, left in enumerate(merged):
        left_index, left_id = _has_index(left), _has_id(left)
        if item_index and left_index:
            if not _js.strict_equal(left["index"], item["index"]):
                continue
            if left_id and item_id:
                if _js.strict_equal(left["id"], item["id"]):
                    return position
                continue
            return position
        if not item_index and not left_index and item_id and left_id and _js.strict_equal(left["id"], item["id"]):
            return position
    return -1


def merge_dicts(left: Any, right: Any) -> Any:
    """``_mergeDicts`` (a new object, as the library makes one)."""
    if nullish(left) and nullish(right):
        return UNDEFINED
    if nullish(left) or nullish(right):
        return right if nullish(left) else left
    merged = dict(left)
    for key, value in right.items():
        current = merged.get(key, UNDEFINED)
        if nullish(current):
            merged[key] = value
        elif nullish(value):
            continue
        elif _js.typeof(current) != _js.typeof(value) or isinstance(current, list) != isinstance(value, list):
            raise Raised("Error", f"field[{key}] already exists in the message chunk, but with a different type.")
        elif isinstance(current, str):
            if key == "type":
                continue
            if key in _OVERWRITTEN:
                if truthy(value):
                    merged[key] = value
            elif key not in _IGNORED:
                merged[key] = current + value
        elif _js.typeof(current) == "number":
            if key not in _IGNORED:
                merged[key] = current + value
        elif isinstance(current, dict):
            merged[key] = merge_dicts(current, value)
        elif isinstance(current, list):
            merged[key] = merge_lists(current, value)
    return merged


def merge_lists(left: Any, right: Any) -> Any:
    """``_mergeLists``."""
    if nullish(left) or nullish(right):
        return right if nullish(left) else left
    merged = list(left)
    for item in right:
        target = _merge_target(merged, item)
        if target != -1:
            merged[target] = merge_dicts(merged[target], item)
        elif isinstance(item, dict) and item.get("text", UNDEFINED) == "":
            continue
        else:
            merged.append(item)
    return merged


def collapse(chunks: list[dict[str, Any]]) -> tuple[list[AssembledCall], list[AssembledCall]]:
    """``collapseToolCallChunks``: the tool calls and the invalid ones."""
    groups: list[list[dict[str, Any]]] = []
    for chunk in chunks:
        chunk_id, chunk_index = chunk.get("id", UNDEFINED), chunk.get("index", UNDEFINED)
        found = -1
        for position, group in enumerate(groups):
            match = group[0]
            if truthy(chunk_id) and chunk_index is not UNDEFINED:
                same = (_js.strict_equal(chunk_id, match.get("id", UNDEFINED))
                        and _js.strict_equal(chunk_index, match.get("index", UNDEFINED)))
            elif truthy(chunk_id):
                same = _js.strict_equal(chunk_id, match.get("id", UNDEFINED))
            elif chunk_index is not UNDEFINED:
                same = _js.strict_equal(chunk_index, match.get("index", UNDEFINED))
            else:
                same = False
            if same:
                found = position
                break
        if found == -1:
            groups.append([chunk])
        else:
            groups[found].append(chunk)
    calls, invalid = [], []
    for group in groups:
        name = group[0].get("name", UNDEFINED)
        name = "" if nullish(name) else name
        joined = "".join(_js.string(c.get("args")) if truthy(c.get("args", UNDEFINED)) else "" for c in group)
        args_text = joined.strip() or "{}"
        call_id = next((c["id"] for c in group if truthy(c.get("id", UNDEFINED))), group[0].get("id", UNDEFINED))
        parsed = langchain_js(args_text)
        call_id = None if nullish(call_id) else call_id
        if not truthy(call_id) or not isinstance(parsed, dict):
            invalid.append(AssembledCall(call_id, name, args_text, invalid=True))
        else:
            calls.append(AssembledCall(call_id, name, json.dumps(parsed), parsed=True))
    return calls, invalid


class ChatAssembler(Assembler):
    __slots__ = ("chunks", "content", "role", "first_ai", "choice_key", "stopped", "yielded")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        super().__init__(protocol, tools)
        self.chunks: list[Any] = []  # the merged tool_call_chunks
        self.content: list[str] = []
        self.role: Any = UNDEFINED  # defaultRole: the last role a delta named
        self.first_ai: bool | None = None  # whether the first chunk was an AI message chunk (else no calls at all)
        self.choice_key: int | None = None
        self.stopped = False
        self.yielded = 0  # chunks the stream yielded: the first is kept as it is, every later one concat()ed

    def event(self, event: SseEvent, obj: Any) -> None:
        if event.data.startswith("[DONE]"):
            self.stopped = True
            return
        if self.stopped:
            return
        if obj is NOT_JSON:
            raise Raised("SyntaxError", "Unexpected token in JSON")
        if truthy(obj) and truthy(get(obj, "error")):
            raise Raised("APIError", "the stream carried an error")
        choices = get(obj, "choices")
        choice = choices[0] if isinstance(choices, list) and choices else UNDEFINED
        if not truthy(choice):
            return
        delta = get(choice, "delta")
        if not truthy(delta):
            return
        role = get(delta, "role")
        role = self.role if nullish(role) else role
        self.role = role if not nullish(get(delta, "role")) else self.role
        content = get(delta, "content")
        content = "" if nullish(content) else content
        if self.choice_key is None:
            index = get(choice, "index")
            self.choice_key = index if isinstance(index, int) and not isinstance(index, bool) else 0
        if not isinstance(content, str):
            return  # "Received non-string content from OpenAI": the chunk is skipped
        is_ai = role == "assistant"
        if self.first_ai is None:
            self.first_ai = is_ai
        self.content.append(content)
        self.yielded += 1
        raw_calls = get(delta, "tool_calls")
        if not is_ai:
            return
        if not isinstance(raw_calls, list):
            return
        entries = []
        for raw in raw_calls:
            if nullish(raw):
                raise Raised("TypeError", f"Cannot read properties of {_js.string(raw)} (reading 'function')")
            fn = get(raw, "function")
            entries.append({"name": get(fn, "name"), "args": get(fn, "arguments"), "id": get(raw, "id"),
                            "index": get(raw, "index"), "type": "tool_call_chunk"})
        self.chunks = entries if self.yielded == 1 else merge_lists(self.chunks, entries)

    def fragment(self, choice: int, index: int, text: str) -> bool:
        if self.stopped or self.yielded < 1 or not self.first_ai or self.role != "assistant":
            return False
        for entry in self.chunks:
            found = entry.get("index")
            if type(found) in (int, float) and found == index:
                args = entry.get("args", UNDEFINED)
                if nullish(args):
                    entry["args"] = text
                elif type(args) is str:
                    entry["args"] = args + text
                else:
                    return False
                self.content.append("")
                self.yielded += 1
                return True
        return False

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        key = self.choice_key or 0
        if not self.first_ai:
            return {key: []}, {key: "".join(self.content)}
        calls, invalid = collapse(self.chunks)
        return {key: calls + invalid}, {key: "".join(self.content)}


PROFILE = ClientProfile(
    id="langchain-js", library="@langchain/openai 1.5.8 + @langchain/core 1.4.0 (npm)", version="1.5.8",
    assemblers={"chat": ChatAssembler}, default=True,
    about="ChatOpenAI.stream() concatenated: overwrites id and name, invalid_tool_calls without an id")
