"""What a format parser says about a generation: snapshots and the events between them.

Parsers report *events* (content appended, a call opened, a name completed,
argument text appended, a call revised) instead of a full snapshot per step,
so that analysing a long generation stays linear: a 400 KB tool call fed four
characters at a time would otherwise copy the whole argument string on every
step. A snapshot (:class:`Parse`) is obtained by folding events with
:class:`ParseAccumulator`, which is what tests, the terminal reconciliation and
the GUI's "partial parse at the cursor" pane use.

The event vocabulary is interpreted here and nowhere else: each event class says
what it does to the parse (``apply``), what it means as a change of one step
(``note``, into :class:`StepChanges`: what a policy forwards and what the parse
pane highlights) and what ``kind`` of change it is (the timeline's parse lane).
Parsers, policies, the analyzer and the inspector all fold through these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Union

from callscope.engine.core.pieces import joined


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


# Each event: ``apply(parse)`` folds it into a ParseAccumulator, ``note(changes)`` records it in
# the StepChanges of its step, ``kind`` names the sort of change (appends by field, a call's
# life, a revision, a failure). Appends come first: they are nearly every event of a stream.


@dataclass(frozen=True, slots=True)
class ArgumentsAppended:
    index: int
    text: str
    kind: ClassVar[str] = "arguments"

    def apply(self, parse: ParseAccumulator) -> None:
        call = parse.calls[self.index]
        call.pieces.append(self.text)
        call.length += len(self.text)

    def note(self, changes: StepChanges) -> None:
        pieces = changes.appended.get(self.index)
        if pieces is None:
            changes.appended[self.index] = [self.text]
        else:
            pieces.append(self.text)


@dataclass(frozen=True, slots=True)
class ContentAppended:
    text: str
    kind: ClassVar[str] = "content"

    def apply(self, parse: ParseAccumulator) -> None:
        parse.content_pieces.append(self.text)

    def note(self, changes: StepChanges) -> None:
        changes.content.append(self.text)


@dataclass(frozen=True, slots=True)
class ReasoningAppended:
    text: str
    kind: ClassVar[str] = "reasoning"

    def apply(self, parse: ParseAccumulator) -> None:
        parse.reasoning_pieces.append(self.text)

    def note(self, changes: StepChanges) -> None:
        changes.reasoning.append(self.text)


@dataclass(frozen=True, slots=True)
class CallOpened:
    """A new call exists at ``index`` (always the next index); its name may not be known yet."""

    index: int
    id: str | None = None
    kind: ClassVar[str] = "call opened"

    def apply(self, parse: ParseAccumulator) -> None:
        if self.index != len(parse.calls):
            raise ValueError(f"call {self.index} opened out of order ({len(parse.calls)} open)")
        parse.calls.append(FoldedCall(id=self.id))

    def note(self, changes: StepChanges) -> None:
        changes.opened.append(self.index)


@dataclass(frozen=True, slots=True)
class CallNamed:
    """The whole name of the call at ``index`` is now known."""

    index: int
    name: str
    kind: ClassVar[str] = "name complete"

    def apply(self, parse: ParseAccumulator) -> None:
        parse.calls[self.index].name = self.name

    def note(self, changes: StepChanges) -> None:
        changes.named.append(self.index)


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
    kind: ClassVar[str] = "revised"

    def apply(self, parse: ParseAccumulator) -> None:
        calls = parse.calls
        while len(calls) <= self.index:
            calls.append(FoldedCall())
        calls[self.index] = FoldedCall(self.name, self.id, [self.arguments], len(self.arguments))

    def note(self, changes: StepChanges) -> None:
        changes.appended.pop(self.index, None)  # the revision supersedes this step's appends
        changes.revised.append(self.index)


@dataclass(frozen=True, slots=True)
class CallsDropped:
    """The parse now has only ``count`` calls (the call count shrank)."""

    count: int
    kind: ClassVar[str] = "revised"

    def apply(self, parse: ParseAccumulator) -> None:
        del parse.calls[self.count :]

    def note(self, changes: StepChanges) -> None:
        changes.dropped_to = self.count
        for index in [i for i in changes.appended if i >= self.count]:
            del changes.appended[index]


@dataclass(frozen=True, slots=True)
class ContentRevised:
    """Content (or reasoning) is no longer an extension of what it was."""

    content: str
    reasoning: str
    kind: ClassVar[str] = "revised"

    def apply(self, parse: ParseAccumulator) -> None:
        parse.content_pieces = [self.content]
        parse.reasoning_pieces = [self.reasoning]

    def note(self, changes: StepChanges) -> None:
        changes.content = []  # what was appended before it in this step is superseded
        changes.reasoning = []
        changes.content_revised = True


@dataclass(frozen=True, slots=True)
class ParseFailed:
    """The parser threw on this prefix (imported fixtures record ``THROW``); the parse stays as it was."""

    message: str
    kind: ClassVar[str] = "failed"

    def apply(self, parse: ParseAccumulator) -> None:
        pass

    def note(self, changes: StepChanges) -> None:
        changes.failures.append(self.message)


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


class FoldedCall:
    """A call of the folded parse: name, model id, and its argument text as pieces (``length`` kept as they grow)."""

    __slots__ = ("name", "id", "pieces", "length")

    def __init__(self, name: str | None = None, id: str | None = None, pieces: list[str] | None = None,
                 length: int = 0) -> None:
        self.name = name
        self.id = id
        self.pieces = pieces if pieces is not None else []
        self.length = length

    def arguments(self) -> str:
        return joined(self.pieces)


class StepChanges:
    """What the events of one step did to the parse: appended pieces by field and call, and what else happened.

    A policy forwards appends as they are and compares only on revisions, which keeps it
    linear; the inspector shows the same summary as the step's highlight. A plain slotted
    class (not a dataclass with factories): one is built per step per policy.
    """

    __slots__ = ("content", "reasoning", "content_revised", "opened", "named", "appended", "revised", "dropped_to",
                 "failures")

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.content_revised = False
        self.opened: list[int] = []
        self.named: list[int] = []
        self.appended: dict[int, list[str]] = {}
        self.revised: list[int] = []
        self.dropped_to: int | None = None
        self.failures: list[str] = []


def summarize(events: list[ParseEvent]) -> StepChanges:
    """The changes of one step's events, without folding them into a parse (the inspector's step highlight)."""
    changes = StepChanges()
    for event in events:
        event.note(changes)
    return changes


class ParseAccumulator:
    """Folds parse events into the current :class:`Parse`.

    Appends cost O(len(text)); :meth:`snapshot` joins pending pieces lazily, so
    calling it rarely keeps the whole fold linear. Parsers keep one to answer
    ``snapshot()``; each policy keeps one as the parse the server holds, folded a
    step at a time by :meth:`step`.
    """

    __slots__ = ("calls", "content_pieces", "reasoning_pieces")

    def __init__(self) -> None:
        self.calls: list[FoldedCall] = []
        self.content_pieces: list[str] = []
        self.reasoning_pieces: list[str] = []

    def apply(self, event: ParseEvent) -> None:
        event.apply(self)

    def apply_all(self, events: list[ParseEvent]) -> None:
        for event in events:
            event.apply(self)

    def step(self, events: list[ParseEvent]) -> StepChanges:
        """Fold one step's events and say what they changed."""
        changes = StepChanges()
        for event in events:
            event.apply(self)
            event.note(changes)
        return changes

    @property
    def call_count(self) -> int:
        return len(self.calls)

    def call_name(self, index: int) -> str | None:
        return self.calls[index].name

    def call_arguments(self, index: int) -> str:
        return self.calls[index].arguments()

    def content(self) -> str:
        return joined(self.content_pieces)

    def reasoning(self) -> str:
        return joined(self.reasoning_pieces)

    def snapshot(self, partial: bool = True) -> Parse:
        calls = tuple(ParsedCall(c.name, c.arguments(), c.id) for c in self.calls)
        return Parse(self.content(), self.reasoning(), calls, partial)


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
