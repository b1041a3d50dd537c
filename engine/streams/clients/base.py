"""What a client profile is: one declaration (:class:`ClientProfile`) and one small assembler class.

A profile is a plain-Python emulation of how one real client library assembles a
streamed message, written from reading that library's source at the version it
names. It reads the events a client would get, one at a time, and ends with what
the library ends with: per choice, the calls (id, name, arguments) and content;
or the exception it raises, at the event where it raises.

Profiles are on the hot path (the proxy and ``callscope check`` run every default
profile on every chunk of every turn), so an assembler works on the JSON the
protocol reader already decoded (shared, never mutated: an assembler copies what
it keeps), holds plain dicts and lists, and never builds an SDK object. The
differential test (``tests/system/test_differential.py``) serves the quirks library to the real
libraries over HTTP and checks each profile predicts exactly what they end with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from callscope.engine.streams.spec import NOT_JSON as _PROTOCOL_NOT_JSON
from callscope.engine.streams.sse import SseEvent

#: The id a library made up for a call the server sent without one (openai-node's ``call_<uuid>``, the AI SDK's
#: generated ids): any id will do, so it is compared as "some id the stream did not send".
GENERATED_ID = "<generated>"
#: An ``assemblers`` key for a profile that reads every registered protocol (the naive client).
ANY_PROTOCOL = "*"
#: What an assembler gets for an event whose data is not JSON (every library raises on it, each its own way):
#: the protocol readers' own marker, so the JSON they decoded is handed on as it is.
NOT_JSON = _PROTOCOL_NOT_JSON


class Raised(Exception):  # noqa: N818 - it is what the library raised, not an error of callscope's
    """The library raises here: ``kind`` is its exception's name (``TypeError``, ``OpenAIError``...).

    ``deliberate`` marks a library's own verdict on a well-formed stream (the SDK raising
    ``LengthFinishReasonError`` on a turn cut by ``max_tokens``), which is no fault of the stream's.
    """

    def __init__(self, kind: str, message: str = "", *, deliberate: bool = False) -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind
        self.deliberate = deliberate


@dataclass(slots=True)
class AssembledCall:
    id: str | None
    name: str | None
    arguments: str | None
    parsed: bool = False  # the client keeps parsed arguments (a JSON value), so compare as JSON, not bytes
    not_string: bool = False  # the client ended with arguments that are no string (an app's json.loads fails)
    invalid: bool = False  # the library itself flags the call as unusable (LangChain, the AI SDK)


@dataclass(slots=True)
class ClientRun:
    """What one profile ended with: per choice, its calls and content; or the exception that stopped it."""

    profile: str
    calls: dict[int, list[AssembledCall]] = field(default_factory=dict)
    content: dict[int, str] = field(default_factory=dict)
    error: str | None = None
    error_step: int | None = None  # the step whose event was being read when it raised
    deliberate: bool = False  # the error is the library's own verdict on a well-formed stream (see Raised)
    unavailable: str | None = None  # why the profile could not run


class Assembler:
    """One run of a profile over one stream: :meth:`event` per dispatched event, then :meth:`finish`.

    Either may raise :class:`Raised` (or any exception, taken as the library raising it).
    ``tools``: the names of the tools the request offered (None: unknown, any name is offered).
    """

    __slots__ = ("protocol", "tools")

    def __init__(self, protocol: str, tools: frozenset[str] | None = None) -> None:
        self.protocol = protocol
        self.tools = tools

    def event(self, event: SseEvent, obj: Any) -> None:
        raise NotImplementedError

    def fragment(self, choice: int, index: int, text: str) -> bool:
        """The fast lane: chunks that only append ``text`` to the arguments of call ``index`` of ``choice``
        (see :func:`plain_fragment`; ``text`` may be several such chunks' fragments joined). Apply it and return
        True when the library would do nothing else with them in the state it is in (so the answer cannot
        depend on ``text``); return False, changing nothing, to have :meth:`event` read each in full."""
        return False

    def finish(self) -> tuple[dict[int, list[AssembledCall]], dict[int, str]]:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class ClientProfile:
    """One client library's profile: the declaration a new profile adds (plus one registry line).

    ``library`` and ``version``: the package and the exact version its assembly follows (the
    differential test pins that version). ``assemblers``: the assembler class per protocol it reads.
    ``default``: run unless ``--client`` says otherwise (a call reconstructs only if every default
    profile that reads its protocol assembles it right).
    """

    id: str
    library: str
    version: str
    assemblers: dict[str, type[Assembler]]
    default: bool
    about: str
    language: ClassVar[str] = ""

    def reads(self, protocol: str) -> bool:
        return protocol in self.assemblers or ANY_PROTOCOL in self.assemblers

    def assembler(self, protocol: str) -> type[Assembler]:
        return self.assemblers.get(protocol) or self.assemblers[ANY_PROTOCOL]

    @property
    def protocols(self) -> tuple[str, ...] | None:
        """The protocols it reads (None: every registered one)."""
        return None if ANY_PROTOCOL in self.assemblers else tuple(self.assemblers)


def describe(exc: BaseException) -> str:
    """``Kind: message`` of what a library raised, one line."""
    if isinstance(exc, Raised):
        text = str(exc)
    else:
        detail = str(exc).replace("\n", " ")
        text = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
    return text[:200]


# ---------------------------------------------------------------- shared by the emulations


def fresh(value: Any) -> Any:
    """A private copy of a decoded JSON value (dicts and lists copied; strings and numbers are immutable)."""
    if isinstance(value, dict):
        return {k: fresh(v) for k, v in value.items()}
    if isinstance(value, list):
        return [fresh(v) for v in value]
    return value


#: Top-level chunk keys that some library reads beyond ``choices``: a chunk carrying one of these takes the full path.
#: Every other key a server adds (a timestamp, ``x_groq``, ``prompt_filter_results``...) every library leaves aside,
#: so it does not stop a chunk being a plain fragment (the proxy's benchmark stamps each chunk with one).
_SPECIAL_TOP = ("error", "usage")


def plain_fragment(obj: Any) -> tuple[int, int, str] | None:
    """``(choice, index, text)`` when a Chat Completions chunk is nothing but one argument fragment of one call.

    That is most chunks of a streamed call (``{"index": 0, "function": {"arguments": "..."}}`` in one choice's
    delta, no finish, no content), and every library does one thing with it: so it is recognised once per
    chunk, and each profile applies it without walking the chunk again (:meth:`Assembler.fragment`).
    """
    if type(obj) is not dict:
        return None
    choices = obj.get("choices")
    if type(choices) is not list or len(choices) != 1 or obj.get("object") != "chat.completion.chunk":
        return None
    choice = choices[0]
    if type(choice) is not dict or choice.get("finish_reason") is not None or choice.get("logprobs") is not None:
        return None
    delta = choice.get("delta")
    number = choice.get("index")
    if type(delta) is not dict or type(number) is not int:
        return None
    calls = delta.get("tool_calls")
    if type(calls) is not list or len(calls) != 1:
        return None
    for key in _SPECIAL_TOP:
        if obj.get(key) is not None:
            return None
    if len(delta) > 1:
        for key, value in delta.items():
            if value is not None and key != "tool_calls":
                return None
    entry = calls[0]
    if type(entry) is not dict or len(entry) != 2:
        return None
    index = entry.get("index")
    function = entry.get("function")
    if type(index) is not int or type(function) is not dict or len(function) != 1:
        return None
    text = function.get("arguments")
    if type(text) is not str:
        return None
    for key in ("id", "model"):
        if key in obj and type(obj[key]) is not str:
            return None
    created = obj.get("created")
    if created is not None and type(created) not in (int, float):
        return None
    return number, index, text


def choice_entries(obj: Any) -> list[Any]:
    """A chunk's ``choices`` when it is a list (what a lenient reader iterates), else none."""
    choices = obj.get("choices") if isinstance(obj, dict) else None
    return choices if isinstance(choices, list) else []
