"""Shared machinery of streaming policies: the parse as the server sees it, per step.

A policy receives, per step, the parse events of that step (and at the end the
terminal events plus the terminal :class:`~callscope.engine.core.parse_model.Parse`) and emits
:class:`~callscope.engine.core.wire.WireChunk` records. :class:`ParseView` folds the events and
records *what changed this step*, which is all a policy needs to stay linear:
appends are forwarded as they are, and only revisions cost a comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from callscope.engine.core.parse_model import (
    ArgumentsAppended,
    CallNamed,
    CallOpened,
    CallRevised,
    CallsDropped,
    ContentAppended,
    ContentRevised,
    Parse,
    ParseEvent,
    ParseFailed,
    ReasoningAppended,
)
from callscope.engine.core.wire import (
    CONTENT,
    FINISH,
    REASONING,
    ROLE,
    IdMinter,
    Violation,
    WireChunk,
)


@dataclass(slots=True)
class ViewCall:
    """A call of the current parse: name, model id, and its argument text as pieces."""

    name: str | None = None
    id: str | None = None
    pieces: list[str] = field(default_factory=list)
    length: int = 0

    def arguments(self) -> str:
        if len(self.pieces) > 1:
            self.pieces[:] = ["".join(self.pieces)]
        return self.pieces[0] if self.pieces else ""


@dataclass(slots=True)
class StepChanges:
    """What the events of one step did to the parse."""

    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    content_revised: bool = False
    opened: list[int] = field(default_factory=list)
    named: list[int] = field(default_factory=list)
    appended: dict[int, list[str]] = field(default_factory=dict)
    revised: list[int] = field(default_factory=list)
    dropped_to: int | None = None
    failures: list[str] = field(default_factory=list)


class ParseView:
    """The current parse, folded from events, plus the changes of the last step."""

    def __init__(self) -> None:
        self.calls: list[ViewCall] = []
        self.content_pieces: list[str] = []
        self.reasoning_pieces: list[str] = []

    def content(self) -> str:
        return _join(self.content_pieces)

    def reasoning(self) -> str:
        return _join(self.reasoning_pieces)

    def apply(self, events: list[ParseEvent]) -> StepChanges:
        changes = StepChanges()
        for event in events:
            if isinstance(event, ArgumentsAppended):
                call = self.calls[event.index]
                call.pieces.append(event.text)
                call.length += len(event.text)
                changes.appended.setdefault(event.index, []).append(event.text)
            elif isinstance(event, ContentAppended):
                self.content_pieces.append(event.text)
                changes.content.append(event.text)
            elif isinstance(event, ReasoningAppended):
                self.reasoning_pieces.append(event.text)
                changes.reasoning.append(event.text)
            elif isinstance(event, CallOpened):
                self.calls.append(ViewCall(id=event.id))
                changes.opened.append(event.index)
            elif isinstance(event, CallNamed):
                self.calls[event.index].name = event.name
                changes.named.append(event.index)
            elif isinstance(event, CallRevised):
                while len(self.calls) <= event.index:
                    self.calls.append(ViewCall())
                    changes.opened.append(len(self.calls) - 1)
                self.calls[event.index] = ViewCall(event.name, event.id, [event.arguments], len(event.arguments))
                changes.appended.pop(event.index, None)
                changes.revised.append(event.index)
            elif isinstance(event, CallsDropped):
                del self.calls[event.count :]
                changes.dropped_to = event.count
                for index in list(changes.appended):
                    if index >= event.count:
                        del changes.appended[index]
            elif isinstance(event, ContentRevised):
                self.content_pieces = [event.content]
                self.reasoning_pieces = [event.reasoning]
                changes.content = []
                changes.reasoning = []
                changes.content_revised = True
            elif isinstance(event, ParseFailed):
                changes.failures.append(event.message)
        return changes


def _join(pieces: list[str]) -> str:
    if len(pieces) > 1:
        pieces[:] = ["".join(pieces)]
    return pieces[0] if pieces else ""


class TextChannel:
    """Append-only streaming of one text field (content or reasoning).

    Appends go straight out; a revision that still extends what was sent
    resumes streaming, any other revision is withheld and reported once.
    """

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.sent_length = 0
        self.pending: list[str] = []
        self.synced = True

    def sent_text(self) -> str:
        return _join(self.sent)

    def appended(self, pieces: list[str]) -> None:
        if self.synced:
            self.pending.extend(pieces)

    def revised(self, now: str) -> bool:
        """Re-align with the parse's text ``now``; False if it no longer extends what was sent."""
        sent = self.sent_text()
        self.synced = now.startswith(sent)
        self.pending = [now[len(sent) :]] if self.synced else []
        return self.synced

    def take(self) -> str:
        text = "".join(self.pending)
        self.pending.clear()
        if text:
            self.sent.append(text)
            self.sent_length += len(text)
        return text


