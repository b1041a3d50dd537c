"""A HAR file (browser developer tools, "Save all as HAR"): each event-stream response is a capture.

Entries whose response is ``text/event-stream`` (by its content's
``mimeType`` or its ``Content-Type`` header) and kept its body
(``content.text``, base64 when ``encoding`` says so) become one run each,
named ``<file>#<entry number>``; their request body (``postData.text``) is the
request. HAR keeps no per-event times, only the entry's ``timings``: where
given, the first event is stamped when the first byte came (``blocked``,
``dns``, ``connect``, ``send`` and ``wait``, ms since the request) and the end
when the body was in (plus ``receive``); the lines in between are untimed.
Request headers (API keys among them) are never read.
"""

from __future__ import annotations

import base64
import binascii
import math
from pathlib import Path
from typing import Any

from callscope.engine.core.files import decode_utf8
from callscope.engine.core.json_text import loads
from callscope.engine.recordings.foreign import ForeignStream, is_event_stream, json_object, split_lines
from callscope.engine.recordings.trace import MAX_MS, Trace, TraceError

#: HAR ``timings`` that come before the first byte of the response, in order.
_BEFORE_FIRST_BYTE = ("blocked", "dns", "connect", "send", "wait")


def looks_like_har(raw: bytes) -> bool:
    """A JSON object opening with a ``log`` member that has ``entries`` (the cheap test; :func:`read_har` checks)."""
    return raw.lstrip()[:1] == b"{" and b'"log"' in raw[:4096] and b'"entries"' in raw


def read_har(raw: bytes, path: str) -> list[tuple[str, Trace]]:
    """Every event-stream entry of a HAR file with its body, as capture traces."""
    try:
        doc = loads(decode_utf8(raw, path, TraceError, "a HAR file (JSON)"))
    except ValueError as exc:
        raise TraceError(f"{path}: not a HAR file: not JSON ({exc})") from None
    log = doc.get("log") if isinstance(doc, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise TraceError(f'{path}: not a HAR file: expected {{"log": {{"entries": [...]}}}}')
    stem = Path(path).stem or "har"
    found: list[tuple[str, Trace]] = []
    empty = 0
    for number, entry in enumerate(entries, 1):
        if not isinstance(entry, dict):
            continue
        response = entry.get("response") if isinstance(entry.get("response"), dict) else {}
        content = response.get("content") if isinstance(response.get("content"), dict) else {}
        if not (is_event_stream(content.get("mimeType")) or is_event_stream(_header(response, "content-type"))):
            continue
        text = _body_text(content, f"{path}: entry {number}")
        if text is None:
            empty += 1
            continue
        request = entry.get("request") if isinstance(entry.get("request"), dict) else {}
        post = request.get("postData") if isinstance(request.get("postData"), dict) else {}
        first, end = _times(entry.get("timings"))
        name = f"{stem}#{number}"
        url = request.get("url") if isinstance(request.get("url"), str) else None
        status = response.get("status")
        error = response.get("_error") if isinstance(response.get("_error"), str) and response.get("_error") else None
        if error is None and isinstance(status, int) and status >= 400:
            error = f"HTTP {status}"
        method = request.get("method") if isinstance(request.get("method"), str) else "?"
        stream = ForeignStream(name, split_lines(text), f"HAR entry {number}: {method} {url or '?'}", url,
                               json_object(post.get("text") if isinstance(post.get("text"), str) else None),
                               first, end, error)
        found.append((name, stream.trace(path)))
    if not found:
        why = (f"{empty} event-stream entr{'y' if empty == 1 else 'ies'} kept no body (save the HAR after the "
               "streams finished, with content)") if empty else "no text/event-stream response"
        raise TraceError(f"{path}: a HAR file of {len(entries)} entries, none with an event stream to read: {why}")
    return found


def _header(message: dict[str, Any], name: str) -> str | None:
    for header in message.get("headers") or []:
        if isinstance(header, dict) and str(header.get("name", "")).lower() == name:
            value = header.get("value")
            return value if isinstance(value, str) else None
    return None


def _body_text(content: dict[str, Any], where: str) -> str | None:
    text = content.get("text")
    if not isinstance(text, str) or not text:
        return None
    if content.get("encoding") == "base64":
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise TraceError(f"{where}: content.text is not valid base64") from None
        return decode_utf8(data, where, TraceError, "an event stream (UTF-8)")
    return text


def _times(timings: Any) -> tuple[float | None, float | None]:
    """(first byte, end of body) in ms since the request, from HAR ``timings`` (-1 and nonsense: not given)."""
    if not isinstance(timings, dict):
        return None, None
    values = {key: _duration(timings.get(key)) for key in (*_BEFORE_FIRST_BYTE, "receive")}
    if values["wait"] is None:
        return None, None
    first = sum(values[key] or 0.0 for key in _BEFORE_FIRST_BYTE)
    end = first + values["receive"] if values["receive"] is not None else None
    if first > MAX_MS or (end is not None and end > MAX_MS):
        return None, None
    return round(first, 3), (round(end, 3) if end is not None else None)


def _duration(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else None
