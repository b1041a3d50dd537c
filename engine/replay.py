"""Replay any recording: tell a trace from an imported fixture by content, and analyse it.

One file gives one :class:`~engine.analysis.Analysis` per stream it holds: a
trace holds one; a byte-prefix fixture file holds one per named fixture.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path

from engine.analysis import Analysis
from engine.fixture_import import Fixture, FixtureError, analyze_fixture, looks_like_fixture, parse_fixtures
from engine.trace import TRACE_SCHEMA, Trace, TraceError, parse_trace
from engine.trace_io import analyze_trace

TRACE = "trace"
FIXTURE = "fixture"

NEITHER = (
    "is neither a callscope trace (JSON Lines whose first line is a header with "
    f'"schema": "{TRACE_SCHEMA}") nor a byte-prefix fixture (lines "<name> <prefix length|final> '
    '<JSON call array|THROW message>")'
)


@dataclass(slots=True)
class Recording:
    """What a file turned out to hold."""

    kind: str  # trace | fixture
    path: str
    trace: Trace | None = None
    fixtures: list[Fixture] | None = None

    def names(self) -> list[str]:
        if self.fixtures is not None:
            return [f.name for f in self.fixtures]
        return [default_name(self.path)]


def default_name(path: str) -> str:
    return Path(path).stem or "trace"


def detect_kind(raw: bytes) -> str | None:
    """``trace``, ``fixture`` or None, from the first line that is not blank."""
    for line in raw.split(b"\n"):
        line = line.strip()
        if not line:
            continue
        if line.startswith(b"{"):
            return TRACE if (b'"schema"' in line or b'"header"' in line) else None
        if line.startswith(b"#"):
            return FIXTURE  # traces never hold comments
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return FIXTURE if looks_like_fixture(text) else None
    return None


def load_recording(path: str | os.PathLike[str]) -> Recording:
    """Read ``path`` and parse it as whatever its content says it is."""
    name = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise TraceError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise TraceError(f"{name}: is a directory, not a recording") from None
    except OSError as exc:
        raise TraceError(f"{name}: cannot read ({exc.strerror or exc})") from None
    kind = detect_kind(raw)
    if kind == TRACE:
        return Recording(TRACE, name, trace=parse_trace(raw, name))
    if kind == FIXTURE:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FixtureError(f"{name}: not UTF-8 text (byte {exc.start}); a fixture is a text file") from None
        return Recording(FIXTURE, name, fixtures=parse_fixtures(text, name))
    raise TraceError(f"{name} {NEITHER}" if raw.strip() else f"{name}: empty file; {NEITHER[3:]}")


def analyze_recording(
    recording: Recording,
    policy: str = "incremental",
    format_id: str | None = None,
    name: str | None = None,
) -> list[Analysis]:
    """Analyse every stream of ``recording`` (or only fixture ``name``)."""
    if recording.fixtures is not None:
        if format_id is not None:
            raise TraceError(
                f"{recording.path}: a byte-prefix fixture carries parses, not text; --format applies to traces only"
            )
        chosen = recording.fixtures
        if name is not None:
            chosen = [f for f in recording.fixtures if f.name == name]
            if not chosen:
                raise TraceError(
                    f"{recording.path}: no fixture named {name!r}; it holds: {', '.join(recording.names())}"
                )
        return [analyze_fixture(f, policy) for f in chosen]
    assert recording.trace is not None
    run_name = default_name(recording.path)
    if name is not None and name != run_name:
        raise TraceError(f"{recording.path}: a trace holds one run ({run_name!r}); --name selects a fixture by name")
    if recording.trace.header.source == "capture" and not recording.trace.steps:
        if format_id is not None:
            raise TraceError(f"{recording.path}: a capture trace holds the server's chunks; --format does not apply")
        return [_analyze_capture(recording.trace, policy, run_name)]
    return [analyze_trace(recording.trace, policy, format_id, run_name)]


def load_analyses(
    path: str | os.PathLike[str],
    policy: str = "incremental",
    format_id: str | None = None,
    name: str | None = None,
) -> list[Analysis]:
    """``callscope replay``'s engine: file in, one analysis per stream out."""
    return analyze_recording(load_recording(path), policy, format_id, name)


#: Module that analyses capture traces (received SSE lines), written with the capture issue.
CAPTURE_ANALYSIS_MODULE = "engine.capture.recording"


def _analyze_capture(trace: Trace, policy: str, name: str) -> Analysis:
    """Capture traces hold SSE lines, not generated bytes; their analysis lives with the capture code."""
    try:
        module = importlib.import_module(CAPTURE_ANALYSIS_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != CAPTURE_ANALYSIS_MODULE:
            raise
        raise TraceError(
            f"{trace.path}: a capture trace (received SSE lines); this build cannot replay captures"
        ) from None
    return module.analyze_capture_trace(trace, policy=policy, name=name)
