"""mitmproxy flow files (``mitmdump -w FILE``, mitmweb's "Save"): each event-stream response is a capture.

Read through mitmproxy's own reader (``mitmproxy.io.FlowReader``), an optional
dependency (``pip install 'callscope[mitmproxy]'``): its format is mitmproxy's
to define. Without it, such a file is still recognised (a tnetstring
dictionary, the format's first byte onwards) and refused with one line saying
what to install. Flows whose response is ``text/event-stream`` and kept its
body become one run each, named ``<file>#<flow number>``; the first event is
stamped when the response began and the end when it finished (mitmproxy keeps
no per-line times), ms since the request.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from callscope.engine.recordings.foreign import ForeignStream, is_event_stream, json_object, split_lines
from callscope.engine.recordings.trace import MAX_MS, Trace, TraceError

INSTALL_HINT = "pip install 'callscope[mitmproxy]'"
#: A tnetstring: its length, a colon, that many bytes, and a type byte (``}``: a dictionary, as every flow is).
_TNETSTRING = re.compile(rb"(\d{1,12}):")


def looks_like_mitm(raw: bytes) -> bool:
    """Whether the file opens with a tnetstring dictionary holding a flow's ``type`` and ``version`` keys."""
    match = _TNETSTRING.match(raw)
    if match is None:
        return False
    end = match.end() + int(match.group(1))
    return end < len(raw) and raw[end:end + 1] == b"}" and b"7:version;" in raw[:end] and b"4:type;" in raw[:end]


def read_mitm_flows(raw: bytes, path: str) -> list[tuple[str, Trace]]:
    """Every event-stream flow of a mitmproxy flow file with its body, as capture traces."""
    try:
        from mitmproxy import exceptions as mitm_errors
        from mitmproxy import io as mitm_io
    except ImportError:
        raise TraceError(f"{path} is a mitmproxy flow file; reading it needs mitmproxy: {INSTALL_HINT}") from None
    stem = Path(path).stem or "flows"
    found: list[tuple[str, Trace]] = []
    flows = 0
    try:
        for number, flow in enumerate(mitm_io.FlowReader(io.BytesIO(raw)).stream(), 1):
            flows = number
            stream = _stream(flow, f"{stem}#{number}", number)
            if stream is not None:
                found.append((stream.name, stream.trace(path)))
    except mitm_errors.FlowReadException as exc:
        raise TraceError(f"{path}: mitmproxy cannot read it: {exc}") from None
    if not found:
        raise TraceError(f"{path}: a mitmproxy flow file of {flows} flows, none an event stream with its body kept")
    return found


def _stream(flow: Any, name: str, number: int) -> ForeignStream | None:
    request, response = getattr(flow, "request", None), getattr(flow, "response", None)
    if request is None or response is None or not is_event_stream(response.headers.get("content-type")):
        return None
    try:
        text = response.get_text(strict=False)
    except (ValueError, UnicodeDecodeError):
        text = None
    if not text:  # streamed through (``stream_large_bodies``): mitmproxy kept no body
        return None
    started = request.timestamp_start
    first = _ms(started, response.timestamp_start)
    end = _ms(started, response.timestamp_end)
    error = getattr(flow, "error", None)
    detail = str(getattr(error, "msg", "") or error) if error is not None else None
    if detail is None and response.status_code >= 400:
        detail = f"HTTP {response.status_code}"
    try:
        body = json_object(request.get_text(strict=False))
    except (ValueError, UnicodeDecodeError):
        body = None
    return ForeignStream(name, split_lines(text), f"mitmproxy flow {number}: {request.method} {request.url}",
                         request.url, body, first, end, detail)


def _ms(start: Any, at: Any) -> float | None:
    if not isinstance(start, (int, float)) or not isinstance(at, (int, float)) or at < start:
        return None
    ms = (at - start) * 1000.0
    return round(ms, 3) if ms <= MAX_MS else None
