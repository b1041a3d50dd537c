"""Replay any recording: tell what a file holds by its content, and analyse it.

One file gives one :class:`~callscope.engine.analysis.analyzer.Analysis` per stream it holds: a
trace holds one; a byte-prefix fixture file holds one per named fixture; what
other tools recorded (a raw SSE dump, a HAR file, a mitmproxy flow file: see
:mod:`.foreign`) holds one capture per event stream found in it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.core.files import decode_utf8, read_bytes, strip_bom
from callscope.engine.recordings.fixture_import import (
    Fixture,
    FixtureError,
    analyze_fixture,
    looks_like_fixture,
    parse_fixtures,
)
from callscope.engine.recordings.har import looks_like_har, read_har
from callscope.engine.recordings.mitm_flows import looks_like_mitm, read_mitm_flows
from callscope.engine.recordings.sse_dump import looks_like_sse, read_sse_dump
from callscope.engine.recordings.trace import TRACE_SCHEMA, Trace, TraceError, parse_trace
from callscope.engine.recordings.trace_io import analyze_trace

TRACE = "trace"
FIXTURE = "fixture"
SSE = "sse"
HAR = "har"
MITMPROXY = "mitmproxy"
#: Kinds that hold captured event streams recorded by another tool, and how each is read.
FOREIGN = {SSE: read_sse_dump, HAR: read_har, MITMPROXY: read_mitm_flows}

#: The kinds of file replay reads, as a file dialog offers them: (label, suffixes). Content decides, not the suffix.
RECORDING_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("callscope traces", (".jsonl", ".trace")),
    ("byte-prefix fixtures", (".txt",)),
    ("raw SSE dumps", (".sse", ".txt", ".log")),
    ("HAR files", (".har",)),
    ("mitmproxy flows", (".mitm", ".flow", ".flows")),
)
#: What every file that is not a recording is told: what callscope does read (no command names: the window says it too).
READS = (
    "callscope reads: callscope traces (JSON Lines whose first line is a header with "
    f'"schema": "{TRACE_SCHEMA}"), llama.cpp byte-prefix fixtures (lines "<name> <prefix length|final> '
    '<JSON call array|THROW message>"), raw SSE dumps (data: lines), HAR files and mitmproxy flow files'
)
NEITHER = f"is not a recording. {READS}"


@dataclass(slots=True)
class Recording:
    """What a file turned out to hold."""

    kind: str  # trace | fixture | sse | har | mitmproxy
    path: str
    trace: Trace | None = None
    fixtures: list[Fixture] | None = None
    #: Streams another tool recorded (``sse``, ``har``, ``mitmproxy``), each as a named capture trace.
    captures: list[tuple[str, Trace]] | None = None

    def names(self) -> list[str]:
        if self.fixtures is not None:
            return [f.name for f in self.fixtures]
        if self.captures is not None:
            return [name for name, _ in self.captures]
        return [default_name(self.path)]

    @property
    def holds_captures(self) -> bool:
        """Whether its streams are a server's chunks (a capture trace, or another tool's recording of streams)."""
        return self.captures is not None or (
            self.trace is not None and self.trace.header.source == "capture" and not self.trace.steps)


def default_name(path: str) -> str:
    return Path(path).stem or "trace"


def detect_kind(raw: bytes) -> str | None:
    """``trace``, ``fixture``, ``sse``, ``har``, ``mitmproxy`` or None, from how the file opens.

    A ``#`` line is a fixture file's comment (traces never hold comments), but a
    Markdown heading opens the same way: after comments, the first record must
    still read as a fixture's.
    """
    if looks_like_mitm(raw):
        return MITMPROXY
    commented = False
    for line in raw.split(b"\n"):
        line = line.strip()
        if not line:
            continue
        if line.startswith(b"#"):
            commented = True
            continue
        if not commented and line.startswith(b"{"):
            if b'"schema"' in line or b'"header"' in line:
                return TRACE
            return HAR if looks_like_har(raw) else None
        if not commented and looks_like_sse(raw):
            return SSE
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return FIXTURE if looks_like_fixture(text) else None
    return FIXTURE if commented else None


def load_recording(path: str | os.PathLike[str]) -> Recording:
    """Read ``path`` and parse it as whatever its content says it is."""
    name = str(path)
    raw = strip_bom(read_bytes(path, TraceError), name, TraceError)
    kind = detect_kind(raw)
    if kind == TRACE:
        return Recording(TRACE, name, trace=parse_trace(raw, name))
    if kind == FIXTURE:
        text = decode_utf8(raw, name, FixtureError, "a fixture text file")
        return Recording(FIXTURE, name, fixtures=parse_fixtures(text, name))
    if kind in FOREIGN:
        return Recording(kind, name, captures=FOREIGN[kind](raw, name))
    raise TraceError(f"{name} {NEITHER}" if raw.strip() else f"{name}: empty file. {READS}")


def analyze_recording(
    recording: Recording,
    policy: str = "incremental",
    format_id: str | None = None,
    name: str | None = None,
    atomic_silence_ms: float | None = None,
) -> list[Analysis]:
    """Analyse every stream of ``recording`` (or only the one named ``name``).

    ``atomic_silence_ms`` judges a capture with another atomic silence than the one it was recorded
    with (a recording made elsewhere: the default); it means nothing to generated text.
    """
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
    if recording.holds_captures and format_id is not None:
        raise TraceError(f"{recording.path}: a capture holds the server's chunks; --format does not apply")
    if recording.captures is not None:
        chosen_captures = recording.captures
        if name is not None:
            chosen_captures = [(n, t) for n, t in recording.captures if n == name]
            if not chosen_captures:
                raise TraceError(f"{recording.path}: no stream named {name!r}; it holds: {', '.join(recording.names())}")
        return [a for n, trace in chosen_captures for a in _analyze_capture(trace, policy, n, atomic_silence_ms)]
    assert recording.trace is not None
    run_name = default_name(recording.path)
    if name is not None and name != run_name:
        raise TraceError(f"{recording.path}: a trace holds one run ({run_name!r}); --name selects a fixture by name")
    if recording.holds_captures:
        return _analyze_capture(recording.trace, policy, run_name, atomic_silence_ms)
    return [analyze_trace(recording.trace, policy, format_id, run_name)]


def load_analyses(
    path: str | os.PathLike[str],
    policy: str = "incremental",
    format_id: str | None = None,
    name: str | None = None,
    atomic_silence_ms: float | None = None,
) -> list[Analysis]:
    """``callscope replay``'s engine: file in, one analysis per stream out."""
    return analyze_recording(load_recording(path), policy, format_id, name, atomic_silence_ms)


def _analyze_capture(trace: Trace, policy: str, name: str, atomic_silence_ms: float | None) -> list[Analysis]:
    """Capture traces hold SSE lines, not generated bytes: the stream checker reads them (one run per
    choice: a stream with ``n > 1`` has several).

    Imported here, not at the top: ``callscope replay`` of any other recording need not load
    the stream checker.
    """
    from callscope.engine.recordings.capture_trace import analyze_capture_traces

    return analyze_capture_traces(trace, policy=policy, name=name, atomic_silence_ms=atomic_silence_ms)
