"""What File ▸ Export writes: the report JSON (same as the CLI), the SSE transcript, PNGs, traces."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtWidgets import QWidget

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.analysis.report import report_json
from callscope.engine.core.json_text import dumps
from callscope.engine.core.wire import sse_line
from callscope.engine.recordings.trace_io import write_analysis_trace


class ExportError(Exception):
    """A file could not be written; the message says which and why."""


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_report(path: str, analyses: list[Analysis]) -> None:
    """``callscope.report/1`` with every chunk, exactly what ``callscope replay --json --chunks`` prints."""
    try:  # never NaN, whatever the depth: the file must be what a JSON reader accepts
        text = dumps(report_json(analyses, include_chunks=True), ensure_ascii=False, indent=2, allow_nan=False)
    except ValueError as exc:
        raise ExportError(f"cannot write {path}: the report is not valid JSON ({exc})") from None
    _write(path, text + "\n")


def sse_transcript(analysis: Analysis) -> str:
    """The stream as a client received it: one ``data:`` event per chunk, then ``[DONE]``."""
    lines = [sse_line(chunk, analysis.identity) + "\n\n" for chunk in analysis.chunks]
    return "".join(lines) + "data: [DONE]\n\n"


def write_sse(path: str, analysis: Analysis) -> None:
    _write(path, sse_transcript(analysis))


def save_png(path: str, widget: QWidget) -> None:
    if not widget.grab().save(path, "PNG"):
        raise ExportError(f"cannot write {path}: the image could not be saved")


def save_trace(path: str, analysis: Analysis, recorded: str | None = None, tools=None) -> None:
    """A live run's own recording when there is one (full request header), else the analysis' steps."""
    try:
        if recorded and Path(recorded).is_file():
            shutil.copyfile(recorded, path)
            return
        write_analysis_trace(path, analysis, tools=tools, description=f"saved from the callscope inspector: {analysis.name}")
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # TraceError: a parse-carrying run has no bytes to record
        raise ExportError(str(exc)) from None
