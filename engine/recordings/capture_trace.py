"""Reading a capture trace back into the Analysis its live capture showed (``callscope replay``).

A capture trace (``source: capture``) keeps every received SSE line with its
receive time and an end record saying why the capture ended; the stream
checker (:mod:`callscope.engine.streams.conformance`) turns those lines into
the same Analysis, offline. Writing capture traces is the live capture's job
(:mod:`callscope.engine.capture.recording`); reading needs no HTTP client.
"""

from __future__ import annotations

from typing import Any

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.recordings.trace import MAX_MS, Trace
from callscope.engine.streams.clients import PROFILES
from callscope.engine.streams.conformance import DEFAULT_ATOMIC_SILENCE_MS, analyze_capture_streams
from callscope.engine.streams.protocols import PROTOCOLS, expected_choices
from callscope.engine.streams.sse import EVENTS, LINES

#: Header ``extra`` keys that change a capture's verdicts, kept so a replay judges it as the live capture did:
#: the ``--atomic-silence`` in ms, and the ``--client`` profiles (absent: the defaults).
ATOMIC_SILENCE_KEY = "atomic_silence_ms"
CLIENTS_KEY = "clients"
#: The old (pre-``detail``) way a trace kept why a capture ended early; read, never written.
END_NOTE = ": callscope-capture-ended "
NO_END_RECORD = "the recording has no end record (the capture was killed)"


def analyze_capture_trace(
    trace: Trace,
    policy: str | None = None,
    name: str = "capture",
    atomic_silence_ms: float | None = None,
) -> Analysis:
    """The Analysis of a recorded capture (``callscope replay``), its primary choice. ``policy`` is ignored:
    the server chose. Gives the same verdicts as the live capture that recorded it."""
    return analyze_capture_traces(trace, policy, name, atomic_silence_ms)[0]


def recorded_atomic_silence(trace: Trace) -> float:
    """The ``--atomic-silence`` the capture was judged with (ms), or the default for older recordings."""
    value = trace.header.extra.get(ATOMIC_SILENCE_KEY)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= MAX_MS:
        return float(value)
    return DEFAULT_ATOMIC_SILENCE_MS


def recorded_clients(trace: Trace) -> tuple[str, ...] | None:
    """The client profiles the capture was judged with, the known ones (None: the defaults)."""
    value = trace.header.extra.get(CLIENTS_KEY)
    if not isinstance(value, list):
        return None
    return tuple(p for p in value if isinstance(p, str) and p in PROFILES)


def analyze_capture_traces(
    trace: Trace,
    policy: str | None = None,
    name: str = "capture",
    atomic_silence_ms: float | None = None,
    clients: tuple[str, ...] | None = None,
) -> list[Analysis]:
    """Every choice's Analysis of a recorded capture, the primary first.

    The header says how to read it: its protocol (older recordings: chat), whether blank
    lines were kept (``sse: events``; older recordings had one event per data line), the
    request's ``n``, and the atomic silence and client profiles the capture was judged
    with (``atomic_silence_ms`` and ``clients`` override them).
    """
    del policy
    if atomic_silence_ms is None:
        atomic_silence_ms = recorded_atomic_silence(trace)
    if clients is None:
        clients = recorded_clients(trace)
    lines: list[tuple[float | None, str]] = []
    error: str | None = None
    for record in trace.lines:
        if record.line.startswith(END_NOTE):
            error = record.line[len(END_NOTE):]
        else:
            lines.append((record.ms, record.line))
    if trace.end is not None and trace.end.detail is not None:
        error = trace.end.detail
    cancelled = trace.end is not None and trace.end.cause == "cancelled"
    if trace.end is None:
        error = error or NO_END_RECORD
    elif trace.end.cause == "error" and error is None:
        error = "the capture ended with an error"
    extra: dict[str, Any] = {}
    header = trace.header.extra
    url = header.get("url") if isinstance(header.get("url"), str) else None
    protocol = header.get("protocol") if header.get("protocol") in PROTOCOLS else None
    settings = header.get("request") if isinstance(header.get("request"), dict) else {}
    return analyze_capture_streams(
        lines,
        name,
        trace.path,
        url=url,
        error=error,
        cancelled=cancelled,
        atomic_silence_ms=atomic_silence_ms,
        extra=extra,
        protocol=protocol,
        framing=EVENTS if header.get("sse") == EVENTS else LINES,
        clients=clients,
        expected_choices=expected_choices(settings),
        tools=offered_tools(trace.header.tools),
    )


def offered_tools(tools: Any) -> frozenset[str] | None:
    """The names of the tools a request offered (None when it did not say: then any name counts as offered)."""
    if not isinstance(tools, list) or not tools:
        return None
    names = set()
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        name = function.get("name") if isinstance(function, dict) else tool.get("name") if isinstance(tool, dict) else None
        if isinstance(name, str):
            names.add(name)
    return frozenset(names)
