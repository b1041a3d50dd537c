"""The three streaming protocols callscope reads, by id, and how to tell which one a stream speaks.

``chat`` (``/v1/chat/completions``), ``responses`` (OpenAI Responses API,
``/v1/responses``) and ``anthropic`` (Anthropic Messages, ``/v1/messages``).
A request's URL path names its protocol; a recorded stream names it in its
first events (each protocol's events look like no other's). A stream that
matches none is of an unknown protocol: reported as such, never as a
truncated chat stream.
"""

from __future__ import annotations

from typing import Any

from callscope.engine.core.json_text import loads
from callscope.engine.streams.anthropic import AnthropicReader
from callscope.engine.streams.chat import ChatReader
from callscope.engine.streams.reader import ProtocolReader
from callscope.engine.streams.responses import ResponsesReader
from callscope.engine.streams.sse import SseEvent

READERS: dict[str, type[ProtocolReader]] = {r.protocol: r for r in (ChatReader, ResponsesReader, AnthropicReader)}
PROTOCOLS: tuple[str, ...] = tuple(READERS)
DEFAULT_PROTOCOL = ChatReader.protocol


def expected_choices(body: dict[str, Any]) -> int:
    """How many choices a request asked for (``n``; 1 when absent or not a sensible number)."""
    n = body.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 128 else 1


def endpoint_path(protocol: str) -> str:
    return READERS[protocol].path


def protocol_for_path(path: str) -> str | None:
    """The protocol whose endpoint ``path`` ends in (``/x/v1/messages`` -> ``anthropic``), else None."""
    path = path.rstrip("/")
    for protocol, reader in READERS.items():
        tail = reader.path.removeprefix("/v1")  # /chat/completions, /responses, /messages
        if path.endswith(tail):
            return protocol
    return None


def detect(event: SseEvent, hint: str | None = None) -> str | None:
    """The protocol one event belongs to, or None if it looks like none of them.

    ``hint`` (the request's protocol) decides only what any protocol could send (an error object).
    """
    if event.data.strip() == "[DONE]":
        return ChatReader.protocol
    try:
        obj: Any = loads(event.data)
    except ValueError:
        return hint
    kind = obj.get("type") if isinstance(obj, dict) else None
    names = {n for n in (event.event, kind) if isinstance(n, str) and n}
    if any(n.startswith("response.") for n in names):
        return ResponsesReader.protocol
    if names & AnthropicReader.EVENTS:
        return AnthropicReader.protocol
    if not isinstance(obj, dict):
        return hint
    if "choices" in obj or str(obj.get("object", "")).startswith("chat.completion"):
        return ChatReader.protocol
    if "error" in obj or "error" in names:
        return hint or DEFAULT_PROTOCOL
    return None
