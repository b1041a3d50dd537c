"""The request's ``messages``: the demo conversations, and loading/validating a messages file.

A messages file is an OpenAI ``messages`` array, ``{"messages": [...]}``, or a
whole chat-completion request body (its ``tools`` are then used when no
``--tools`` file is given). Errors name the JSON path, like the tools loader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from callscope.engine.core.errors import MessagesError
from callscope.engine.core.files import parse_json, read_document
from callscope.engine.core.tools import ToolsError, validate_tools
from callscope.engine.decode.demos import get_demo

ROLES = ("system", "developer", "user", "assistant", "tool", "ipython")

#: The default demo's request (:mod:`~callscope.engine.decode.demos`): `callscope run` with no arguments asks for a long file.
DEFAULT_PROMPT = get_demo().prompt


def default_messages(prompt: str | None = None, demo: str | None = None) -> list[dict[str, Any]]:
    """The conversation of demo ``demo`` (the default demo for None), ``prompt`` replacing its user message."""
    return get_demo(demo).messages(prompt)


def validate_messages(doc: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """``(messages, tools)`` from a messages document; ``tools`` only when it is a request body that has them."""
    tools = None
    root = "$"
    if isinstance(doc, dict):
        if "messages" not in doc:
            raise MessagesError('$: expected an array of messages or an object with "messages"')
        if "tools" in doc and doc["tools"] is not None:
            try:
                tools = validate_tools(doc["tools"])
            except ToolsError as exc:
                raise MessagesError(f"$.tools{str(exc)[1:]}" if str(exc).startswith("$") else str(exc)) from None
        doc = doc["messages"]
        root = "$.messages"
    if not isinstance(doc, list):
        raise MessagesError(f"{root}: expected an array of messages, got {type(doc).__name__}")
    if not doc:
        raise MessagesError(f"{root}: expected at least one message")
    for i, message in enumerate(doc):
        _check_message(message, f"{root}[{i}]")
    return doc, tools


def _check_message(message: Any, here: str) -> None:
    if not isinstance(message, dict):
        raise MessagesError(f"{here}: expected a message object, got {type(message).__name__}")
    role = message.get("role")
    if role not in ROLES:
        raise MessagesError(f"{here}.role: expected one of {', '.join(ROLES)}, got {role!r}")
    content = message.get("content")
    if isinstance(content, list):
        for j, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise MessagesError(f'{here}.content[{j}]: expected a text part {{"type": "text", "text": ...}}')
    elif content is not None and not isinstance(content, str):
        raise MessagesError(f"{here}.content: expected a string, an array of text parts or null")
    calls = message.get("tool_calls")
    if calls is None:
        if content is None and role != "assistant":
            raise MessagesError(f"{here}.content: a {role} message needs content")
        return
    if role != "assistant":
        raise MessagesError(f"{here}.tool_calls: only assistant messages carry tool calls")
    if not isinstance(calls, list):
        raise MessagesError(f"{here}.tool_calls: expected an array")
    for j, call in enumerate(calls):
        at = f"{here}.tool_calls[{j}]"
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict):
            raise MessagesError(f"{at}.function: expected an object with name and arguments")
        if not isinstance(fn.get("name"), str) or not fn["name"]:
            raise MessagesError(f"{at}.function.name: expected a non-empty string")
        if not isinstance(fn.get("arguments", "{}"), (str, dict)):
            raise MessagesError(f"{at}.function.arguments: expected a JSON string or an object")


def parse_messages(text: str, origin: str = "messages") -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    doc = parse_json(text, origin, MessagesError)
    try:
        return validate_messages(doc)
    except MessagesError as exc:
        raise MessagesError(f"{origin}: {exc}") from None


def load_messages(path: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    return parse_messages(read_document(path, MessagesError, "a JSON messages file"), str(path))
