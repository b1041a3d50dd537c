"""The parse diff of one step: what it added, what went out on the wire, and what was withheld and why.

A debugger's "what did this line do": for the step at the cursor, the parse
events it produced (content or arguments appended, a call opened or named, a
revision), the chunks the policy sent for it, and everything the client does
*not* have although the parser has it, each with its reason:

* a call whose arguments no longer extend what was sent (append-only broken:
  withheld until they do again);
* a call whose name is not complete (its header waits), and every later call
  held back behind it (indexes go out in order);
* the atomic baseline holding every call until the terminal parse;
* a stream the llama.cpp server semantics ended (``invalid-diff``);
* text the parser holds back (a half-typed marker, a value it must see whole).

Computed from the analysis alone (the parse at the step against what the wire
carried by then), so it is the same whatever pane asks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from callscope.engine.core import rules
from callscope.engine.core.parse_model import Parse
from callscope.engine.core.wire import (
    ARGUMENTS,
    CONTENT,
    FINISH,
    HEADER,
    REASONING,
    Violation,
    WireChunk,
    describe_difference,
)
from callscope.engine.inspector.held import HeldText
from callscope.engine.inspector.parse_cursor import StepDelta

#: Excerpts of added text are cut to this many characters (the parse pane shows the whole field).
EXCERPT = 60


@dataclass(frozen=True, slots=True)
class Withheld:
    """Something the parser has that the client does not: ``what`` (``call 1``, ``text``) and ``why``."""

    what: str
    why: str


@dataclass(slots=True)
class StepDiff:
    step: int
    added: list[str] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    withheld: list[Withheld] = field(default_factory=list)

    @property
    def quiet(self) -> bool:
        """Nothing happened at this step (no event, no chunk, nothing held)."""
        return not (self.added or self.sent or self.withheld)


def _excerpt(text: str) -> str:
    return repr(text if len(text) <= EXCERPT else text[: EXCERPT - 1] + "…")


def _added(delta: StepDelta, parse: Parse) -> list[str]:
    lines = []
    if delta.failures:
        lines.append(f"the parser threw: {delta.failures[0]}")
    if delta.content_revised:
        lines.append("content revised (no longer an extension of what it was)")
    if delta.reasoning:
        lines.append(f"reasoning += {_excerpt(delta.reasoning)}")
    if delta.content:
        lines.append(f"content += {_excerpt(delta.content)}")
    for index in sorted(delta.opened):
        lines.append(f"call {index} opened")
    for index in sorted(delta.named):
        name = parse.calls[index].name if index < len(parse.calls) else None
        lines.append(f"call {index} named {name}")
    for index, text in sorted(delta.arguments.items()):
        lines.append(f"call {index} arguments += {_excerpt(text)}")
    for index in sorted(delta.revised):
        lines.append(f"call {index} revised (its arguments were rewritten)")
    if delta.dropped_to is not None:
        lines.append(f"calls dropped to {delta.dropped_to}")
    return lines


def _sent(chunks: list[WireChunk]) -> list[str]:
    lines = []
    fragments: dict[int | None, list[int]] = {}
    for chunk in chunks:
        if chunk.kind == HEADER:
            lines.append(f"header[{chunk.index}] {chunk.name} ({len(chunk.text):,} chars of arguments)")
        elif chunk.kind == ARGUMENTS:
            fragments.setdefault(chunk.index, []).append(len(chunk.text))
        elif chunk.kind in (CONTENT, REASONING):
            lines.append(f"{chunk.kind} {_excerpt(chunk.text)}")
        elif chunk.kind == FINISH:
            lines.append(f"finish_reason {chunk.finish_reason}" if chunk.finish_reason else "no finish_reason")
    for index, sizes in fragments.items():
        lines.append(f"arguments[{index}]: {len(sizes)} fragment{'s' if len(sizes) != 1 else ''}, {sum(sizes):,} chars")
    return lines


def _withheld_calls(parse: Parse, wire: dict[int, tuple[str, str]], policy: str, final: bool,
                    ended: Violation | None) -> list[Withheld]:
    out = []
    unnamed: int | None = None
    for index, call in enumerate(parse.calls):
        sent = wire.get(index)
        what = f"call {index}" + (f" {call.name}" if call.name else "")
        if sent is None:
            if ended is not None:
                out.append(Withheld(what, f"not sent: the stream ended at {ended.rule} ({ended.detail})"))
            elif policy == "atomic":
                if not final:
                    out.append(Withheld(what, "the atomic baseline sends each call whole after the terminal parse"))
            elif call.name is None:
                unnamed = index if unnamed is None else unnamed
                later = len(parse.calls) - index - 1
                tail = f" and holds back {later} later call{'s' if later != 1 else ''}" if later else ""
                out.append(Withheld(what, f"its name is not complete: the header waits for it{tail}"))
            elif unnamed is not None:
                out.append(Withheld(what, f"held back behind call {unnamed}, which has no name yet (indexes go out in order)"))
            continue
        name, arguments = sent
        if call.name is not None and call.name != name:
            out.append(Withheld(what, f"name revised from {name!r} after its header went out: withheld"))
        if not call.arguments.startswith(arguments):
            how = "regressed" if arguments.startswith(call.arguments) else "diverged"
            out.append(Withheld(what, f"arguments {how}: they no longer extend what was sent "
                                      f"({describe_difference(arguments, call.arguments)}); withheld (append-only)"))
        elif len(call.arguments) > len(arguments) and (ended is not None or final):
            why = f"the stream ended at {ended.rule}" if ended is not None else "not sent before the finish"
            out.append(Withheld(what, f"{len(call.arguments) - len(arguments):,} chars of arguments not sent: {why}"))
    return out


def step_diff(
    step: int,
    delta: StepDelta,
    parse: Parse,
    chunks: list[WireChunk],
    wire: dict[int, tuple[str, str]],
    violations: list[Violation],
    policy: str,
    final: bool,
    held: HeldText | None,
) -> StepDiff:
    """The diff of ``step``: ``chunks`` went out at it; ``wire`` is (name, arguments) per call sent by then;
    ``violations`` are the stream's (those raised at this step are quoted); ``final``: the terminal parse."""
    diff = StepDiff(step, _added(delta, parse), _sent(chunks))
    ended = next((v for v in violations if v.rule in rules.STREAM_ENDERS and v.step is not None and v.step <= step), None)
    diff.withheld.extend(_withheld_calls(parse, wire, policy, final, ended))
    for violation in violations:
        if violation.step == step and violation.rule in (rules.CONTENT_DIVERGED, rules.REASONING_DIVERGED,
                                                         rules.CALLS_DROPPED):
            diff.withheld.append(Withheld(violation.rule, violation.detail))
    if held is not None and held.text:
        diff.withheld.append(Withheld(f"text {held.shown!r}", held.reason))
    return diff
