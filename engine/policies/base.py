"""Shared machinery of streaming policies: the parse as the server sees it, per step.

A policy receives, per step, the parse events of that step (and at the end the
terminal events plus the terminal :class:`~callscope.engine.core.parse_model.Parse`) and emits
:class:`~callscope.engine.core.wire.WireChunk` records. Its :attr:`StreamingPolicy.view` (a
:class:`~callscope.engine.core.parse_model.ParseAccumulator`) folds the events and records *what
changed this step* (:class:`~callscope.engine.core.parse_model.StepChanges`), which is all a
policy needs to stay linear: appends are forwarded as they are, and only revisions cost a comparison.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from callscope.engine.core import rules
from callscope.engine.core.causes import LENGTH, UNFINISHED
from callscope.engine.core.parse_model import Parse, ParseAccumulator, ParseEvent, StepChanges
from callscope.engine.core.pieces import joined
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
class SentCall:
    """A tool call as the client has received it: index, id, name, and the argument text sent (as pieces)."""

    index: int
    id: str
    name: str
    sent: list[str] = field(default_factory=list)
    sent_length: int = 0

    def sent_arguments(self) -> str:
        return joined(self.sent)

    def record(self, text: str) -> None:
        self.sent.append(text)
        self.sent_length += len(text)


def finish_reason_for(cause: str, tool_calls: bool) -> str | None:
    """The one finish rule every policy shares: none for a cut stream, ``length`` stays, else by ``tool_calls``."""
    if cause in UNFINISHED:
        return None
    if cause == LENGTH:
        return LENGTH
    return "tool_calls" if tool_calls else "stop"


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
        return joined(self.sent)

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
        self.view = ParseAccumulator()
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
        if len(events) < 2 and self.quick_step(step, ms, events[0] if events else None):
            return
        changes = self.view.step(events)
        for message in changes.failures:
            self.violate(rules.PARSE_ERROR, step, f"parser threw: {message}")
        self.on_step(step, ms, changes, terminal=False)

    def finish(self, step: int, ms: float | None, events: list[ParseEvent], terminal: Parse, cause: str) -> None:
        """Terminal parse: flush what is left, reconcile, and send the finish chunk."""
        self.terminal = terminal
        self.finish_ms = ms
        if self.ended:
            return
        changes = self.view.step(events)
        for message in changes.failures:
            self.violate(rules.PARSE_ERROR, step, f"parser threw on the terminal parse: {message}")
        self.on_step(step, ms, changes, terminal=True)
        self.finish_reason = self.decide_finish(step, terminal, cause)
        self.chunks.append(WireChunk(step, ms, FINISH, finish_reason=self.finish_reason))

    # ------------------------------------------------------------ hooks

    def quick_step(self, step: int, ms: float | None, event: ParseEvent | None) -> bool:
        """Take a step of at most one event the short way, if this policy has one for it; False: the long way.

        Most steps of a long call grow its arguments by one piece, or nothing at all. Folding them
        through :class:`~callscope.engine.core.parse_model.StepChanges` and every channel was most of
        a 100,000-step trace's analysis; a policy whose answer to such a step is plain (the atomic
        baseline sends nothing, the incremental policy one fragment) gives it here, and must give
        exactly what :meth:`on_step` would.
        """
        return False

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
            for channel, now, label, rule in (
                (self.reasoning, self.view.reasoning(), "reasoning", rules.REASONING_DIVERGED),
                (self.content, self.view.content(), "content", rules.CONTENT_DIVERGED),
            ):
                was_synced = channel.synced
                if not channel.revised(now) and was_synced:
                    self.violate(rule, step, f"{label} no longer extends what was sent; withheld")
        else:
            self.reasoning.appended(changes.reasoning)
            self.content.appended(changes.content)
        text = self.reasoning.take()
        if text:
            self.chunks.append(WireChunk(step, ms, REASONING, text))
        text = self.content.take()
        if text:
            self.chunks.append(WireChunk(step, ms, CONTENT, text))
