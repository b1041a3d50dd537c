"""The fix callscope exists to show: stream each tool call as the model writes it.

Wire contract kept here (each rule has its own test):
- the first delta of an index carries ``id``, ``type``, ``function.name`` and any
  arguments so far; later deltas carry only ``{index, function.arguments}``;
- the id is chosen once (the model's, else minted) and never changes;
- a call without a complete name holds back itself and every later index;
- a parse that does not extend what was sent is withheld and recorded;
- ``finish_reason`` is ``tool_calls`` only if the wire reconstructs the terminal
  parse byte for byte; a call first seen at the terminal parse is still delivered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from callscope.engine.core import rules
from callscope.engine.core.causes import UNFINISHED
from callscope.engine.core.parse_model import ArgumentsAppended, Parse, ParseEvent, StepChanges
from callscope.engine.core.wire import ARGUMENTS, HEADER, WireChunk, describe_difference
from callscope.engine.policies.base import SentCall, StreamingPolicy, finish_reason_for


@dataclass(slots=True)
class WireCall(SentCall):
    """What the client has received for one index, and how it relates to the parse."""

    pending: list[str] = field(default_factory=list)
    synced: bool = True  # the parse's arguments extend what was sent
    behind: bool = False  # the parse's arguments are a proper prefix of what was sent
    reported_names: set[str] = field(default_factory=set)


class IncrementalPolicy(StreamingPolicy):
    policy_id = "incremental"
    description = "stream each call as it is written: header once named, then append-only argument fragments"

    def __init__(self, id_seed: str = "callscope") -> None:
        super().__init__(id_seed)
        self.wire: list[WireCall] = []

    # ------------------------------------------------------------ per step

    def on_step(self, step: int, ms: float | None, changes: StepChanges, terminal: bool) -> None:
        self.stream_text(step, ms, changes)
        for index in changes.revised:
            if index < len(self.wire):
                self._realign(step, self.wire[index])
        for index in changes.named:
            if index < len(self.wire):
                self._check_name(step, self.wire[index])
        for index, pieces in changes.appended.items():
            if index < len(self.wire):
                self._appended(self.wire[index], pieces)
        if changes.dropped_to is not None and changes.dropped_to < len(self.wire):
            self.violate(
                rules.CALLS_DROPPED,
                step,
                f"the parse now has {changes.dropped_to} call(s) but {len(self.wire)} were announced; withheld",
            )
        self._flush(step, ms)

    def quick_step(self, step: int, ms: float | None, event: ParseEvent | None) -> bool:
        """Nothing, or one more piece of an announced call that still extends what was sent: that piece goes out.

        Only when every call the parse holds is announced and nothing is pending (what :meth:`on_step`
        would leave after any step but one that dropped calls): then the long way sends exactly this.
        """
        wire = self.wire
        if len(wire) != len(self.view.calls) or self.content.pending or self.reasoning.pending:
            return False
        for call in wire:
            if call.pending:
                return False
        if event is None:
            return True
        if type(event) is not ArgumentsAppended or event.index >= len(wire):  # noqa: E721 - this class exactly
            return False
        call = wire[event.index]
        if not call.synced:
            return False
        event.apply(self.view)
        text = event.text
        if text:
            call.record(text)
            self.chunks.append(WireChunk(step, ms, ARGUMENTS, text, call.index))
        return True

    def _appended(self, call: WireCall, pieces: list[str]) -> None:
        if call.synced:
            call.pending.extend(pieces)
        elif call.behind:
            self._realign(None, call)

    def _realign(self, step: int | None, call: WireCall) -> None:
        """After a revision: resume if the parse still extends the wire, otherwise withhold."""
        view = self.view.calls[call.index]
        now = view.arguments()
        sent = call.sent_arguments()
        was_synced = call.synced
        call.synced = now.startswith(sent)
        call.behind = not call.synced and sent.startswith(now)
        call.pending = [now[len(sent) :]] if call.synced else []
        if was_synced and not call.synced and step is not None:
            how = "regressed" if call.behind else "diverged"
            self.violate(
                rules.ARGUMENTS_DIVERGED,
                step,
                f"arguments {how} from what was sent ({describe_difference(sent, now)}); withheld",
                call.index,
            )
        if step is not None:
            self._check_name(step, call)

    def _check_name(self, step: int, call: WireCall) -> None:
        name = self.view.calls[call.index].name
        if name is not None and name != call.name and name not in call.reported_names:
            call.reported_names.add(name)
            self.violate(
                rules.NAME_REVISED, step, f"name revised from {call.name!r} to {name!r} after the header went out; withheld",
                call.index,
            )

    def _flush(self, step: int, ms: float | None) -> None:
        calls = self.view.calls
        for call in self.wire:
            if call.pending and call.index < len(calls):
                text = "".join(call.pending)
                call.pending.clear()
                if text:
                    call.record(text)
                    self.chunks.append(WireChunk(step, ms, ARGUMENTS, text, call.index))
        for index in range(len(self.wire), len(calls)):
            view = calls[index]
            if view.name is None:
                break  # an unnamed call holds back itself and every later index
            call = WireCall(index, view.id or self.minter.mint(index), view.name)
            arguments = view.arguments()
            call.record(arguments)
            self.wire.append(call)
            self.chunks.append(WireChunk(step, ms, HEADER, arguments, index, call.id, call.name))

    # ------------------------------------------------------------ reconciliation

    def decide_finish(self, step: int, terminal: Parse, cause: str) -> str | None:
        if cause in UNFINISHED:
            return None
        complete = bool(terminal.calls) and len(terminal.calls) == len(self.wire)
        for call in self.wire:
            final = terminal.calls[call.index] if call.index < len(terminal.calls) else None
            if final is None:
                complete = False
                self.violate(rules.NOT_RECONSTRUCTED, step, "call missing from the terminal parse", call.index)
            elif final.name != call.name or final.arguments != call.sent_arguments():
                complete = False
                what = "name" if final.name != call.name else "arguments"
                detail = (
                    f"{what} on the wire differ from the terminal parse "
                    f"({describe_difference(call.sent_arguments(), final.arguments) if what == 'arguments' else repr(call.name) + ' vs ' + repr(final.name)})"
                )
                self.violate(rules.NOT_RECONSTRUCTED, step, detail, call.index)
        if len(terminal.calls) > len(self.wire):
            complete = False
            self.violate(
                rules.CALL_COUNT_MISMATCH,
                step,
                f"terminal parse has {len(terminal.calls)} call(s), the wire carried {len(self.wire)}",
            )
        return finish_reason_for(cause, complete)

    def wire_calls(self) -> list[tuple[int, str, str, str]]:
        """(index, id, name, streamed arguments) for every call the client saw."""
        return [(c.index, c.id, c.name, c.sent_arguments()) for c in self.wire]
