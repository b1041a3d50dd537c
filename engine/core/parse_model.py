"""What a format parser says about a generation: snapshots and the events between them.

Parsers report *events* (content appended, a call opened, a name completed,
argument text appended, a call revised) instead of a full snapshot per step,
so that analysing a long generation stays linear: a 400 KB tool call fed four
characters at a time would otherwise copy the whole argument string on every
step. A snapshot (:class:`Parse`) is obtained by folding events with
:class:`ParseAccumulator`, which is what tests, the terminal reconciliation and
the GUI's "partial parse at the cursor" pane use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """One tool call as a parser sees it at some prefix.

    ``name`` is None until the whole name has been generated. ``arguments`` is
    JSON text (possibly incomplete while partial). ``id`` is set only when the
    model itself wrote one.
    """

    name: str | None
    arguments: str = ""
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Parse:
    """A full parse of a generated prefix (``partial``) or of the whole generation."""

    content: str = ""
    reasoning: str = ""
    calls: tuple[ParsedCall, ...] = ()
    partial: bool = True


# --------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class ContentAppended:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningAppended:
    text: str


@dataclass(frozen=True, slots=True)
class CallOpened:
    """A new call exists at ``index`` (always the next index); its name may not be known yet."""

    index: int
    id: str | None = None


@dataclass(frozen=True, slots=True)
class CallNamed:
    """The whole name of the call at ``index`` is now known."""

    index: int
    name: str


@dataclass(frozen=True, slots=True)
class ArgumentsAppended:
    index: int
    text: str


@dataclass(frozen=True, slots=True)
class CallRevised:
    """A non-append change: the call at ``index`` now reads exactly like this.

    Parsers that keep the append-only rule never emit it; imported fixtures and
    buggy parsers do. Policies decide what a revision means for the wire.
    """

    index: int
    name: str | None
    arguments: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class CallsDropped:
    """The parse now has only ``count`` calls (the call count shrank)."""

    count: int


@dataclass(frozen=True, slots=True)
class ContentRevised:
    """Content (or reasoning) is no longer an extension of what it was."""

    content: str
    reasoning: str


@dataclass(frozen=True, slots=True)
class ParseFailed:
    """The parser threw on this prefix (imported fixtures record ``THROW``)."""

    message: str


ParseEvent = Union[
    ContentAppended,
    ReasoningAppended,
    CallOpened,
    CallNamed,
    ArgumentsAppended,
    CallRevised,
    CallsDropped,
    ContentRevised,
    ParseFailed,
]


# ---------------------------------------------------------------- accumulator


@dataclass(slots=True)
class _CallBuilder:
    name: str | None = None
    id: str | None = None
    pieces: list[str] = field(default_factory=list)

    def arguments(self) -> str:
        if len(self.pieces) > 1:
            self.pieces[:] = ["".join(self.pieces)]
        return self.pieces[0] if self.pieces else ""


class ParseAccumulator:
    """Folds parse events into the current :class:`Parse`.

    Appends cost O(len(text)); :meth:`snapshot` joins pending pieces lazily, so
    calling it rarely keeps the whole fold linear.
    """

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: list[_CallBuilder] = []

    def apply(self, event: ParseEvent) -> None:
        if isinstance(event, ArgumentsAppended):
            self._calls[event.index].pieces.append(event.text)
        elif isinstance(event, ContentAppended):
            self._content.append(event.text)
        elif isinstance(event, ReasoningAppended):
            self._reasoning.append(event.text)
        elif isinstance(event, CallOpened):
            if event.index != len(self._calls):
                raise ValueError(f"call {event.index} opened out of order ({len(self._calls)} open)")
            self._calls.append(_CallBuilder(id=event.id))
        elif isinstance(event, CallNamed):
            self._calls[event.index].name = event.name
        elif isinstance(event, CallRevised):
            while len(self._calls) <= event.index:
                self._calls.append(_CallBuilder())
            self._calls[event.index] = _CallBuilder(event.name, event.id, [event.arguments])
        elif isinstance(event, CallsDropped):
            del self._calls[event.count :]
        elif isinstance(event, ContentRevised):
            self._content = [event.content]
            self._reasoning = [event.reasoning]
        # ParseFailed leaves the parse as it was.

    def apply_all(self, events: list[ParseEvent]) -> None:
        for event in events:
            self.apply(event)

    @property
    def call_count(self) -> int:
        return len(self._calls)

    def call_name(self, index: int) -> str | None:
        return self._calls[index].name

    def call_arguments(self, index: int) -> str:
        return self._calls[index].arguments()

    def content(self) -> str:
        return _joined(self._content)

    def reasoning(self) -> str:
        return _joined(self._reasoning)

    def snapshot(self, partial: bool = True) -> Parse:
        calls = tuple(ParsedCall(c.name, c.arguments(), c.id) for c in self._calls)
        return Parse(self.content(), self.reasoning(), calls, partial)


def _joined(pieces: list[str]) -> str:
    if len(pieces) > 1:
        pieces[:] = ["".join(pieces)]
    return pieces[0] if pieces else ""


def diff_parses(old: Parse, new: Parse) -> list[ParseEvent]:
    """Events that turn ``old`` into ``new``: appends where possible, revisions otherwise.

    Used for sources that carry whole parses (imported fixtures), never on the
    per-token path of a text parser.
    """
    events: list[ParseEvent] = []
    if new.content.startswith(old.content) and new.reasoning.startswith(old.reasoning):
        if len(new.reasoning) > len(old.reasoning):
            events.append(ReasoningAppended(new.reasoning[len(old.reasoning) :]))
        if len(new.content) > len(old.content):
            events.append(ContentAppended(new.content[len(old.content) :]))
    else:
        events.append(ContentRevised(new.content, new.reasoning))
    if len(new.calls) < len(old.calls):
        events.append(CallsDropped(len(new.calls)))
    for index, call in enumerate(new.calls):
        if index >= len(old.calls):
            events.append(CallOpened(index, call.id))
            if call.name is not None:
                events.append(CallNamed(index, call.name))
            if call.arguments:
                events.append(ArgumentsAppended(index, call.arguments))
            continue
        before = old.calls[index]
        if before == call:
            continue
        appendable = (
            before.id == call.id
            and (before.name is None or before.name == call.name)
            and call.arguments.startswith(before.arguments)
        )
        if not appendable:
            events.append(CallRevised(index, call.name, call.arguments, call.id))
            continue
        if before.name is None and call.name is not None:
            events.append(CallNamed(index, call.name))
        if len(call.arguments) > len(before.arguments):
            events.append(ArgumentsAppended(index, call.arguments[len(before.arguments) :]))
    return events
