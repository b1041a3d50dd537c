"""Wire capture: stream a server's answer (chat completions, Responses, Anthropic), record it, and check it.

- :mod:`callscope.engine.capture.request`: the request (URL, body, TLS, timeouts, key *variable name*);
- :mod:`callscope.engine.capture.client`: the async reader that stamps each line before anything parses it;
- :mod:`callscope.engine.capture.recording`: capture traces, written live (read back by
  :mod:`callscope.engine.recordings.capture_trace`; the stream itself is judged by
  :mod:`callscope.engine.streams.conformance`, which needs no HTTP);
- :mod:`callscope.engine.capture.redact`: the one place the API key and URL credentials are masked, everywhere.

Its benchmark (loopback throughput against a bare httpx reader) is ``callscope bench capture``,
:mod:`callscope.benchmarks.capture`.
"""

from callscope.engine.capture.client import CaptureError, CaptureResult, StreamCapture, capture, capture_sync
from callscope.engine.capture.recording import CaptureRecorder, analyze_capture_result
from callscope.engine.capture.request import CaptureRequest, RequestError, build_body, endpoint_url
from callscope.engine.streams.conformance import CaptureAnalyzer, analyze_capture_lines

__all__ = [
    "CaptureAnalyzer",
    "CaptureError",
    "CaptureRecorder",
    "CaptureRequest",
    "CaptureResult",
    "RequestError",
    "StreamCapture",
    "analyze_capture_lines",
    "analyze_capture_result",
    "build_body",
    "capture",
    "capture_sync",
    "endpoint_url",
]
