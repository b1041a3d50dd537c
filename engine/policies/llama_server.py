"""llama.cpp server's streaming semantics, reproduced to show where they break.

The server diffs each new partial message against the previous one
(``common_chat_msg_diff::compute_diffs``): content and the *last* previous
tool call must extend what they were, or the diff throws ("Invalid diff") and
the stream ends with an error; a changed id re-sends ``id`` and ``name``; new
calls go out whole, named or not; ``finish_reason`` comes from the terminal
message alone, whatever went out on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass

from callscope.engine.core import rules
from callscope.engine.core.parse_model import Parse, StepChanges
from callscope.engine.core.wire import ARGUMENTS, HEADER, WireChunk, describe_difference
from callscope.engine.policies.base import SentCall, StreamingPolicy, finish_reason_for


@dataclass(slots=True)
class ServerCall(SentCall):
    prev_arguments_length: int = 0  # length of the previous message's arguments (what it diffs against)


class LlamaServerPolicy(StreamingPolicy):
    policy_id = "llama_server"
    description = "llama.cpp server: every diff must extend the previous message, else the stream errors out"

    def __init__(self, id_seed: str = "callscope") -> None:
        super().__init__(id_seed)
        self.wire: list[ServerCall] = []
        self._minted: dict[int, str] = {}

    def _id_for(self, index: int, parser_id: str | None) -> str:
        if parser_id:
            return parser_id
        return self._minted.setdefault(index, self.minter.mint(index))

    def _invalid(self, step: int, detail: str, index: int | None = None) -> None:
        self.violate(rules.INVALID_DIFF, step, f"Invalid diff: {detail}; the server ends the stream", index)
        self.ended = True

    def on_step(self, step: int, ms: float | None, changes: StepChanges, terminal: bool) -> None:
        if changes.content_revised:
            for channel, now, label in (
                (self.content, self.view.content(), "content"),
                (self.reasoning, self.view.reasoning(), "reasoning"),
            ):
                sent = channel.sent_text()
                if not now.startswith(sent):
                    self._invalid(step, f"{label} {describe_difference(sent, now)}")
                    return
        self.stream_text(step, ms, changes)
        calls = self.view.calls
        if len(calls) < len(self.wire):
            self._invalid(step, "now finding less tool calls!")
            return
        if self.wire:
            last = self.wire[-1]
            view = calls[last.index]
            touched = last.index in changes.revised or last.index in changes.named or last.index in changes.appended
            if touched:
                if (view.name or "") != last.name:
                    self._invalid(step, f"tool call mismatch! ({last.name!r} vs {view.name!r})", last.index)
                    return
                now = view.arguments()
                sent = last.sent_arguments()
                if not now.startswith(sent):
                    self._invalid(step, f"arguments {describe_difference(sent, now)}", last.index)
                    return
                suffix = now[len(sent) :]
                new_id = self._id_for(last.index, view.id)
                if new_id != last.id:
                    last.id = new_id
                    last.record(suffix)
                    self.chunks.append(WireChunk(step, ms, HEADER, suffix, last.index, new_id, last.name))
                elif suffix:
                    last.record(suffix)
                    self.chunks.append(WireChunk(step, ms, ARGUMENTS, suffix, last.index))
        for index in range(len(self.wire), len(calls)):
            view = calls[index]
            call = ServerCall(index, self._id_for(index, view.id), view.name or "")
            arguments = view.arguments()
            call.record(arguments)
            self.wire.append(call)
            self.chunks.append(WireChunk(step, ms, HEADER, arguments, index, call.id, call.name))

    def decide_finish(self, step: int, terminal: Parse, cause: str) -> str | None:
        return finish_reason_for(cause, bool(terminal.calls))

    def wire_calls(self) -> list[tuple[int, str, str, str]]:
        return [(c.index, c.id, c.name, c.sent_arguments()) for c in self.wire]
