"""What goes out on the wire: compact chunk records, violations, and OpenAI chunk JSON.

A policy's output is kept as :class:`WireChunk` records (a few fields each) and
turned into ``chat.completion.chunk`` dicts only when someone asks (report
``--chunks``, the GUI's raw-JSON pane, SSE export), so a 100,000-step analysis
does not hold 100,000 nested dicts.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from callscope.engine.core.rules import RULES

# Kinds of chunk a policy emits.
ROLE = "role"
CONTENT = "content"
REASONING = "reasoning"
HEADER = "header"  # first delta of a tool-call index: id, type, name (+ arguments so far)
ARGUMENTS = "arguments"  # a later argument fragment of a tool-call index
FINISH = "finish"
CHUNK_KINDS = (ROLE, CONTENT, REASONING, HEADER, ARGUMENTS, FINISH)


@dataclass(slots=True)
class WireChunk:
    """One emitted chunk: when (step, ms), what kind, and its payload."""

    step: int
    ms: float | None
    kind: str
    text: str = ""
    index: int | None = None
    call_id: str | None = None
    name: str | None = None
    finish_reason: str | None = None

    @property
    def is_tool_call(self) -> bool:
        return self.kind in (HEADER, ARGUMENTS)

    def delta(self) -> dict[str, Any]:
        """The ``choices[0].delta`` object of this chunk."""
        if self.kind == ROLE:
            return {"role": "assistant", "content": None}
        if self.kind == CONTENT:
            return {"content": self.text}
        if self.kind == REASONING:
            return {"reasoning_content": self.text}
        if self.kind == HEADER:
            call: dict[str, Any] = {"index": self.index}
            if self.call_id is not None:
                call["id"] = self.call_id
            call["type"] = "function"
            call["function"] = {"name": self.name if self.name is not None else "", "arguments": self.text}
            return {"tool_calls": [call]}
        if self.kind == ARGUMENTS:  # a captured server may re-send id and name on later fragments: shown as sent
            call = {"index": self.index}
            if self.call_id is not None:
                call["id"] = self.call_id
            function = {"name": self.name} if self.name is not None else {}
            function["arguments"] = self.text
            call["function"] = function
            return {"tool_calls": [call]}
        return {}


@dataclass(frozen=True, slots=True)
class StreamIdentity:
    """The fields every chunk of one stream shares."""

    completion_id: str
    created: int
    model: str

    @staticmethod
    def for_run(name: str, model: str = "callscope", created: int = 0) -> "StreamIdentity":
        """Deterministic identity, so replaying the same source gives the same chunks."""
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:24]
        return StreamIdentity(f"chatcmpl-{digest}", created, model)


def chunk_json(chunk: WireChunk, identity: StreamIdentity) -> dict[str, Any]:
    """The OpenAI ``chat.completion.chunk`` object for ``chunk``."""
    return {
        "id": identity.completion_id,
        "object": "chat.completion.chunk",
        "created": identity.created,
        "model": identity.model,
        "choices": [
            {
                "index": 0,
                "delta": chunk.delta(),
                "finish_reason": chunk.finish_reason if chunk.kind == FINISH else None,
            }
        ],
    }


def sse_line(chunk: WireChunk, identity: StreamIdentity) -> str:
    """``data: {...}`` as a server writes it (compact JSON, non-ASCII kept)."""
    return "data: " + json.dumps(chunk_json(chunk, identity), ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Violation:
    """A broken rule: its stable id from :data:`~callscope.engine.core.rules.RULES`, where, and one line of why."""

    rule: str
    step: int | None
    detail: str
    call_index: int | None = None

    def __post_init__(self) -> None:
        if self.rule not in RULES:  # a rule spelled anywhere but the catalogue is a bug, found at once
            raise ValueError(f"unknown violation rule {self.rule!r}: add it to engine/core/rules.py")

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "step": self.step, "call_index": self.call_index, "detail": self.detail}


class IdMinter:
    """Mints tool-call ids that are stable for a given stream (deterministic replays)."""

    def __init__(self, seed: str) -> None:
        self._seed = seed

    def mint(self, index: int) -> str:
        digest = hashlib.sha256(f"{self._seed}/{index}".encode("utf-8")).hexdigest()[:24]
        return f"call_{digest}"


def first_difference(a: str, b: str) -> int:
    """Index of the first character where ``a`` and ``b`` differ (len of the shorter if one is a prefix)."""
    limit = min(len(a), len(b))
    for i in range(limit):
        if a[i] != b[i]:
            return i
    return limit


def describe_difference(sent: str, now: str, width: int = 24) -> str:
    """``'…{"a": Tr' vs '…{"a": tr'``: a short excerpt around the first difference."""
    at = first_difference(sent, now)
    start = max(0, at - width // 2)
    lead = "…" if start else ""
    return f"at char {at}: sent {lead}{sent[start:at + width // 2]!r} vs now {lead}{now[start:at + width // 2]!r}"
