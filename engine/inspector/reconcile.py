"""The reconciliation pane's data: per call, did the wire reconstruct the terminal parse, and where not.

A character diff is computed between what was streamed and the terminal
arguments. Long strings are trimmed to their differing middle first (common
prefix and suffix are kept as one ``equal`` piece each), so a 400 KB call that
differs in one character diffs instantly.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from engine.analysis import Analysis
from engine.wire import Violation

EQUAL = "equal"
STREAMED = "streamed"  # only on the wire
FINAL = "final"  # only in the terminal parse

#: Above this many differing middle characters, skip difflib and show one replace.
DIFF_LIMIT = 4000


@dataclass(frozen=True, slots=True)
class DiffPiece:
    tag: str  # equal | streamed | final
    text: str


def char_diff(streamed: str, final: str) -> list[DiffPiece]:
    """Pieces that read as ``streamed`` with ``final``-only text inserted and ``streamed``-only text struck."""
    if streamed == final:
        return [DiffPiece(EQUAL, streamed)] if streamed else []
    head = 0
    limit = min(len(streamed), len(final))
    while head < limit and streamed[head] == final[head]:
        head += 1
    tail = 0
    while tail < limit - head and streamed[-1 - tail] == final[-1 - tail]:
        tail += 1
    a = streamed[head : len(streamed) - tail]
    b = final[head : len(final) - tail]
    pieces: list[DiffPiece] = []
    if head:
        pieces.append(DiffPiece(EQUAL, streamed[:head]))
    if len(a) + len(b) > DIFF_LIMIT:
        pieces += [DiffPiece(STREAMED, a)] if a else []
        pieces += [DiffPiece(FINAL, b)] if b else []
    else:
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                pieces.append(DiffPiece(EQUAL, a[i1:i2]))
                continue
            if i2 > i1:
                pieces.append(DiffPiece(STREAMED, a[i1:i2]))
            if j2 > j1:
                pieces.append(DiffPiece(FINAL, b[j1:j2]))
    if tail:
        pieces.append(DiffPiece(EQUAL, streamed[len(streamed) - tail :]))
    return pieces


@dataclass(slots=True)
class CallVerdict:
    index: int
    id: str
    name: str
    final_name: str | None
    reconstructs: bool
    streamed: str
    final: str | None
    first_delta_step: int | None
    diff: list[DiffPiece] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        if self.final is None:
            return "missing from the terminal parse"
        if not self.id:
            return "never sent"
        return "reconstructs" if self.reconstructs else "does not reconstruct"


@dataclass(slots=True)
class Reconciliation:
    calls: list[CallVerdict]
    finish_reason: str | None
    finish_cause: str
    violations: list[Violation]
    content_streamed: str
    content_final: str

    @property
    def ok(self) -> bool:
        return all(c.reconstructs for c in self.calls) and not self.violations

    @property
    def headline(self) -> str:
        bad = sum(1 for c in self.calls if not c.reconstructs)
        calls = f"{len(self.calls)} call{'s' if len(self.calls) != 1 else ''}"
        verdict = "all reconstruct" if self.calls and not bad else (f"{bad} do not reconstruct" if bad else "no calls")
        return (
            f"finish_reason {self.finish_reason or 'null'} · {calls}, {verdict} · "
            f"{len(self.violations)} violation{'s' if len(self.violations) != 1 else ''}"
        )


def reconcile(analysis: Analysis) -> Reconciliation:
    verdicts: list[CallVerdict] = []
    for call in analysis.calls:
        final_name = analysis.terminal.calls[call.index].name if call.index < len(analysis.terminal.calls) else None
        verdicts.append(
            CallVerdict(
                call.index,
                call.id,
                call.name,
                final_name,
                call.reconstructs,
                call.streamed_arguments,
                call.final_arguments,
                call.first_delta.step,
                char_diff(call.streamed_arguments, call.final_arguments or ""),
            )
        )
    sent = {c.index for c in analysis.calls}
    for index, final in enumerate(analysis.terminal.calls):
        if index not in sent:  # in the terminal parse, never on the wire
            verdicts.append(
                CallVerdict(index, "", final.name or "", final.name, False, "", final.arguments, None,
                            char_diff("", final.arguments))
            )
    verdicts.sort(key=lambda v: v.index)
    return Reconciliation(
        verdicts,
        analysis.finish_reason,
        analysis.finish_cause,
        list(analysis.violations),
        analysis.content_streamed,
        analysis.terminal.content,
    )
