"""One proxied exchange (a *turn*): the client's request, the upstream's answer, and its one-line summary.

A streaming turn (the upstream answered ``text/event-stream``) is a capture:
its lines are stamped and recorded as a capture trace, and at its end it is
judged exactly as ``callscope capture`` judges a stream
(:func:`callscope.engine.capture.recording.analyze_capture_results`), so its
recording replays to the same report. Any other answer (a JSON completion, a
model list, an error page) is passed through and only listed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callscope.engine.analysis.analyzer import Analysis, headline_times
from callscope.engine.analysis.report import format_seconds, plural, ttfd_gain
from callscope.engine.capture.client import CaptureResult
from callscope.engine.capture.recording import analyze_capture_results
from callscope.engine.core.terminal import terminal_line
from callscope.engine.streams.protocols import protocol_for_path


@dataclass(slots=True)
class Turn:
    """One request through the proxy and what came back (the request's secrets are never held here)."""

    number: int
    method: str
    target: str  # the path (and query, redacted) the client asked for
    url: str  # the upstream URL it went to, redacted
    body: dict[str, Any] | None = None  # the request body when it is a JSON object (secrets masked)
    started: float = field(default_factory=time.monotonic)
    status: int | None = None
    content_type: str | None = None
    streaming: bool = False  # the answer is an event stream: recorded and judged
    record_path: Path | None = None
    result: CaptureResult | None = None  # the stream's stamped lines and how it ended (streaming turns)
    error: str | None = None  # why the exchange failed (upstream unreachable, client gone), one line
    ended_ms: float | None = None
    analyses: list[Analysis] = field(default_factory=list)  # every choice's verdict, once judged
    #: What a turn judged elsewhere (:class:`~.judge.ProcessJudge`) brought back instead of its analyses.
    judged_summary: str | None = None
    judged_index: dict[str, Any] | None = None
    report: dict[str, Any] | None = None

    @property
    def path(self) -> str:
        return self.target.partition("?")[0]

    @property
    def protocol(self) -> str | None:
        """The protocol the request's path names (``chat``, ``responses``, ``anthropic``), else None."""
        return protocol_for_path(self.path)

    @property
    def model(self) -> str | None:
        model = self.body.get("model") if self.body else None
        if isinstance(model, str) and model:
            return model
        if self.analyses and self.analyses[0].identity.model:
            return self.analyses[0].identity.model
        return None

    @property
    def done(self) -> bool:
        return self.ended_ms is not None

    def judge(self, atomic_silence_ms: float, clients: tuple[str, ...] | None) -> list[Analysis]:
        """The turn's verdicts, as ``callscope capture`` (and the replay of its recording) gives them."""
        if self.result is None:
            return []
        name = self.record_path.stem if self.record_path is not None else f"turn-{self.number}"
        self.analyses = analyze_capture_results(self.result, name, atomic_silence_ms, clients)
        return self.analyses

    def settle(self, summary: str, index: dict[str, Any], report: dict[str, Any] | None) -> None:
        """The verdict of a turn judged in another process: its line, its index record, its report."""
        self.judged_summary, self.judged_index, self.report = summary, index, report

    def summary(self) -> str:
        """One line: endpoint, model, calls, first delta against atomic, violations (or why it failed).

        The client chose the target and the model name, the server the error text: control characters
        in them are shown escaped, so they can neither forge a line nor reach the terminal.
        """
        if self.judged_summary is not None:
            return self.judged_summary
        return terminal_line(self._summary())

    def _summary(self) -> str:
        head = f"#{self.number} {self.method} {self.target}"
        if self.model:
            head += f" {self.model}"
        if not self.done:
            return f"{head}: in progress"
        if self.status is None:
            return f"{head}: {self.error or 'no answer'}"
        if not self.streaming:
            kind = self.content_type.split(";")[0].strip() if self.content_type else "no content type"
            return f"{head}: HTTP {self.status} {kind}, not streamed (passed through)" + self._failed()
        if not self.analyses:
            return f"{head}: HTTP {self.status} stream, not judged" + self._failed()
        analysis = self.analyses[0]
        protocol = analysis.source.extra.get("protocol") or self.protocol or "unknown"
        parts = [protocol, plural(len(analysis.calls), "call") if analysis.calls else "no tool call"]
        if analysis.calls:
            parts.append(first_delta_text(analysis))
        parts.append(plural(len(analysis.violations), "violation") + _rules(analysis))
        if len(self.analyses) > 1:
            parts.append(plural(len(self.analyses), "choice"))
        if self.record_path is not None:
            parts.append(self.record_path.name)
        return f"{head}: " + " · ".join(parts) + self._failed()

    def _failed(self) -> str:
        return f" · {self.error}" if self.error else ""

    def index_record(self) -> dict[str, Any]:
        """The turn as the session folder's index lists it (``turns.jsonl``): what, when, where recorded."""
        if self.judged_index is not None:
            return self.judged_index
        analysis = self.analyses[0] if self.analyses else None
        return {
            "turn": self.number,
            "method": self.method,
            "target": self.target,
            "url": self.url,
            "protocol": (analysis.source.extra.get("protocol") if analysis else None) or self.protocol,
            "model": self.model,
            "status": self.status,
            "content_type": self.content_type,
            "stream": self.streaming,
            "file": self.record_path.name if self.record_path is not None else None,
            "ms": round(self.ended_ms, 3) if self.ended_ms is not None else None,
            "calls": len(analysis.calls) if analysis else 0,
            "violations": sorted({v.rule for a in self.analyses for v in a.violations}),
            "error": self.error,
            "summary": self.summary(),
        }


def first_delta_text(analysis: Analysis) -> str:
    """``first delta 0.41 s vs 3.20 s atomic (7.8x sooner)``, or where it was when untimed."""
    times = headline_times(analysis)  # the badge's own two moments, so the line and the window agree
    s, a = times.first_delta, times.atomic
    if s.ms is None:
        return f"first delta at chunk {s.step}" if s.step is not None else "no delta"
    atomic = "never" if a.step is None else format_seconds(a.ms) if a.ms is not None else f"chunk {a.step}"
    text = f"first delta {format_seconds(s.ms)} vs {atomic} atomic"
    gain = ttfd_gain(analysis)
    return text + (f" ({gain})" if gain else "")


def _rules(analysis: Analysis) -> str:
    rules = sorted({v.rule for v in analysis.violations})
    if not rules:
        return ""
    shown = ", ".join(rules[:4]) + (", …" if len(rules) > 4 else "")
    return f" ({shown})"
