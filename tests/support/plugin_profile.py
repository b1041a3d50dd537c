"""A client profile defined outside callscope, for the tests: ``first-wins``, a client that keeps what came first.

It follows docs/extending.md's profile recipe outside the code base: one
:class:`~callscope.engine.streams.clients.base.ClientProfile` and its assembler,
made known with ``register_profile(PROFILE)``. The client it emulates is a simple
hand-written one: per call index it keeps the first id, type and name it sees
(never concatenates, never overwrites) and appends argument fragments; it reads
Chat Completions only. So it assembles a stream that repeats the name on every
chunk right (where ``naive`` doubles it) and keeps only the first piece of a
fragmented name (where the stream meant the whole).
"""

from __future__ import annotations

from typing import Any

from callscope.engine.streams.clients.base import NOT_JSON, AssembledCall, Assembler, ClientProfile, Raised
from callscope.engine.streams.sse import SseEvent

PROFILE_ID = "first-wins"


class FirstWinsAssembler(Assembler):
    __slots__ = ("calls", "content")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        super().__init__(protocol, tools)
        self.calls: dict[int, dict[int, dict[str, str]]] = {}
        self.content: dict[int, str] = {}

    def event(self, event: SseEvent, obj: Any) -> None:
        if event.data.startswith("[DONE]"):
            return
        if obj is NOT_JSON:
            raise Raised("JSONDecodeError", "Expecting value")
        for choice in obj.get("choices") or []:
            delta = choice.get("delta") or {}
            number = choice.get("index", 0)
            if isinstance(delta.get("content"), str):
                self.content[number] = self.content.get(number, "") + delta["content"]
            for call in delta.get("tool_calls") or []:
                mine = self.calls.setdefault(number, {}).setdefault(call.get("index", 0), {})
                function = call.get("function") or {}
                for key, value in (("id", call.get("id")), ("name", function.get("name"))):
                    if value and key not in mine:
                        mine[key] = value
                mine["arguments"] = mine.get("arguments", "") + (function.get("arguments") or "")

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        calls = {number: [AssembledCall(c.get("id", ""), c.get("name", ""), c.get("arguments", ""))
                          for _, c in sorted(by_index.items())]
                 for number, by_index in self.calls.items()}
        return calls, self.content


PROFILE = ClientProfile(id=PROFILE_ID, library="a hand-written first-wins client", version="-",
                        assemblers={"chat": FirstWinsAssembler}, default=False,
                        about="the first id and name per index, arguments appended")
