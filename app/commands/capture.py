"""`callscope capture URL`: stream a live OpenAI-compatible server's answer and check it against the contract.

An inspector: exit 0 even when the stream breaks rules (``--strict`` exits 1
then, for other projects' CI). A capture that fails (refused, DNS, TLS, HTTP
error, not an event stream, closed or stalled mid-stream) prints what was
received, keeps the recording, and exits 2 with one line saying why.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from callscope.commands.common import CliError, add_report_options, print_report
from callscope.engine.capture.client import capture_sync
from callscope.engine.capture.conformance import DEFAULT_ATOMIC_SILENCE_MS
from callscope.engine.capture.recording import CaptureRecorder, analyze_capture_result
from callscope.engine.capture.request import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    CaptureRequest,
    RequestError,
    build_body,
    endpoint_url,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "capture",
        help="stream a live OpenAI-compatible server's answer and check its tool-call deltas",
        description="POST a streaming chat-completions request to URL (base URL, /v1, or the full endpoint), "
        "stamp every received SSE line, and report what a client assembles plus every broken streaming rule.",
    )
    p.add_argument("url", help="server URL, e.g. http://127.0.0.1:8080 (POSTs to URL/v1/chat/completions)")
    what = p.add_argument_group("request (a file, or built from the pieces; pieces override the file)")
    what.add_argument("--request", metavar="FILE", help="the JSON request body (stream is forced on)")
    what.add_argument("--prompt", help="a user message (appended to --messages / the file's messages)")
    what.add_argument("--messages", metavar="FILE", help="JSON array of chat messages")
    what.add_argument("--tools", metavar="FILE", help="OpenAI tools array (JSON)")
    what.add_argument("--tool-choice", help="auto | none | required | a function name | a JSON object")
    what.add_argument("--model", help="model name to send (omitted by default)")
    what.add_argument("--max-tokens", type=int, help="max_tokens to send")
    how = p.add_argument_group("connection")
    how.add_argument(
        "--api-key-env",
        default=DEFAULT_API_KEY_ENV,
        metavar="VAR",
        help=f"environment variable holding the API key, sent as a bearer token (default {DEFAULT_API_KEY_ENV}); "
        "the key is never recorded or printed",
    )
    how.add_argument("--insecure", action="store_true", help="do not verify the server's TLS certificate")
    how.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_READ_TIMEOUT,
        metavar="S",
        help=f"longest silence to wait for, in seconds (read timeout; default {DEFAULT_READ_TIMEOUT:g})",
    )
    how.add_argument(
        "--connect-timeout",
        type=float,
        default=DEFAULT_CONNECT_TIMEOUT,
        metavar="S",
        help=f"seconds to wait for the connection (default {DEFAULT_CONNECT_TIMEOUT:g})",
    )
    p.add_argument("--record", metavar="OUT", help="write every received line to a callscope.trace/1 capture trace")
    p.add_argument(
        "--atomic-silence",
        type=float,
        default=DEFAULT_ATOMIC_SILENCE_MS / 1000,
        metavar="S",
        help="silence before a one-chunk call that counts as atomic-tool-call (default %(default)g s)",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 when the stream breaks any rule")
    add_report_options(p)
    p.set_defaults(handler=run)


def build_request(args: argparse.Namespace) -> CaptureRequest:
    for option in ("timeout", "connect_timeout"):
        if getattr(args, option) <= 0:
            raise CliError(f"--{option.replace('_', '-')} must be positive")
    if args.max_tokens is not None and args.max_tokens <= 0:
        raise CliError("--max-tokens must be positive")
    try:
        url = endpoint_url(args.url)
        body = build_body(
            request_file=args.request,
            prompt=args.prompt,
            messages_file=args.messages,
            tools_file=args.tools,
            tool_choice=args.tool_choice,
            model=args.model,
            max_tokens=args.max_tokens,
        )
    except RequestError as exc:
        raise CliError(str(exc)) from None
    return CaptureRequest(
        url,
        body,
        api_key_env=args.api_key_env,
        insecure=args.insecure,
        connect_timeout=args.connect_timeout,
        read_timeout=args.timeout,
    )


def run(args: argparse.Namespace) -> int:
    request = build_request(args)
    if args.atomic_silence < 0:
        raise CliError("--atomic-silence must not be negative")
    recorder = None
    if args.record:
        try:
            recorder = CaptureRecorder(args.record, request)
        except OSError as exc:
            raise CliError(f"cannot write {args.record}: {exc.strerror or exc}") from None
    try:
        result = capture_sync(request, recorder.write if recorder else None)
    except BaseException:
        if recorder is not None:
            recorder.close()  # no end record: the trace says the capture died
        raise
    if recorder is not None:
        recorder.finish(result)
    name = Path(args.record).stem if args.record else "capture"
    analysis = analyze_capture_result(result, name, atomic_silence_ms=args.atomic_silence * 1000)
    if result.error is not None and not analysis.steps:
        raise CliError(result.error.message)
    print_report([analysis], args)
    sys.stdout.flush()
    if result.cancelled:
        print("callscope capture: interrupted; reported what was received", file=sys.stderr)
        return 130
    if result.error is not None:
        raise CliError(result.error.message)
    if args.strict and analysis.violations:
        return 1
    return 0
