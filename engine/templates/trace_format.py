"""The format a recording's trace is read with: as recorded, or derived again from the chat template it names.

``callscope replay`` and ``callscope check`` both read a trace with :func:`trace_format`: a trace whose
format is a built-in one (or that names none) is read as recorded, without loading a template
(Jinja is never imported for it); one whose format was derived from its chat template
(``derived_...``, unknown in a new process until the template is analysed again), or ``--format
auto``, goes through :func:`callscope.engine.templates.recorded.recorded_format`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from callscope.engine.formats import FORMAT_IDS
from callscope.engine.recordings.trace import TraceError

if TYPE_CHECKING:
    from callscope.engine.recordings.replay import Recording


def trace_format(recording: Recording, requested: str | None) -> tuple[str | None, str]:
    """``(format or None, why)`` for ``recording`` read with ``--format requested`` (None: as recorded).

    ``auto`` reads the format from the chat template the trace names, and a format derived from that
    template is derived again (the one detection). Anything it cannot do is a :class:`TraceError` line.
    """
    trace = recording.trace
    if trace is None or not trace.steps:
        if requested == "auto":
            raise TraceError(f"{recording.path}: --format auto reads a trace's chat template; this {recording.kind} "
                             "holds none")
        return requested, ""
    if requested != "auto" and (requested is not None or trace.header.format in (*FORMAT_IDS, None)):
        return requested, ""  # nothing to derive: no template is read (replay stays free of Jinja)
    from callscope.engine.templates.recorded import RecordedFormatError, recorded_format

    try:
        format_id, choice = recorded_format(trace.header.format, trace.header.template, requested)
    except RecordedFormatError as exc:
        raise TraceError(f"{recording.path}: {exc}") from None
    if choice is None:
        return requested, ""
    return format_id, f"{choice.reason} (the chat template the trace names: {trace.header.template})"
