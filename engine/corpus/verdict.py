"""The verdict of one recording: a pure function of one file, and the small record it returns.

:func:`check_recording` reads a file with the reader ``callscope replay`` uses
(:func:`~callscope.engine.recordings.replay.load_recording`: any kind it reads), analyses every
stream in it with the engine's public entry point (so client profiles and rules are whatever
the engine judges with today), and keeps only what a corpus needs: counts, rules, TTFD, who
served it. The full :class:`~callscope.engine.analysis.analyzer.Analysis` stays behind: a
:class:`RecordingVerdict` is a few hundred bytes, cheap to send from a worker process or a Ray
task, and its :meth:`~RecordingVerdict.to_json` is one line of ``callscope check --jsonl``.

It never raises for a bad recording: whatever goes wrong (an unreadable file, a parser bug)
becomes the verdict's one-line ``error``, so one file never stops a run of ten million.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any
from urllib.parse import urlsplit

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.core import rules
from callscope.engine.recordings.replay import Recording, analyze_recording, load_recording
from callscope.engine.recordings.trace import TraceError
from callscope.engine.templates.trace_format import trace_format

#: Rules a client profile raises; their detail starts with the profile's name.
CLIENT_RULES = frozenset({rules.CLIENT_ERROR, rules.CLIENT_MISMATCH})
#: The model a generated stream names when no server did (:meth:`StreamIdentity.for_run`): not a model.
_NO_MODEL = {"", "callscope"}
#: ``path:12: why`` -> ``line 12: why`` once the path is shown beside it.
_LINE_PREFIX = re.compile(r"^:(\d+): ")


@dataclass(slots=True)
class RunVerdict:
    """One stream of a recording (a trace holds one; a fixture file or a HAR file may hold several)."""

    name: str
    calls: int
    steps: int
    #: rule id -> how many times the stream broke it
    violations: dict[str, int]
    #: the first violation, as one line (what a table shows beside the counts)
    first: str | None
    finish: str
    timed: bool
    ttfd_ms: float | None
    ttfd_atomic_ms: float | None
    ttfd_step: int | None
    ttfd_atomic_step: int | None
    #: the client profiles the stream was judged with -> violations each raised (0: it assembled the stream)
    clients: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "calls": self.calls, "steps": self.steps, "violations": self.violations,
            "first_violation": self.first, "finish": self.finish, "timed": self.timed,
            "ttfd": {"incremental": {"ms": self.ttfd_ms, "step": self.ttfd_step},
                     "atomic": {"ms": self.ttfd_atomic_ms, "step": self.ttfd_atomic_step}},
            "clients": self.clients,
        }


@dataclass(slots=True)
class RecordingVerdict:
    """What ``callscope check`` keeps of one file: its runs' verdicts, or why it could not be read."""

    path: str
    kind: str | None = None  # trace | fixture | sse | har | mitmproxy (callscope.engine.recordings.replay)
    #: the model that answered: named by the server's stream, the request, or the trace's model file;
    #: for text traces without one, their wire format (``hermes format``)
    model: str | None = None
    server: str | None = None  # host:port of the recorded URL; None for text and fixtures
    runs: list[RunVerdict] = field(default_factory=list)
    error: str | None = None  # one line: why the file could not be read or analysed
    cpu_ms: float = 0.0  # CPU time the read and the analysis took, in this process

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.runs)

    @property
    def violation_count(self) -> int:
        return sum(sum(r.violations.values()) for r in self.runs)

    def rules(self) -> Counter[str]:
        found: Counter[str] = Counter()
        for run in self.runs:
            found.update(run.violations)
        return found

    def clients(self) -> dict[str, int]:
        """Client profile -> violations it raised over every run (profiles that judged nothing are absent)."""
        found: dict[str, int] = {}
        for run in self.runs:
            for profile, count in run.clients.items():
                found[profile] = found.get(profile, 0) + count
        return found

    def first_violation(self) -> str | None:
        return next((r.first for r in self.runs if r.first), None)

    def to_json(self) -> dict[str, Any]:
        """One line of ``callscope check --jsonl``."""
        out: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.error is not None:
            out["error"] = self.error
            return out
        out.update(model=self.model, server=self.server, calls=self.calls, violations=dict(self.rules()),
                   runs=[r.to_json() for r in self.runs], cpu_ms=round(self.cpu_ms, 3))
        return out


