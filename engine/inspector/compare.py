"""Two analyses of the same source (two policies, or two parsers) aligned by step, and what to compare against.

A row per step at which either side emitted something; a row *differs* when
the two sides sent different chunks at that step (kind, index or payload),
and the running totals of argument characters show who is ahead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.analysis.report import plural
from callscope.engine.core.wire import WireChunk
from callscope.engine.formats import FORMAT_IDS
from callscope.engine.inspector.reconcile import finish_badge
from callscope.engine.inspector.sources import carries_text
from callscope.engine.inspector.ttfd import argument_chars, ttfd_label
from callscope.engine.policies import POLICY_IDS


@dataclass(slots=True)
class CompareRow:
    step: int
    ms: float | None
    left: list[WireChunk] = field(default_factory=list)
    right: list[WireChunk] = field(default_factory=list)
    left_chars: int = 0  # characters of arguments delivered so far
    right_chars: int = 0

    @property
    def differs(self) -> bool:
        return [_key(c) for c in self.left] != [_key(c) for c in self.right]


def _key(chunk: WireChunk) -> tuple:
    # ids are minted per policy: compare what the client would reconstruct, not the id string
    return (chunk.kind, chunk.index, chunk.text, chunk.name, chunk.finish_reason)


def summarize(chunks: list[WireChunk]) -> str:
    """``header[0] get_weather, +3 args`` style cell text."""
    parts = []
    args = 0
    for c in chunks:
        if c.kind == "arguments":
            args += 1
            continue
        if c.kind == "header":
            parts.append(f"header[{c.index}] {c.name}")
        elif c.kind == "finish":
            parts.append(f"finish {c.finish_reason}")
        elif c.kind in ("content", "reasoning"):
            parts.append(f"{c.kind} {c.text[:24]!r}")
        else:
            parts.append(c.kind)
    if args:
        parts.append(f"+{args} arg{'s' if args > 1 else ''}")
    return ", ".join(parts)


POLICY = "policy"
FORMAT = "format"


@dataclass(frozen=True, slots=True)
class CompareTarget:
    """What the right-hand side is: the same source under another policy, or through another parser."""

    kind: str  # policy | format
    id: str

    @property
    def label(self) -> str:
        return f"{self.kind}: {self.id}"


def compare_targets(analysis: Analysis) -> list[CompareTarget]:
    """The compare pane's "against" choices: every policy; every other wire format when the steps hold text.

    A byte-prefix fixture carries parses and a capture carries a server's
    chunks: no other parser can read them, so they offer policies only.
    """
    targets = [CompareTarget(POLICY, p) for p in POLICY_IDS]
    if carries_text(analysis):
        targets += [CompareTarget(FORMAT, f) for f in FORMAT_IDS if f != analysis.source.format]
    return targets


def target_from_label(label: str) -> CompareTarget | None:
    """The inverse of :attr:`CompareTarget.label` (a bare id is a policy, as the picker once held)."""
    kind, sep, ident = label.partition(": ")
    if not sep:
        return CompareTarget(POLICY, label) if label in POLICY_IDS else None
    return CompareTarget(kind, ident) if kind in (POLICY, FORMAT) and ident else None


def side_title(analysis: Analysis, other: Analysis) -> str:
    """``atomic`` when the sides differ by policy; ``qwen3_coder · incremental`` when by parser."""
    if analysis.source.format != other.source.format:
        return f"{analysis.source.format or '-'} · {analysis.source.policy}"
    return analysis.source.policy


@dataclass(slots=True)
class Comparison:
    left: Analysis
    right: Analysis
    rows: list[CompareRow]

    @property
    def differing(self) -> int:
        return sum(1 for r in self.rows if r.differs)

    def title(self, side: str) -> str:
        return side_title(self.left, self.right) if side == "left" else side_title(self.right, self.left)

    def column_title(self, side: str) -> str:
        """The table header: only what tells the sides apart (the format, or the policy), so columns stay narrow."""
        analysis = self.left if side == "left" else self.right
        if self.left.source.format != self.right.source.format:
            return analysis.source.format or "-"
        return analysis.source.policy

    def side_summary(self, side: str) -> str:
        analysis = self.left if side == "left" else self.right
        return (
            f"{self.title(side)}: {plural(len(analysis.chunks), 'chunk')}, "
            f"{finish_badge(analysis.finish_reason, analysis.finish_cause, analysis.violations)}, "
            f"{plural(len(analysis.violations), 'violation')}; {ttfd_label(analysis)}"
        )


def compare(left: Analysis, right: Analysis) -> Comparison:
    by_step: dict[int, CompareRow] = {}
    for side, analysis in (("left", left), ("right", right)):
        for chunk in analysis.chunks:
            row = by_step.get(chunk.step)
            if row is None:
                row = by_step[chunk.step] = CompareRow(chunk.step, chunk.ms)
            (row.left if side == "left" else row.right).append(chunk)
    rows = [by_step[s] for s in sorted(by_step)]
    left_total = right_total = 0
    for row in rows:
        left_total += sum(argument_chars(c) for c in row.left if c.is_tool_call)
        right_total += sum(argument_chars(c) for c in row.right if c.is_tool_call)
        row.left_chars, row.right_chars = left_total, right_total
    return Comparison(left, right, rows)
