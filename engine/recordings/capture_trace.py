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
from callscope.engine.recordings.trace import Trace
from callscope.engine.streams.conformance import DEFAULT_ATOMIC_SILENCE_MS, analyze_capture_lines

#: The old (pre-``detail``) way a trace kept why a capture ended early; read, never written.
END_NOTE = ": callscope-capture-ended "
NO_END_RECORD = "the recording has no end record (the capture was killed)"


def analyze_capture_trace(
    trace: Trace,
    policy: str | None = None,
    name: str = "capture",
    atomic_silence_ms: float = DEFAULT_ATOMIC_SILENCE_MS,
) -> Analysis:
    """The Analysis of a recorded capture (``callscope replay``). ``policy`` is ignored: the server chose.

    Gives the same verdicts as the live capture that recorded it.
    """
    del policy
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
    url = trace.header.extra.get("url") if isinstance(trace.header.extra.get("url"), str) else None
    return analyze_capture_lines(
        lines,
        name,
        trace.path,
        url=url,
        error=error,
        cancelled=cancelled,
        atomic_silence_ms=atomic_silence_ms,
        extra=extra,
    )
