"""A streaming protocol as one declaration: :class:`ProtocolSpec`, everything callscope needs to speak it.

A protocol module (:mod:`.chat`, :mod:`.responses`, :mod:`.anthropic`) holds
its reader (a :class:`~callscope.engine.streams.reader.ProtocolReader`) and one
``SPEC = ProtocolSpec(...)``: its id and endpoint path, the events that end a
response, the auth headers and the API-key variable, the request body built
from a chat-shaped one (and whether a body has input), how its first events
are recognised, and the naive client's reader. Capture, the proxy, ``serve``,
the client profiles and both capture front ends loop over the registry
(:mod:`callscope.engine.streams.protocols`); nothing else names a protocol.
A protocol defined outside callscope (a test, a plug-in) is made known with
``register_protocol(SPEC)``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from callscope.engine.core.json_text import loads

if TYPE_CHECKING:
    from callscope.engine.streams.sse import SseEvent

#: What the naive client accumulates: per choice, per call key, ``{"id", "name", "arguments"}``; and content.
NaiveCalls = dict[int, dict[Any, dict[str, str]]]
NaiveReader = Callable[[dict[str, Any], NaiveCalls, dict[int, str]], None]
#: The decoded data of an event that is not JSON (a protocol's recogniser may still know it: ``[DONE]``).
NOT_JSON: Any = object()

_ID = re.compile(r"[a-z][a-z0-9_]*")


def bearer(key: str) -> dict[str, str]:
    """The usual key header, ``Authorization: Bearer <key>`` (nothing when no key is set)."""
    return {"Authorization": f"Bearer {key}"} if key else {}


def has_messages(body: dict[str, Any]) -> bool:
    """The usual input check: a non-empty ``messages`` array."""
    return bool(body.get("messages"))


def unchanged(body: dict[str, Any]) -> dict[str, Any]:
    return body


@dataclass(frozen=True, slots=True)
class ProtocolSpec:
    """One streaming protocol. Field by field, what each consumer reads:

    - ``id``, ``label``, ``path``: ``--protocol`` choices, messages, the endpoint
      ``capture`` appends and the path ``proxy``/``serve`` recognise;
    - ``reader``: the :class:`~callscope.engine.streams.reader.ProtocolReader`
      that judges its events;
    - ``end_events``: the events after which a response is complete (a ``data:``
      of exactly that text, as ``[DONE]``, or a JSON object of that ``type``);
      ``end_text`` says it in a message ("the server closed the stream before ...");
    - ``api_key_env`` and ``auth``: the key's default variable, and the headers
      that carry a key (``auth("")`` gives the headers sent without one);
    - ``body``: a chat-shaped request body (tools as the OpenAI array) in this
      protocol's shape; ``has_input``: whether a body has something to answer;
    - ``recognise(event, data)``: whether an event of an unnamed stream is this
      protocol's (``data`` is the decoded JSON, or :data:`NOT_JSON`);
    - ``naive``: the hand-written ``+=`` client's reader of one event's JSON;
    - ``writer``: the :class:`~callscope.engine.streams.writer.ProtocolWriter` that
      says a response in its events (and its non-streamed body): ``callscope serve``;
    - ``chat_request``: one of its request bodies in the chat shape (messages,
      OpenAI tools, ``tool_choice``, ``max_tokens``): what ``serve --model`` renders;
    - ``unit``: what one of its events is called in messages (``chunk``, ``event``).
    """

    id: str
    label: str
    path: str
    reader: type[Any]
    end_events: tuple[str, ...]
    end_text: str
    recognise: Callable[[SseEvent, Any], bool]
    naive: NaiveReader
    writer: type[Any]
    api_key_env: str = "OPENAI_API_KEY"
    auth: Callable[[str], dict[str, str]] = bearer
    body: Callable[[dict[str, Any]], dict[str, Any]] = unchanged
    has_input: Callable[[dict[str, Any]], bool] = has_messages
    chat_request: Callable[[dict[str, Any]], dict[str, Any]] = unchanged
    unit: str = "event"

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise ValueError(f"protocol id {self.id!r}: lowercase letters, digits and _, starting with a letter")
        if not self.path.startswith("/"):
            raise ValueError(f"protocol {self.id}: its path must start with /, got {self.path!r}")
        if not self.end_events:
            raise ValueError(f"protocol {self.id}: name at least one end event")

    @property
    def tail(self) -> str:
        """The endpoint path without its ``/v1`` (``/chat/completions``): what a URL's path ends in."""
        return self.path.removeprefix("/v1")

    def is_end_line(self, line: str) -> bool:
        """Whether one received line is this protocol's end event (its ``data:`` line).

        Cheap for every line that is not: only a line holding an end event's name is decoded.
        """
        if not line.startswith("data:"):
            return False
        data = line[5:].strip()
        if data in self.end_events:
            return True
        if not any(end in data for end in self.end_events):
            return False
        try:
            obj = loads(data)
        except ValueError:
            return False
        return isinstance(obj, dict) and obj.get("type") in self.end_events


# ---------------------------------------------------------------- shapes the specs share (request bodies)


def function_of(tool: Any) -> dict[str, Any] | None:
    """The function object of an OpenAI tool (the normaliser wraps Responses and Anthropic tools in one too)."""
    function = tool.get("function") if isinstance(tool, dict) else None
    return function if isinstance(function, dict) else None


def schema_of(function: dict[str, Any]) -> Any:
    """A function's parameter schema, whichever key it came under; an empty object schema when none."""
    for key in ("parameters", "input_schema"):
        if isinstance(function.get(key), dict):
            return function[key]
    return {"type": "object", "properties": {}}


def described(function: dict[str, Any]) -> dict[str, Any]:
    return {"description": function["description"]} if "description" in function else {}
