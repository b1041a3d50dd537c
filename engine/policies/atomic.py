"""The old behaviour, kept as the baseline: tool calls only once generation is over.

Content streams as usual; every tool call is withheld until the terminal parse
and then sent whole, one delta per call. A stream cut before the end (cancelled,
an error) never reaches that point, so its baseline sends no call at all. This is what produced "29 s of silence,
then 700 tokens at once".
"""

from __future__ import annotations

from callscope.engine.core import rules
from callscope.engine.core.causes import UNFINISHED
from callscope.engine.core.parse_model import ArgumentsAppended, Parse, ParseEvent, StepChanges
from callscope.engine.core.wire import HEADER, WireChunk
from callscope.engine.policies.base import StreamingPolicy, finish_reason_for


class AtomicPolicy(StreamingPolicy):
    policy_id = "atomic"
    description = "baseline: content streams, tool calls are sent whole after the terminal parse"

    def __init__(self, id_seed: str = "callscope") -> None:
        super().__init__(id_seed)
        self.delivered: list[tuple[int, str, str, str]] = []

    def on_step(self, step: int, ms: float | None, changes: StepChanges, terminal: bool) -> None:
        self.stream_text(step, ms, changes)

    def quick_step(self, step: int, ms: float | None, event: ParseEvent | None) -> bool:
        """A step that only grew a call's arguments (or did nothing) sends nothing: calls wait for the end."""
        if event is None:
            return not self.content.pending and not self.reasoning.pending
        if type(event) is ArgumentsAppended:  # noqa: E721 - this class exactly
            event.apply(self.view)
            return True
        return False

    def decide_finish(self, step: int, terminal: Parse, cause: str) -> str | None:
        if cause in UNFINISHED:  # a cut stream never reaches the end of generation: nothing is sent
            return finish_reason_for(cause, False)
        ms = self.finish_ms
        for index, call in enumerate(terminal.calls):
            if call.name is None:
                self.violate(rules.UNNAMED_CALL, step, "terminal parse has a call without a name; not sent", index)
                continue
            call_id = call.id or self.minter.mint(index)
            self.delivered.append((index, call_id, call.name, call.arguments))
            self.chunks.append(WireChunk(step, ms, HEADER, call.arguments, index, call_id, call.name))
        return finish_reason_for(cause, bool(self.delivered))

    def wire_calls(self) -> list[tuple[int, str, str, str]]:
        return list(self.delivered)
