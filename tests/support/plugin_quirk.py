"""A quirk added outside the shipped library, for the tests: ``calls_interleaved``.

It follows docs/extending.md's quirk recipe with a folder of its own instead of
``fixtures/quirks/``: the stream (two calls whose headers come first and whose
argument fragments then alternate, as a server that batches parallel calls
sends them) written as a capture trace with the header a quirk carries (what it
is, who sends it, the outcomes the real libraries gave), which ``callscope
serve --quirks FOLDER`` serves and ``callscope clients`` reads like a shipped one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from callscope.engine.recordings.trace import Trace, TraceEnd, TraceHeader, TraceLine, write_trace

QUIRK_ID = "calls_interleaved"
WHAT = ("Two calls whose headers both come first; their argument fragments then alternate between "
        "index 0 and index 1.")
TOOLS = [{"type": "function", "function": {"name": name, "parameters": {
    "type": "object", "properties": {key: {"type": "string"}}, "required": [key]}}}
    for name, key in (("get_weather", "city"), ("get_time", "zone"))]
MESSAGES = [{"role": "user", "content": "Weather in Paris, and the time in Tokyo?"}]
CALLS = [("call_a", "get_weather", ['{"city": ', '"Paris"}']), ("call_b", "get_time", ['{"zone": ', '"Asia/Tokyo"}'])]
#: What every real library ends with (measured with the differential harness, as make_quirks.py --record does).
OUTCOME = {"calls": [{"id": cid, "name": name, "arguments": "".join(parts)} for cid, name, parts in CALLS]}
CHAT_CLIENTS = ("openai-python", "openai-node", "ai-sdk", "langchain-python", "langchain-js")
#: An id a library makes up is stored as ``<generated>``; these libraries keep the ids sent.
OUTCOMES = {profile: OUTCOME for profile in CHAT_CLIENTS}


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> str:
    return "data: " + json.dumps({"id": "chatcmpl-quirk", "object": "chat.completion.chunk", "created": 1748736000,
                                  "model": "quirk", "choices": [{"index": 0, "delta": delta or {},
                                                                 "finish_reason": finish}]})


def events() -> list[str]:
    headers = [_chunk({"tool_calls": [{"index": i, "id": cid, "type": "function",
                                       "function": {"name": name, "arguments": ""}}]})
               for i, (cid, name, _) in enumerate(CALLS)]
    fragments = [_chunk({"tool_calls": [{"index": i, "function": {"arguments": CALLS[i][2][k]}}]})
                 for k in range(2) for i in range(2)]
    return [_chunk({"role": "assistant", "content": None}), *headers, *fragments, _chunk(finish="tool_calls"),
            "data: [DONE]"]


def trace() -> Trace:
    lines = [TraceLine(20.0 * (n + 1), part) for n, event in enumerate(events()) for part in (event, "")]
    header = TraceHeader(
        source="capture", unit="chunk", tools=TOOLS, messages=MESSAGES, description=WHAT,
        expect={"finish_reason": "tool_calls", "violations": [],
                "calls": [{"name": name, "reconstructs": True} for _, name, _ in CALLS]},
        extra={"protocol": "chat", "sse": "events", "request": {"model": QUIRK_ID, "stream": True},
               "quirk": {"id": QUIRK_ID, "protocol": "chat", "sent_by": "servers that batch parallel calls",
                         "sources": []},
               "outcomes": OUTCOMES, "measured_with": {}})
    return Trace(header, [], lines, TraceEnd("stop", lines[-1].ms + 20.0))


def write(folder: Path) -> Path:
    """The quirk as a file of a quirks folder."""
    path = folder / f"{QUIRK_ID}.jsonl"
    write_trace(path, trace())
    return path
