"""langchain-openai 1.8.1 with langchain-core 1.8.3 (PyPI): ``ChatOpenAI.stream()``, the chunks summed with ``+``.

``langchain_openai/chat_models/base.py`` reads each raw chunk through the openai SDK
(``model_dump()``, so a field the server left out reads as None) and keeps only
``choices[0]``; ``_convert_delta_to_message_chunk`` turns its tool calls into
``tool_call_chunks`` (a delta without a ``function`` object raises). Summing chunks
(``langchain_core/messages/ai.py``, ``add_ai_message_chunks``; ``utils/_merge.py``,
``merge_lists``/``merge_dicts``) merges tool-call chunks *by index, unless both carry
ids that differ*: then the second is a new entry. Merging concatenates strings
(``name`` too, so a repeated name doubles) except an ``id`` equal to the one kept.
A chunk whose index is not an int is never merged. At the end each entry's
arguments go through ``parse_partial_json`` (lenient: a cut-off object is closed, and
a second object after a complete one is dropped): a dict makes a ``tool_call``
(name ``""`` if none), anything else an ``invalid_tool_call``. Arguments that are
not a string fail pydantic validation (``ValidationError``).
"""

from __future__ import annotations

import json
from typing import Any

from callscope.engine.streams.clients._partial_json import langchain_python
from callscope.engine.streams.clients.base import NOT_JSON, AssembledCall, Assembler, ClientProfile, Raised
from callscope.engine.streams.sse import SseEvent

_FIELDS = ("name", "args", "id")


def _chunk_entry(raw: Any) -> dict[str, Any]:
    """``tool_call_chunk(...)`` from one raw tool-call delta, validated as the message model validates it."""
    if not isinstance(raw, dict):
        raise TypeError(f"{type(raw).__name__} indices must be integers or slices, not str")
    function = raw.get("function")
    if not isinstance(function, dict):
        raise AttributeError(f"'{type(function).__name__}' object has no attribute 'get'")
    entry = {"name": function.get("name"), "args": function.get("arguments"), "id": raw.get("id"),
             "index": raw.get("index")}
    for key in _FIELDS:
        if entry[key] is not None and not isinstance(entry[key], str):
            raise Raised("ValidationError", f"1 validation error for AIMessageChunk: tool_call_chunks.{key} "
                                            "should be a valid string")
    index = entry["index"]
    if isinstance(index, float) and index.is_integer():
        entry["index"] = int(index)
    elif index is not None and not isinstance(index, int):
        raise Raised("ValidationError", "1 validation error for AIMessageChunk: tool_call_chunks.index "
                                        "should be a valid integer")
    return entry


def merge_dicts(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    """``merge_dicts`` for tool-call chunk entries (strings, ints, None), in place on ``left``."""
    for key, value in right.items():
        if key not in left or (value is not None and left[key] is None):
            left[key] = value
        elif value is None:
            continue
        elif type(left[key]) is not type(value):
            raise TypeError(f'additional_kwargs["{key}"] already exists in this message, but with a different type.')
        elif isinstance(value, str):
            if key == "id" and left[key] == value:
                continue
            left[key] += value
        elif left[key] == value:
            continue
        elif isinstance(value, bool):
            raise TypeError(f"Additional kwargs key {key} already exists in left dict and value has unsupported "
                            f"type {type(value)}.")
        elif isinstance(value, int):
            left[key] = value if key == "index" else left[key] + value
    return left


class ChatAssembler(Assembler):
    __slots__ = ("entries", "content", "stopped", "choice_key", "first_by_index")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        super().__init__(protocol, tools)
        self.entries: list[dict[str, Any]] = []
        self.content: list[str] = []
        self.stopped = False
        self.choice_key: int | None = None
        self.first_by_index: dict[int, dict[str, Any]] = {}  # the entry a chunk with that index merges into

    def fragment(self, choice: int, index: int, text: str) -> bool:
        entry = self.first_by_index.get(index)
        if self.stopped or self.choice_key is None or entry is None:
            return False
        args = entry["args"]
        if args is None:
            entry["args"] = text
        elif type(args) is str:
            entry["args"] = args + text
        else:
            return False
        return True

    def event(self, event: SseEvent, obj: Any) -> None:
        if self.stopped:
            return
        if event.data.startswith("[DONE]"):
            self.stopped = True
            return
        if obj is NOT_JSON:
            raise Raised("JSONDecodeError", "Expecting value: line 1 column 1 (char 0)")
        if isinstance(obj, dict) and obj.get("error"):
            raise Raised("APIError", "An error occurred during streaming")
        choices = obj.get("choices") if isinstance(obj, dict) else None
        if not choices or not isinstance(choices, list):
            return  # a chunk without choices: an empty message chunk
        choice = choices[0]
        if not isinstance(choice, dict):
            raise TypeError(f"{type(choice).__name__} indices must be integers or slices, not str")
        delta = choice.get("delta")
        if delta is None:
            return
        if not isinstance(delta, dict):
            raise AttributeError(f"'{type(delta).__name__}' object has no attribute 'get'")
        if self.choice_key is None:
            self.choice_key = choice.get("index") if isinstance(choice.get("index"), int) else 0
        text = delta.get("content") or ""
        if not isinstance(text, str):
            raise Raised("ValidationError", "1 validation error for AIMessageChunk: content should be a string")
        self.content.append(text)
        raw_calls = delta.get("tool_calls")
        if not raw_calls:
            return
        try:
            entries = [_chunk_entry(raw) for raw in raw_calls]
        except KeyError:
            return
        for entry in entries:
            self._merge(entry)

    def _merge(self, entry: dict[str, Any]) -> None:
        """``merge_lists`` of one new tool-call chunk into those summed so far."""
        index = entry["index"]
        if isinstance(index, int):
            for kept in self.entries:
                if kept["index"] == index and (kept["id"] in (None, "") or entry["id"] in (None, "")
                                               or kept["id"] == entry["id"]):
                    merge_dicts(kept, entry)
                    return
        self.entries.append(entry)
        if isinstance(index, int) and index not in self.first_by_index:
            self.first_by_index[index] = entry

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        calls, invalid = [], []
        for entry in self.entries:
            args = entry["args"]
            try:
                parsed = langchain_python(args) if args else {}
            except Exception:
                parsed = None
            if isinstance(parsed, dict):
                calls.append(AssembledCall(entry["id"], entry["name"] or "", json.dumps(parsed), parsed=True))
            else:
                invalid.append(AssembledCall(entry["id"], entry["name"], args, invalid=True))
        key = self.choice_key or 0
        return {key: calls + invalid}, {key: "".join(self.content)}


PROFILE = ClientProfile(
    id="langchain-python", library="langchain-openai 1.8.1 + langchain-core 1.8.3 (PyPI)", version="1.8.1",
    assemblers={"chat": ChatAssembler}, default=True,
    about="ChatOpenAI.stream() summed: merges by index unless ids differ, doubles repeated names, "
          "lenient JSON; invalid_tool_calls otherwise")
