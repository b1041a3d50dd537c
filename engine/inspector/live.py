"""A run still being decoded, seen as an :class:`Analysis` that grows.

The Analyzer keeps its steps, events and chunks in lists it only appends to;
:func:`provisional_analysis` wraps those very lists (no copy) in an
``Analysis`` whose ``finish_cause`` is :data:`RUNNING`, so every inspector
structure can be built on a live run and :meth:`sync`-ed as it grows. When the
run ends, :meth:`Analyzer.finish` returns the real Analysis and the view is
rebuilt on it. Only one thread may touch the Analyzer: the GUI feeds it from
the decode worker's signals, on the GUI thread.
"""

from __future__ import annotations

from callscope.engine.analysis.analyzer import Analysis, Analyzer, StepTime
from callscope.engine.core.wire import WireChunk

#: ``finish_cause`` of an analysis whose stream has not ended yet.
RUNNING = "running"


def first_tool_chunk(chunks: list[WireChunk]) -> StepTime:
    for chunk in chunks:
        if chunk.is_tool_call:
            return StepTime(chunk.step, chunk.ms)
    return StepTime()


def provisional_analysis(analyzer: Analyzer) -> Analysis:
    """The analysis of what ``analyzer`` has been fed so far (shares its lists; call again for fresh scalars)."""
    policy = analyzer.policy
    baseline = analyzer.baseline or policy
    parser = analyzer.parser
    from callscope.engine.core.parse_model import Parse

    terminal = parser.snapshot() if parser is not None else Parse()
    return Analysis(
        name=analyzer.name,
        source=analyzer.source,
        unit=analyzer.unit,
        timed=analyzer.timed,
        steps=analyzer.steps,
        parse_events=analyzer.parse_events,
        terminal_events_from=len(analyzer.parse_events),
        terminal=terminal,
        chunks=policy.chunks,
        baseline_chunks=baseline.chunks,
        calls=[],
        violations=policy.violations,
        finish_reason=None,
        finish_cause=RUNNING,
        ttfd_streaming=first_tool_chunk(policy.chunks),
        ttfd_atomic=StepTime(),
        identity=analyzer.identity,
        content_streamed="",
        truncated=False,
    )


def refresh_scalars(analysis: Analysis, analyzer: Analyzer) -> None:
    """Update the fields of a provisional analysis that are values, not shared lists."""
    analysis.terminal_events_from = len(analyzer.parse_events)
    if analysis.ttfd_streaming.step is None:
        analysis.ttfd_streaming = first_tool_chunk(analyzer.policy.chunks)
    if analyzer.parser is not None:
        analysis.terminal = analyzer.parser.snapshot()
