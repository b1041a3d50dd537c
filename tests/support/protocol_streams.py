"""Canned event streams of the OpenAI Responses and Anthropic Messages protocols, as their public descriptions show them."""

from __future__ import annotations

import json
from typing import Any

ARGUMENTS = ['{"city"', ': "Paris", ', '"days": 3}']


def event(kind: str, **data: Any) -> str:
    """One typed event: its ``event:`` line and its ``data:`` line (the type repeated in the data)."""
    return f"event: {kind}\ndata: " + json.dumps({"type": kind, **data})


def response(status: str, output: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "created_at": 1, "model": "canned", "status": status,
            "output": output or []}


def fc_item(arguments: str = "", status: str = "in_progress", name: str = "get_weather") -> dict[str, Any]:
    return {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": name, "arguments": arguments,
            "status": status}


def responses_stream(deltas: list[str] = ARGUMENTS, done: str | None = None, end: bool = True,
                     extra: list[str] = ()) -> list[str]:
    whole = "".join(deltas)
    done = whole if done is None else done
    seq = iter(range(1000))
    lines = [event("response.created", sequence_number=next(seq), response=response("in_progress")),
             event("response.output_item.added", sequence_number=next(seq), output_index=0, item=fc_item())]
    lines += [event("response.function_call_arguments.delta", sequence_number=next(seq), item_id="fc_1",
                    output_index=0, delta=d) for d in deltas]
    lines += list(extra)
    lines += [event("response.function_call_arguments.done", sequence_number=next(seq), item_id="fc_1",
                    output_index=0, arguments=done),
              event("response.output_item.done", sequence_number=next(seq), output_index=0,
                    item=fc_item(done, "completed"))]
    if end:
        lines.append(event("response.completed", sequence_number=next(seq),
                           response=response("completed", [fc_item(done, "completed")])))
    return lines


def anthropic_stream(pieces: list[str] = ARGUMENTS, stop_reason: str = "tool_use", stop: bool = True,
                     extra: list[str] = ()) -> list[str]:
    lines = [
        event("message_start", message={"id": "msg_1", "type": "message", "role": "assistant", "model": "canned",
                                        "content": [], "stop_reason": None, "usage": {"input_tokens": 3}}),
        event("content_block_start", index=0, content_block={"type": "text", "text": ""}),
        event("content_block_delta", index=0, delta={"type": "text_delta", "text": "Checking."}),
        event("content_block_stop", index=0),
        event("content_block_start", index=1,
              content_block={"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}),
        event("ping"),
    ]
    lines += [event("content_block_delta", index=1, delta={"type": "input_json_delta", "partial_json": p})
              for p in pieces]
    lines.append(event("content_block_stop", index=1))
    lines += list(extra)
    lines.append(event("message_delta", delta={"stop_reason": stop_reason, "stop_sequence": None},
                       usage={"output_tokens": 9}))
    if stop:
        lines.append(event("message_stop"))
    return lines
