"""A raw SSE dump read as a capture: ``curl -N`` output, callscope's own ``.sse`` export, any saved event stream.

The file is the response body as a client received it: ``data:``, ``event:``,
``id:``, ``retry:`` and comment lines, events ended by blank lines. ``curl -i``
output (a status line and headers first) is read too: the head is skipped. A
dump keeps no times, so the run is untimed (steps, not seconds); whether the
stream ended properly is the protocol's verdict, as for any capture.
"""

from __future__ import annotations

import re
from pathlib import Path

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.core.files import decode_utf8
from callscope.engine.core.wire import sse_line
from callscope.engine.recordings.foreign import ForeignStream, split_lines
from callscope.engine.recordings.trace import Trace, TraceError

#: The first line of an event stream: a field (``data:``, ``event:``, ``id:``, ``retry:``) or a comment.
_SSE_FIELD = re.compile(rb"(?:data|event|id|retry)(?::|\r?$)|:")
#: ``curl -i``: an HTTP status line, then headers, then a blank line, then the body.
_STATUS_LINE = re.compile(rb"HTTP/\d(?:\.\d)? \d{3}\b")


def sse_transcript(analysis: Analysis) -> str:
    """The stream as a client received it: one ``data:`` event per chunk, then ``[DONE]`` (read back as a dump)."""
    lines = [sse_line(chunk, analysis.identity) + "\n\n" for chunk in analysis.chunks]
    return "".join(lines) + "data: [DONE]\n\n"


def looks_like_sse(raw: bytes) -> bool:
    """Whether the first line that is not blank opens an event stream (or a ``curl -i`` head before one)."""
    for line in raw.split(b"\n", 64)[:64]:
        if not line.strip():
            continue
        if _STATUS_LINE.match(line):
            return _SSE_FIELD.match(_body_of(raw).lstrip(b"\r\n")) is not None
        return _SSE_FIELD.match(line) is not None
    return False


def _body_of(raw: bytes) -> bytes:
    """The body after a ``curl -i`` head (status line, headers, blank line); the whole file when there is none."""
    stripped = raw.lstrip(b"\r\n")
    if not _STATUS_LINE.match(stripped):
        return raw
    for end in (b"\r\n\r\n", b"\n\n"):
        at = stripped.find(end)
        if at >= 0:
            return stripped[at + len(end):]
    return b""


def read_sse_dump(raw: bytes, path: str) -> list[tuple[str, Trace]]:
    """The one stream a dump holds, as a capture trace named after the file."""
    text = decode_utf8(_body_of(raw), path, TraceError, "a server-sent event stream")
    lines = split_lines(text)
    if not any(line.startswith("data") for line in lines):
        raise TraceError(f"{path}: an event stream without a single data line; nothing to judge")
    name = Path(path).stem or "stream"
    stream = ForeignStream(name, lines, f"raw SSE dump {Path(path).name} (untimed)")
    return [(name, stream.trace(path))]
