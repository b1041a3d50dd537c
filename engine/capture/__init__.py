"""Wire capture: stream any OpenAI-compatible server's answer, record it, and check it against the contract.

- :mod:`engine.capture.request`: the request (URL, body, TLS, timeouts, key *variable name*);
- :mod:`engine.capture.client`: the async reader that stamps each line before anything parses it;
- :mod:`engine.capture.conformance`: what a client assembles, the rule violations, the Analysis;
- :mod:`engine.capture.recording`: capture traces, written live and replayed offline;
- :mod:`engine.capture.redact`: the one place the API key and URL credentials are masked, everywhere.

Its benchmark (loopback throughput against a bare httpx reader) is ``callscope bench capture``,
:mod:`callscope.benchmarks.capture`.
"""

from callscope.engine.capture.client import CaptureError, CaptureResult, StreamCapture, capture, capture_sync
from callscope.engine.capture.conformance import CaptureAnalyzer, analyze_capture_lines
from callscope.engine.capture.recording import CaptureRecorder, analyze_capture_result, analyze_capture_trace
from callscope.engine.capture.request import CaptureRequest, RequestError, build_body, endpoint_url

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
    "analyze_capture_trace",
    "build_body",
    "capture",
    "capture_sync",
    "endpoint_url",
]
