"""``naive``: ``+=`` on every string field of every delta, a dict per index: a quick hand-written client.

The loop behind concatenated names and ids (llama.cpp #12379): it reads ``choices[i].delta.tool_calls[j]``
by ``index`` (a missing one raises ``KeyError``) and appends ``id``, ``name`` and ``arguments`` as they come.
Not a library, so it names no version; a default all the same, as the shape of what many applications do.
"""

from __future__ import annotations

from typing import Any

from callscope.engine.streams.clients.spec import NOT_JSON, AssembledCall, Assembler, ClientProfile, Raised
from callscope.engine.streams.sse import SseEvent


class _Naive(Assembler):
    __slots__ = ("calls", "content", "stopped")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        super().__init__(protocol, tools)
        self.calls: dict[int, dict[Any, dict[str, str]]] = {}
        self.content: dict[int, str] = {}
        self.stopped = False

    def event(self, event: SseEvent, obj: Any) -> None:
        if self.stopped:
            return
        if event.data.startswith("[DONE]"):
            self.stopped = True
            return
        if obj is NOT_JSON:
            raise Raised("JSONDecodeError", "Expecting value")
        self.read(obj)

    def read(self, obj: Any) -> None:
        raise NotImplementedError

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        calls = {choice: [AssembledCall(c["id"], c["name"], c["arguments"]) for c in by_key.values()]
                 for choice, by_key in self.calls.items()}
        return calls, self.content


class ChatAssembler(_Naive):
    __slots__ = ()

    def fragment(self, choice: int, index: int, text: str) -> bool:
        call = self.calls.get(choice, {}).get(index)
        if self.stopped or call is None:
            return False
        call["arguments"] += text
        return True

    def read(self, obj: Any) -> None:
        for choice in obj.get("choices") or []:
            index = choice["index"]
            delta = choice.get("delta") or {}
            self.content[index] = self.content.get(index, "") + (delta.get("content") or "")
            mine = self.calls.setdefault(index, {})
            for tool in delta.get("tool_calls") or []:
                call = mine.setdefault(tool["index"], {"id": "", "name": "", "arguments": ""})
                call["id"] += tool.get("id") or ""
                function = tool.get("function") or {}
                call["name"] += function.get("name") or ""
                call["arguments"] += function.get("arguments") or ""


class ResponsesAssembler(_Naive):
    __slots__ = ()

    def read(self, obj: Any) -> None:
        mine = self.calls.setdefault(0, {})
        kind = obj.get("type")
        if kind == "response.output_item.added" and obj["item"].get("type") == "function_call":
            item = obj["item"]
            mine[item["id"]] = {"id": item.get("call_id") or "", "name": item.get("name") or "",
                                "arguments": item.get("arguments") or ""}
        elif kind == "response.function_call_arguments.delta":
            mine[obj["item_id"]]["arguments"] += obj["delta"]
        elif kind == "response.output_text.delta":
            self.content[0] = self.content.get(0, "") + obj["delta"]


class MessagesAssembler(_Naive):
    __slots__ = ()

    def read(self, obj: Any) -> None:
        mine = self.calls.setdefault(0, {})
        kind = obj.get("type")
        if kind == "content_block_start" and obj["content_block"].get("type") == "tool_use":
            block = obj["content_block"]
            mine[obj["index"]] = {"id": block.get("id") or "", "name": block.get("name") or "", "arguments": ""}
        elif kind == "content_block_delta":
            delta = obj["delta"]
            if delta.get("type") == "input_json_delta":
                mine[obj["index"]]["arguments"] += delta["partial_json"]
            elif delta.get("type") == "text_delta":
                self.content[0] = self.content.get(0, "") + delta["text"]
        elif kind == "content_block_stop" and obj["index"] in mine and not mine[obj["index"]]["arguments"]:
            mine[obj["index"]]["arguments"] = "{}"


PROFILE = ClientProfile(
    id="naive", library="a hand-written client", version="-",
    assemblers={"chat": ChatAssembler, "responses": ResponsesAssembler, "anthropic": MessagesAssembler},
    default=True, about="+= on every string field of every delta, a dict per index")
