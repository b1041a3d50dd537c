"""The reconciliation pane's data: per call, did the wire reconstruct the terminal parse, and where not.

A character diff is computed between what was streamed and the terminal
arguments. Long strings are trimmed to their differing middle first (common
prefix and suffix are kept as one ``equal`` piece each), so a 400 KB call that
differs in one character diffs instantly.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.analysis.report import describe_finish, end_detail
from callscope.engine.core import rules
from callscope.engine.core.causes import UNFINISHED
from callscope.engine.core.wire import Violation
from callscope.engine.inspector.held import HeldText

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


def calls_verdict(reconstructs: list[bool]) -> str:
    """``1 call · reconstructs``, ``3 calls · all reconstruct``, ``3 calls · 1 does not reconstruct``."""
    n, bad = len(reconstructs), sum(1 for ok in reconstructs if not ok)
    if not n:
        return "no calls"
    calls = f"{n} call{'s' if n != 1 else ''}"
    if not bad:
        return f"{calls} · {'reconstructs' if n == 1 else 'all reconstruct'}"
    if n == 1:
        return f"{calls} · does not reconstruct"
    return f"{calls} · {bad} {'does' if bad == 1 else 'do'} not reconstruct"


class _Judged(Protocol):
    reconstructs: bool
    cut: bool


def calls_badge(calls: Sequence[_Judged]) -> tuple[str, str]:
    """The calls badge and its tone (``ok``, ``warn``, ``bad``, ``neutral``).

    A call cut part-way (:attr:`~callscope.engine.analysis.analyzer.CallReport.cut`) is never
    a green "reconstructs": the client holds what the server parsed, half a call.
    """
    if not calls:
        return "no calls", "neutral"
    bad = sum(1 for c in calls if not c.reconstructs)
    if bad:
        return calls_verdict([c.reconstructs for c in calls]), "bad"
    cut = sum(1 for c in calls if c.cut)
    if cut:
        n = len(calls)
        return ("1 call · cut mid-call" if n == 1 else f"{n} calls · {cut} cut mid-call"), "warn"
    return calls_verdict([True] * len(calls)), "ok"


def finish_badge(finish_reason: str | None, finish_cause: str, violations: list[Violation]) -> str:
    """``finish_reason tool_calls``, or why none was sent: ``no finish_reason (stream ended: invalid-diff)``.

    The short form of :func:`callscope.engine.analysis.report.describe_finish` (which the badge's tooltip shows whole).
    """
    if finish_reason is not None:
        return f"finish_reason {finish_reason}"
    enders = [v.rule for v in violations if v.rule in rules.STREAM_ENDERS]
    if enders:
        return f"no finish_reason (stream ended: {enders[0]})"
    if finish_cause in UNFINISHED:
        return f"no finish_reason (generation {finish_cause})"
    return "no finish_reason (no finish chunk sent)"


@dataclass(frozen=True, slots=True)
class ClientAssembly:
    """What one client profile ended with for a call (a capture's ``CallReport.clients``), for the pane."""

    profile: str
    matches: bool
    id: str | None = None
    name: str | None = None
    arguments: str | None = None
    error: str | None = None  # the exception it raised, if it did
    invalid: bool = False  # the library flagged the call unusable (LangChain's invalid_tool_calls, the AI SDK)

    @property
    def outcome(self) -> str:
        """``assembled it right``, ``raised TypeError: ...``, ``flagged it invalid`` or ``assembled another call``."""
        if self.error:
            return f"raised {self.error}"
        if self.matches:
            return "assembled it right"
        if self.id is None and self.name is None and self.arguments is None:
            return "ended without this call"
        return "flagged it invalid" if self.invalid else "assembled another call"


def client_assemblies(clients: list[dict]) -> list[ClientAssembly]:
    """The report's per-profile dicts as rows (unknown keys ignored: the report may grow)."""
    rows = []
    for c in clients:
        if not isinstance(c, dict):
            continue
        rows.append(ClientAssembly(str(c.get("profile", "?")), bool(c.get("matches")), c.get("id"), c.get("name"),
                                   c.get("arguments"), c.get("error"), bool(c.get("invalid"))))
    return rows


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
    unit: str = "step"  # what first_delta_step counts (token, byte, char)
    #: What each client profile assembled (a capture judged by real clients; empty otherwise).
    clients: list[ClientAssembly] = field(default_factory=list)
    #: The stream ended while this call was being written (:attr:`~callscope.engine.analysis.analyzer.CallReport.cut`).
    cut: bool = False

    @property
    def clients_summary(self) -> str:
        """``openai-python ✓ · naive ✗`` for two clients; for more, the count that got it right and the others
        (``4/6 ✓ · openai-node ✗ · ai-sdk raises``); empty when no client judged the call."""
        if len(self.clients) <= 2:
            return " · ".join(f"{c.profile} {'✓' if c.matches else '✗'}" for c in self.clients)
        right = sum(c.matches for c in self.clients)
        others = [f"{c.profile} {'raises' if c.error else '✗'}" for c in self.clients if not c.matches]
        return " · ".join([f"{right}/{len(self.clients)} ✓", *others])

    @property
    def verdict(self) -> str:
        if self.final is None:
            return "missing from the terminal parse"
        if not self.id:
            return "never sent"
        if not self.reconstructs:
            return "does not reconstruct"
        return "cut mid-call (both sides hold the same half)" if self.cut else "reconstructs"


@dataclass(slots=True)
class Reconciliation:
    calls: list[CallVerdict]
    finish_reason: str | None
    finish_cause: str
    violations: list[Violation]
    content_streamed: str
    content_final: str
    #: why generation ended, in the source's words (a trace's end detail, a capture's error), or None
    end_detail: str | None = None
    #: :func:`callscope.engine.analysis.report.describe_finish`: ``tool_calls (generation ended: error: connection lost)``
    finish_sentence: str = ""
    #: text the parser still held back when a cut stream ended (never sent), with why
    held: HeldText | None = None

    @property
    def cut(self) -> bool:
        """The stream was cancelled or failed: there is no verdict to pass, whatever was sent."""
        return self.finish_cause in UNFINISHED

    @property
    def ok(self) -> bool:
        return all(c.reconstructs for c in self.calls) and not self.violations and not self.cut

    @property
    def held_sentence(self) -> str:
        """``never sent: 27 characters held back ('[TOOL_CALLS][{"name": "get_')``, or empty."""
        if self.held is None or not self.held.text:
            return ""
        n = len(self.held.text)
        return f"never sent: {n:,} character{'s' if n != 1 else ''} held back ({self.held.shown!r})"

    @property
    def headline(self) -> str:
        return (
            f"{finish_badge(self.finish_reason, self.finish_cause, self.violations)} · "
            f"{calls_badge(self.calls)[0]} · "
            f"{len(self.violations)} violation{'s' if len(self.violations) != 1 else ''}"
        )


def reconcile(analysis: Analysis, held: HeldText | None = None) -> Reconciliation:
    """The verdict per call; ``held``: what the parser held at the end (a cut stream's unsent tail)."""
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
                analysis.unit,
                client_assemblies(call.clients),
                call.cut,
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
        end_detail(analysis),
        describe_finish(analysis),
        held if analysis.finish_cause in UNFINISHED else None,
    )
