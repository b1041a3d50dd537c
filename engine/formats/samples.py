"""Rendering tool calls in each wire format: the inverse of the parsers.

Used to build benchmark inputs, generated fixtures and tests: given content and
calls, produce the text a model following that format would generate.
"""

from __future__ import annotations

import json
from typing import Any

Call = tuple[str, dict[str, Any]]


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def render(format_id: str, calls: list[Call], content: str = "", reasoning: str = "") -> str:
    """The generation of a model that writes ``reasoning``, ``content`` and then ``calls`` in ``format_id``."""
    render_fn = _RENDERERS.get(format_id)
    if render_fn is None:
        raise ValueError(f"no sample renderer for format {format_id!r}")
    return render_fn(calls, content, reasoning)


def _think(reasoning: str) -> str:
    return f"<think>{reasoning}</think>" if reasoning else ""


def _hermes(calls: list[Call], content: str, reasoning: str) -> str:
    blocks = "".join(
        f"<tool_call>\n{_dumps({'name': name, 'arguments': args})}\n</tool_call>" for name, args in calls
    )
    return _think(reasoning) + content + ("\n" if content and calls else "") + blocks


def _qwen3_coder(calls: list[Call], content: str, reasoning: str) -> str:
    out = []
    for name, args in calls:
        params = "".join(
            f"<parameter={key}>\n{value if isinstance(value, str) else _dumps(value)}\n</parameter>\n"
            for key, value in args.items()
        )
        out.append(f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>")
    return _think(reasoning) + content + ("\n" if content and calls else "") + "\n".join(out)


def _llama3_json(calls: list[Call], content: str, reasoning: str) -> str:
    if not calls:
        return content
    return "<|python_tag|>" + "; ".join(_dumps({"name": name, "parameters": args}) for name, args in calls)


def _mistral(calls: list[Call], content: str, reasoning: str) -> str:
    if not calls:
        return content
    return content + "[TOOL_CALLS]" + _dumps([{"name": name, "arguments": args} for name, args in calls])


def _generic(calls: list[Call], content: str, reasoning: str) -> str:
    if not calls:
        return _dumps({"response": content})
    if len(calls) == 1:
        return _dumps({"tool_call": {"name": calls[0][0], "arguments": calls[0][1]}})
    return _dumps({"tool_calls": [{"name": name, "arguments": args} for name, args in calls]})


def _emulated(calls: list[Call], content: str, reasoning: str) -> str:
    lines = [content] if content else []
    lines += [f"TOOL_CALL {_dumps({'name': name, 'arguments': args})}" for name, args in calls]
    return "\n".join(lines)


def _deepseek_v31(calls: list[Call], content: str, reasoning: str) -> str:
    head = f"{reasoning}</think>" if reasoning else ""
    if not calls:
        return head + content
    body = "".join(
        f"<｜tool▁call▁begin｜>{name}<｜tool▁sep｜>{_dumps(args)}<｜tool▁call▁end｜>" for name, args in calls
    )
    return head + content + "<｜tool▁calls▁begin｜>" + body + "<｜tool▁calls▁end｜>"


def _gpt_oss(calls: list[Call], content: str, reasoning: str) -> str:
    out = f"<|channel|>analysis<|message|>{reasoning}<|end|><|start|>assistant" if reasoning else ""
    if content and not calls:
        return out + f"<|channel|>final<|message|>{content}<|return|>"
    if content:
        out += f"<|channel|>commentary<|message|>{content}<|end|><|start|>assistant"
    for i, (name, args) in enumerate(calls):
        if i:
            out += "<|start|>assistant"
        out += f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>{_dumps(args)}<|call|>"
    return out


_RENDERERS = {
    "hermes": _hermes,
    "qwen3_coder": _qwen3_coder,
    "llama3_json": _llama3_json,
    "mistral": _mistral,
    "generic": _generic,
    "emulated": _emulated,
    "deepseek_v31": _deepseek_v31,
    "gpt_oss": _gpt_oss,
}


def big_arguments(size: int) -> dict[str, Any]:
    """Arguments whose JSON is about ``size`` characters: a file write, the classic long tool call."""
    line = "def handler(event):  # process one event and return its status\n"
    body = (line * (size // len(line) + 1))[: max(0, size - 40)]
    return {"path": "/srv/app/handler.py", "content": body}
