"""Streams recorded by something else (a raw SSE dump, a HAR, mitmproxy flows), read as capture traces.

Whoever recorded them, callscope judges their received lines the same way
(:func:`callscope.engine.streams.conformance.analyze_capture_streams`): each
reader here turns what it found into an in-memory capture :class:`Trace`
(header ``source: capture``, one ``line`` record per received line, blank lines
kept, then an end record), so ``callscope replay`` and the window handle them
like callscope's own captures, one run per stream. What the tool kept of the
timing decides the stamps: none for a dump (untimed), the first byte and the end
of the response for HAR and mitmproxy (their per-line times were never kept).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from callscope.engine.recordings.trace import Trace, TraceEnd, TraceHeader, TraceLine

#: CR, LF and CRLF each end a line, as the SSE spec reads a stream (``str.splitlines`` splits on more).
_LINE_END = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """A body's lines as an SSE reader splits them; a last line without its line end is kept."""
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def public_url(url: str) -> str:
    """The URL without what may be secret (``user:password@``, the query): the file keeps them, the report need not."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, "", ""))


@dataclass(slots=True)
class ForeignStream:
    """One event stream found in a file: its body lines and what the tool knew about it."""

    name: str
    lines: list[str]
    description: str
    url: str | None = None
    body: dict[str, Any] | None = None  # the request body, when it was a JSON object
    first_ms: float | None = None  # when the response's first byte came, ms since the request (if known)
    end_ms: float | None = None  # when the response ended (if known)
    error: str | None = None  # the tool's note that the exchange failed

    def trace(self, path: str) -> Trace:
        """This stream as a capture trace: ``first_ms`` stamps the first event (up to its blank line), the
        rest are untimed: the tool kept when the first byte came, not when each later line did."""
        # here, not at the top: telling a file's kind apart must not load the stream checker
        from callscope.engine.streams.protocols import protocol_for_path
        from callscope.engine.streams.sse import EVENTS

        body = self.body or {}
        url = public_url(self.url) if self.url else None
        protocol = protocol_for_path(urlsplit(self.url).path) if self.url else None
        extra: dict[str, Any] = {"sse": EVENTS, "request": {k: v for k, v in body.items()
                                                            if k not in ("messages", "tools")}}
        if url:
            extra["url"] = url
        if protocol is not None:
            extra["protocol"] = protocol
        tools = body.get("tools")
        messages = body.get("messages")
        header = TraceHeader(source="capture", unit="chunk", description=self.description, extra=extra,
                             tools=tools if isinstance(tools, list) else None,
                             messages=messages if isinstance(messages, list) else None)
        first_event = next((i for i, line in enumerate(self.lines) if not line and i), len(self.lines))
        lines = [TraceLine(self.first_ms if i <= first_event else None, line) for i, line in enumerate(self.lines)]
        end_ms = self.end_ms if self.end_ms is not None and (self.first_ms is None or self.end_ms >= self.first_ms) \
            else self.first_ms
        end = TraceEnd("error", end_ms, self.error) if self.error else TraceEnd("stop", end_ms)
        return Trace(header, lines=lines, end=end, path=path)


def json_object(text: str | None) -> dict[str, Any] | None:
    """A request body as a JSON object (what a trace header can hold), else None."""
    if not text or not text.lstrip().startswith("{"):
        return None
    from callscope.engine.core.json_text import DOCUMENT_DEPTH, loads

    try:
        value = loads(text, DOCUMENT_DEPTH)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def is_event_stream(content_type: str | None) -> bool:
    return bool(content_type) and content_type.split(";")[0].strip().lower() == "text/event-stream"
