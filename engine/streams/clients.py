"""Client profiles: what real clients assemble from the same events, run for real, judged against the stream.

A stream can be "fine" by callscope's lenient reading and still break the
clients people use. So every capture is also read by client profiles, each
the way one client really reads it, and each call's verdict says what that
client ended with (id, name, arguments, or the exception it raised):

- ``openai-python``: the official ``openai`` SDK itself. The recorded events
  are served to it over an in-memory transport and read by its public
  streaming helpers (``client.chat.completions.stream(...)``,
  ``client.responses.stream(...)``), so its own SSE decoder, error handling,
  chunk models and accumulator (``ChatCompletionStreamState``,
  ``ResponseStreamState``) run exactly as in an application;
- ``naive``: ``+=`` on every string field of every delta, per index: the
  hand-written loop behind concatenated names and ids (llama.cpp #12379);
- ``anthropic-python``: the official ``anthropic`` SDK's ``messages.stream``
  helper, when that SDK is installed (not a default: an optional dependency).

A profile gets the events a client would get (an event the stream left
unterminated is not dispatched by any client, so it is not served) and
returns one :class:`ClientRun`. Profiles import their SDK only when they run.
"""

from __future__ import annotations

import importlib.util
import json
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from callscope.engine.streams.protocols import get_protocol
from callscope.engine.streams.sse import SseEvent

OPENAI_PYTHON = "openai-python"
NAIVE = "naive"
ANTHROPIC_PYTHON = "anthropic-python"
_MODEL = "callscope-replay"
_BASE = "http://callscope.invalid"


@dataclass(slots=True)
class AssembledCall:
    id: str | None
    name: str | None
    arguments: str | None
    parsed: bool = False  # the client keeps parsed arguments (a JSON value), so compare as JSON, not bytes
    not_string: bool = False  # the client ended with arguments that are no string (an app's json.loads fails)


@dataclass(slots=True)
class ClientRun:
    """What one profile ended with: per choice, its calls and content; or the exception that stopped it."""

    profile: str
    calls: dict[int, list[AssembledCall]] = field(default_factory=dict)
    content: dict[int, str] = field(default_factory=dict)
    error: str | None = None
    error_step: int | None = None  # the step whose event was being read when it raised
    unavailable: str | None = None  # why the profile could not run (its SDK is not installed)


Events = list[tuple[int, SseEvent]]


@dataclass(frozen=True, slots=True)
class ClientProfile:
    id: str
    protocols: tuple[str, ...] | None  # the protocols it reads; None: every registered one
    default: bool
    run: Callable[[str, Events], ClientRun]
    about: str

    def reads(self, protocol: str) -> bool:
        return self.protocols is None or protocol in self.protocols


def _describe(exc: BaseException) -> str:
    text = str(exc).replace("\n", " ")
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__


# ---------------------------------------------------------------- serving recorded events to an SDK


def event_bytes(event: SseEvent) -> bytes:
    """One event as a server writes it (its field lines, then the blank line that dispatches it)."""
    lines = list(event.lines) if event.lines else [f"data: {part}" for part in event.data.split("\n")]
    return ("\n".join(lines) + "\n\n").encode("utf-8")


class _Served:
    """The recorded events as a response body, remembering which step the client was reading."""

    def __init__(self, events: Events) -> None:
        self.events = events
        self.step: int | None = None

    def __iter__(self) -> Iterator[bytes]:
        for step, event in self.events:
            self.step = step
            yield event_bytes(event)


def _sdk_available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _transport_client(sdk: str, served: _Served) -> Any:
    """An SDK client whose HTTP layer answers every request with the served events (no network)."""
    if sdk == "openai":
        import openai

        http = _http_module(openai)

        def handler(request: Any) -> Any:
            return http.Response(200, headers={"content-type": "text/event-stream"}, content=iter(served))

        return openai.OpenAI(api_key="callscope-replay", base_url=f"{_BASE}/v1", max_retries=0,
                             http_client=http.Client(transport=http.MockTransport(handler)))
    import anthropic
    import httpx

    def handler_a(request: Any) -> Any:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=iter(served))

    return anthropic.Anthropic(api_key="callscope-replay", base_url=_BASE, max_retries=0,
                               http_client=httpx.Client(transport=httpx.MockTransport(handler_a)))


def _http_module(openai_module: Any) -> Any:
    """The HTTP library this openai SDK is built on (httpx, or its successor httpx2)."""
    base = getattr(openai_module, "_base_client", None)
    for name in ("httpx2", "httpx"):
        if base is not None and hasattr(base, name):
            return getattr(base, name)
    import httpx

    return httpx


# ---------------------------------------------------------------- openai-python


def _openai_chat(events: Events) -> ClientRun:
    import openai

    run = ClientRun(OPENAI_PYTHON)
    served = _Served(events)
    client = _transport_client("openai", served)
    # the SDK's own verdict on a turn cut by max_tokens or a content filter: it raises, with what it assembled
    finished_early = tuple(getattr(openai, name) for name in ("LengthFinishReasonError",
                                                                "ContentFilterFinishReasonError") if hasattr(openai, name))
    try:
        with client.chat.completions.stream(model=_MODEL, messages=[]) as stream:
            for _ in stream:
                pass
            completion = stream.get_final_completion() if served.step is not None else None
    except finished_early as exc:
        completion = getattr(exc, "completion", None)
    except Exception as exc:  # what the SDK raised is the verdict
        run.error, run.error_step = _describe(exc), served.step
        return run
    if completion is None:
        return run
    for choice in completion.choices:
        message = choice.message
        run.content[choice.index] = message.content or ""
        run.calls[choice.index] = [
            AssembledCall(call.id, call.function.name, call.function.arguments)
            for call in (message.tool_calls or [])
        ]
    return run


