"""What every streaming protocol reader shares: events in, one assembled message per choice, end verdicts.

A protocol module (:mod:`.chat`, :mod:`.responses`, :mod:`.anthropic`) is one
:class:`ProtocolReader` subclass: it judges each event's JSON (:meth:`chunk`)
into one :class:`~.assembly.StreamBuilder` per choice, says whether the stream
ended as its protocol requires (:meth:`end`), and names the client profiles
that read it. It never sees HTTP: whoever recorded the lines (the capture
client, a proxy, a HAR reader), the reader judges the same events.
"""

from __future__ import annotations

from typing import Any, ClassVar

from callscope.engine.analysis.analyzer import StepRecord
from callscope.engine.core import rules
from callscope.engine.core.json_text import loads
from callscope.engine.core.wire import StreamIdentity, Violation
from callscope.engine.streams.assembly import DEFAULT_ATOMIC_SILENCE_MS, StreamBuilder, clip
from callscope.engine.streams.spec import NOT_JSON
from callscope.engine.streams.sse import SseEvent

#: An index past this is not a list position any client can allocate (the SDKs index Python lists by it).
MAX_INDEX = 1 << 16


class ProtocolReader:
    """Base of one protocol's reader. Subclasses set ``protocol``/``label`` and implement :meth:`chunk`."""

    protocol: ClassVar[str] = ""
    label: ClassVar[str] = ""
    #: The URL path of its endpoint (``capture`` appends it to a base URL).
    path: ClassVar[str] = ""

    def __init__(self, steps: list[StepRecord], atomic_silence_ms: float = DEFAULT_ATOMIC_SILENCE_MS,
                 expected_choices: int = 1) -> None:
        self.steps = steps
        self.atomic_silence_ms = atomic_silence_ms
        self.expected_choices = max(1, expected_choices)
        self.identity: StreamIdentity | None = None
        self._choices: dict[int, StreamBuilder] = {}
        #: The last event's data as decoded (client profiles read it too: decoded once for all of them).
        self.decoded: Any = None

    # ------------------------------------------------------------ choices

    def builder(self, choice: int = 0) -> StreamBuilder:
        found = self._choices.get(choice)
        if found is None:
            found = self._choices[choice] = StreamBuilder(self.steps, self.atomic_silence_ms)
        return found

    @property
    def primary(self) -> StreamBuilder:
        """The message the panes show: choice 0, unless only other choices carried anything."""
        return self.choices()[0][1]

    def choices(self) -> list[tuple[int, StreamBuilder]]:
        """Every choice that carried something, in index order; choice 0 alone when none did."""
        found = sorted((i, b) for i, b in self._choices.items() if b.chunks or b.calls)
        return found or [(0, self.builder(0))]

    # ------------------------------------------------------------ events

    def event(self, step: int, ms: float | None, silence: float, event: SseEvent) -> None:
        """One dispatched event with data: its JSON judged by :meth:`chunk`."""
        try:
            obj = loads(event.data)
        except ValueError as exc:
            self.decoded = NOT_JSON
            self.primary.violate(rules.INVALID_CHUNK_JSON, step, f"not JSON ({exc}): {clip(event.data)}")
            return
        self.decoded = obj
        if not isinstance(obj, dict):
            self.primary.violate(rules.INVALID_CHUNK_JSON, step,
                                 f"expected a JSON object, got {type(obj).__name__}: {clip(event.data)}")
            return
        self.chunk(step, ms, silence, event, obj)

    def chunk(self, step: int, ms: float | None, silence: float, event: SseEvent, obj: dict[str, Any]) -> None:
        raise NotImplementedError

    def typed(self, builder: StreamBuilder, step: int, event: SseEvent, obj: dict[str, Any]) -> str:
        """A typed event's type (Responses, Anthropic): its data's ``type``, which must agree with ``event:``."""
        kind = obj.get("type")
        if not isinstance(kind, str):
            kind = event.event
            self.malformed(builder, step, "type", "event data without a type field")
        if event.event and event.event != kind:
            self.malformed(builder, step, "event", f"SSE event {event.event!r} carries data of type {kind!r}")
        return kind

    def take_identity(self, completion_id: Any, created: Any = 0, model: Any = "") -> None:
        if self.identity is None and isinstance(completion_id, str) and completion_id:
            self.identity = StreamIdentity(
                completion_id, created if isinstance(created, int) else 0, model if isinstance(model, str) else ""
            )

    # ------------------------------------------------------------ the end

    def finished_properly(self) -> bool:
        """Whether the stream ended the way its protocol ends a response (a client may stop reading)."""
        raise NotImplementedError

    def missing_end(self) -> list[str]:
        """What a proper end lacked (for the truncation message), e.g. ``["finish_reason", "[DONE]"]``."""
        raise NotImplementedError

    def truncated(self, builder: StreamBuilder) -> bool:
        """Whether this choice lacks the end its protocol requires."""
        raise NotImplementedError

    def end(self, builder: StreamBuilder, choice: int, truncated: bool) -> list[Violation]:
        """The end-of-stream verdicts of one choice (beyond each call's own, which the analyzer adds)."""
        return []

    def finish_cause(self, builder: StreamBuilder) -> str:
        """``length`` when the turn was cut by the token limit, else ``stop``."""
        return "length" if builder.finish_reason == "length" else "stop"

    def wrong_type(self, builder: StreamBuilder, step: int, where: str, value: Any, wanted: str) -> None:
        """A field of the wrong JSON type: ``malformed-chunk``, once per field."""
        self.malformed(builder, step, where, f"{where} is {json_type(value)} {clip(str(value), 40)}, expected {wanted}")

    def malformed(self, builder: StreamBuilder, step: int, where: str, detail: str) -> None:
        """``malformed-chunk`` once per field path (a server that gets one field wrong gets it wrong every chunk)."""
        key = "malformed " + where
        if key not in builder.reported:
            builder.reported.add(key)
            builder.violate(rules.MALFORMED_CHUNK, step, detail)

def json_type(value: Any) -> str:
    """The JSON type name of a decoded value (``a string``, ``an array``...), as a message says it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def good_index(value: Any) -> bool:
    """An index a client can use: a non-negative integer (not a boolean), not absurdly large."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_INDEX