class StreamingPolicy:
    """Turns per-step parse events into wire chunks. Subclasses decide when tool calls go out."""

    policy_id: ClassVar[str] = ""
    description: ClassVar[str] = ""

    def __init__(self, id_seed: str = "callscope") -> None:
        self.view = ParseView()
        self.chunks: list[WireChunk] = []
        self.violations: list[Violation] = []
        self.minter = IdMinter(id_seed)
        self.content = TextChannel()
        self.reasoning = TextChannel()
        self.finish_reason: str | None = None
        self.ended = False  # the stream was closed early (llama_server's invalid diff)
        self.terminal: Parse | None = None
        self.finish_ms: float | None = None

    # ------------------------------------------------------------ driving

    def start(self, ms: float | None = 0.0) -> None:
        """The role chunk every stream opens with (step 0, request start)."""
        self.chunks.append(WireChunk(0, ms, ROLE))

    def step(self, step: int, ms: float | None, events: list[ParseEvent]) -> None:
        if self.ended:
            return
        changes = self.view.apply(events)
        for message in changes.failures:
            self.violate("parse-error", step, f"parser threw: {message}")
        self.on_step(step, ms, changes, terminal=False)

    def finish(self, step: int, ms: float | None, events: list[ParseEvent], terminal: Parse, cause: str) -> None:
        """Terminal parse: flush what is left, reconcile, and send the finish chunk."""
        self.terminal = terminal
        self.finish_ms = ms
        if self.ended:
            return
        changes = self.view.apply(events)
        for message in changes.failures:
            self.violate("parse-error", step, f"parser threw on the terminal parse: {message}")
        self.on_step(step, ms, changes, terminal=True)
        self.finish_reason = self.decide_finish(step, terminal, cause)
        self.chunks.append(WireChunk(step, ms, FINISH, finish_reason=self.finish_reason))

    # ------------------------------------------------------------ hooks

    def on_step(self, step: int, ms: float | None, changes: StepChanges, terminal: bool) -> None:
        raise NotImplementedError

    def decide_finish(self, step: int, terminal: Parse, cause: str) -> str | None:
        raise NotImplementedError

    def wire_calls(self) -> list[tuple[int, str, str, str]]:
        """(index, id, name, streamed arguments) of every call the client received."""
        raise NotImplementedError

    # ------------------------------------------------------------ helpers

    def violate(self, rule: str, step: int | None, detail: str, call_index: int | None = None) -> None:
        self.violations.append(Violation(rule, step, detail, call_index))

    def stream_text(self, step: int, ms: float | None, changes: StepChanges) -> None:
        """Content and reasoning stream the same way under every policy here."""
        if changes.content_revised:
            for channel, now, label in (
                (self.reasoning, self.view.reasoning(), "reasoning"),
                (self.content, self.view.content(), "content"),
            ):
                was_synced = channel.synced
                if not channel.revised(now) and was_synced:
                    self.violate(f"{label}-diverged", step, f"{label} no longer extends what was sent; withheld")
        else:
            self.reasoning.appended(changes.reasoning)
            self.content.appended(changes.content)
        text = self.reasoning.take()
        if text:
            self.chunks.append(WireChunk(step, ms, REASONING, text))
        text = self.content.take()
        if text:
            self.chunks.append(WireChunk(step, ms, CONTENT, text))