def _openai_responses(events: Events) -> ClientRun:
    run = ClientRun(OPENAI_PYTHON)
    served = _Served(events)
    client = _transport_client("openai", served)
    try:
        with client.responses.stream(model=_MODEL, input="") as stream:
            for _ in stream:
                pass
            response = stream.get_final_response()
    except Exception as exc:
        run.error, run.error_step = _describe(exc), served.step
        return run
    calls = []
    texts = []
    for item in response.output or []:
        if getattr(item, "type", None) == "function_call":
            calls.append(AssembledCall(item.call_id, item.name, item.arguments))
        elif getattr(item, "type", None) == "message":
            texts += [part.text for part in item.content or [] if getattr(part, "type", None) == "output_text"]
    run.calls[0] = calls
    run.content[0] = "".join(texts)
    return run


def _anthropic_messages(events: Events) -> ClientRun:
    run = ClientRun(ANTHROPIC_PYTHON)
    served = _Served(events)
    client = _transport_client("anthropic", served)
    try:
        with client.messages.stream(model=_MODEL, max_tokens=1, messages=[]) as stream:
            for _ in stream:
                pass
            message = stream.get_final_message()
    except Exception as exc:
        run.error, run.error_step = _describe(exc), served.step
        return run
    calls, texts = [], []
    for block in message.content or []:
        if block.type == "tool_use":
            calls.append(AssembledCall(block.id, block.name, json.dumps(block.input), parsed=True))
        elif block.type == "text":
            texts.append(block.text)
    run.calls[0] = calls
    run.content[0] = "".join(texts)
    return run


def _text(value: Any) -> str | None:
    """A field as the client holds it, as text: a non-string the SDK kept as it came is shown as JSON."""
    if value is None or isinstance(value, str):
        return value
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _quiet(run: Callable[[Events], ClientRun], events: Events) -> ClientRun:
    """Run an SDK profile without its warnings reaching the user (pydantic warns on the very shapes judged)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = run(events)
    for calls in result.calls.values():
        for call in calls:
            call.not_string = call.arguments is not None and not isinstance(call.arguments, str) and not call.parsed
            call.id, call.name, call.arguments = _text(call.id), _text(call.name), _text(call.arguments)
    result.content = {k: _text(v) or "" for k, v in result.content.items()}
    return result


def _openai_python(protocol: str, events: Events) -> ClientRun:
    if not _sdk_available("openai"):
        return ClientRun(OPENAI_PYTHON, unavailable="the openai package is not installed")
    return _quiet(_openai_responses if protocol == "responses" else _openai_chat, events)


def _anthropic_python(protocol: str, events: Events) -> ClientRun:
    if not _sdk_available("anthropic"):
        return ClientRun(ANTHROPIC_PYTHON, unavailable="the anthropic package is not installed")
    return _quiet(_anthropic_messages, events)


# ---------------------------------------------------------------- naive


def _naive(protocol: str, events: Events) -> ClientRun:
    """``+=`` on every string field, a dict per index: what a quick hand-written client does."""
    run = ClientRun(NAIVE)
    reader = get_protocol(protocol).naive
    at: int | None = None
    calls: dict[int, dict[Any, dict[str, str]]] = {}
    content: dict[int, str] = {}
    try:
        for step, event in events:
            at = step
            if event.data.startswith("[DONE]"):
                break
            reader(json.loads(event.data), calls, content)
    except Exception as exc:  # what the loop raised is the verdict
        run.error, run.error_step = _describe(exc), at
        return run
    for choice, by_key in calls.items():
        run.calls[choice] = [AssembledCall(c["id"], c["name"], c["arguments"]) for c in by_key.values()]
    run.content = content
    return run


# ---------------------------------------------------------------- the catalogue

PROFILES: dict[str, ClientProfile] = {
    profile.id: profile
    for profile in (
        ClientProfile(OPENAI_PYTHON, ("chat", "responses"), True, _openai_python,
                      "the official openai SDK's streaming helpers, run on the recorded events"),
        ClientProfile(NAIVE, None, True, _naive,
                      "+= on every string field of every delta, a dict per index"),
        ClientProfile(ANTHROPIC_PYTHON, ("anthropic",), False, _anthropic_python,
                      "the official anthropic SDK's messages.stream helper (if installed)"),
    )
}


def default_profiles() -> tuple[str, ...]:
    return tuple(p.id for p in PROFILES.values() if p.default)


def parse_profiles(text: str) -> tuple[str, ...]:
    """``openai-python,naive`` -> the ids; ``none`` -> no profile; raises ValueError naming an unknown one."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if names == ("none",):
        return ()
    unknown = [n for n in names if n not in PROFILES]
    if unknown or not names:
        raise ValueError(f"unknown client profile {', '.join(unknown) or text!r} (known: {', '.join(PROFILES)}, none)")
    return names


def run_profiles(protocol: str, events: Events, profiles: tuple[str, ...]) -> list[ClientRun]:
    """Every selected profile that reads ``protocol``, run on ``events`` (the dispatched ones, with their steps)."""
    return [PROFILES[p].run(protocol, events) for p in profiles if PROFILES[p].reads(protocol)]
