"""``naive``: ``+=`` on every string field of every delta, a dict per index: a quick hand-written client.

The loop behind concatenated names and ids (llama.cpp #12379). Each protocol declares its own naive reader
(:class:`~callscope.engine.streams.spec.ProtocolSpec` ``naive``), so this profile reads every registered
protocol, one a plug-in adds included. Not a library, so it names no version; a default all the same, as the
shape of what many applications do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from callscope.engine.streams.clients.base import (
    ANY_PROTOCOL,
    NOT_JSON,
    AssembledCall,
    Assembler,
    ClientProfile,
    Raised,
)
from callscope.engine.streams.sse import SseEvent


class NaiveAssembler(Assembler):
    __slots__ = ("calls", "content", "stopped", "read")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        from callscope.engine.streams.protocols import get_protocol

        super().__init__(protocol, tools)
        self.calls: dict[int, dict[Any, dict[str, str]]] = {}
        self.content: dict[int, str] = {}
        self.stopped = False
        self.read: Callable[[dict[str, Any], Any, dict[int, str]], None] = get_protocol(protocol).naive

    def event(self, event: SseEvent, obj: Any) -> None:
        if self.stopped:
            return
        if event.data.startswith("[DONE]"):
            self.stopped = True
            return
        if obj is NOT_JSON:
            raise Raised("JSONDecodeError", "Expecting value")
        self.read(obj, self.calls, self.content)

    def fragment(self, choice: int, index: int, text: str) -> bool:
        call = self.calls.get(choice, {}).get(index)
        if self.stopped or call is None:
            return False
        call["arguments"] += text
        return True

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        calls = {choice: [AssembledCall(c["id"], c["name"], c["arguments"]) for c in by_key.values()]
                 for choice, by_key in self.calls.items()}
        return calls, self.content


PROFILE = ClientProfile(
    id="naive", library="a hand-written client", version="-", assemblers={ANY_PROTOCOL: NaiveAssembler},
    default=True, about="+= on every string field of every delta, a dict per index")