# ------------------------------------------------------------------ the function


def check_recording(path: str, policy: str = "incremental") -> RecordingVerdict:
    """Read ``path`` and judge every stream in it; never raises for what the file holds."""
    path = str(path)
    started = time.process_time()
    try:
        recording = load_recording(path)
        verdict = RecordingVerdict(path, recording.kind)
        format_id, _why = trace_format(recording, None)  # a derived format is derived again, as replay does
        analyses = analyze_recording(recording, policy, format_id)
        verdict.runs = [run_verdict(a) for a in analyses]
        verdict.model, verdict.server = served_by(recording, analyses)
    except TraceError as exc:  # FixtureError is one too: the reader's own one-line reason
        verdict = RecordingVerdict(path, None, error=reason(path, str(exc)))
    except RecursionError:
        verdict = RecordingVerdict(path, None, error="nested too deeply to analyse")
    except Exception as exc:  # noqa: BLE001 - a parser bug is this file's verdict, never the end of the run
        verdict = RecordingVerdict(path, None, error=f"analysis failed: {type(exc).__name__}: {one_line(str(exc))}")
    verdict.cpu_ms = (time.process_time() - started) * 1000
    return verdict


def check_batch(paths: list[str], policy: str = "incremental") -> list[RecordingVerdict]:
    """:func:`check_recording` over a batch (what one pool or Ray task runs: one round trip per batch)."""
    return [check_recording(p, policy) for p in paths]


def run_verdict(analysis: Analysis) -> RunVerdict:
    found: Counter[str] = Counter(v.rule for v in analysis.violations)
    first = analysis.violations[0] if analysis.violations else None
    return RunVerdict(
        name=analysis.name,
        calls=len(analysis.calls),
        steps=analysis.step_count,
        violations=dict(found),
        first=f"{first.rule}: {one_line(first.detail)}" if first is not None else None,
        finish=analysis.finish_reason or analysis.finish_cause,
        timed=analysis.timed,
        ttfd_ms=analysis.ttfd_streaming.ms,
        ttfd_atomic_ms=analysis.ttfd_atomic.ms,
        ttfd_step=analysis.ttfd_streaming.step,
        ttfd_atomic_step=analysis.ttfd_atomic.step,
        clients=client_violations(analysis),
    )


def client_violations(analysis: Analysis) -> dict[str, int]:
    """Each client profile the stream was judged with -> how many violations it raised."""
    profiles = analysis.source.extra.get("clients")
    if not isinstance(profiles, list):
        return {}
    counts = {p: 0 for p in profiles if isinstance(p, str)}
    for v in analysis.violations:
        if v.rule in CLIENT_RULES:
            profile = v.detail.partition(" ")[0]
            if profile in counts:
                counts[profile] += 1
    return counts


def served_by(recording: Recording, analyses: list[Analysis]) -> tuple[str | None, str | None]:
    """(model, server) of a recording: who answered, as far as the file says."""
    trace = recording.trace if recording.trace is not None else (recording.captures[0][1] if recording.captures else None)
    model: str | None = None
    for analysis in analyses:
        if analysis.source.kind == "capture" and analysis.identity.model not in _NO_MODEL:
            model = analysis.identity.model
            break
    if model is None and trace is not None:
        request = trace.header.extra.get("request")
        asked = request.get("model") if isinstance(request, dict) else None
        if isinstance(asked, str) and asked:
            model = asked
        elif trace.header.model_file:
            model = PurePath(trace.header.model_file).name
        elif trace.header.format:
            model = f"{trace.header.format} format"
    url = next((a.source.extra.get("url") for a in analyses if isinstance(a.source.extra.get("url"), str)), None)
    return model, _host(url) if url else None


def _host(url: str) -> str | None:
    try:
        return urlsplit(url).netloc.rpartition("@")[2] or None
    except ValueError:
        return None


def one_line(text: str) -> str:
    return " ".join(text.split())


def reason(path: str, message: str) -> str:
    """The reader's message without the path it starts with (the path is shown beside it)."""
    message = one_line(message)
    if message.startswith(path):
        rest = message[len(path):]
        line = _LINE_PREFIX.match(rest)
        if line:
            return f"line {line.group(1)}: {rest[line.end():]}"
        if rest.startswith(": "):
            return rest[2:]
        if rest.startswith(" "):
            return rest[1:]
    return message
