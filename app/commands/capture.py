"""`callscope capture URL`: stream a live server's answer and check it against the contract.

Any registered protocol (``--protocol``, or named by the URL's endpoint path;
built in: Chat Completions, the OpenAI Responses API, Anthropic Messages).
Every call is also assembled by client profiles (``--client``: the official
openai SDK run for real, a naive ``+=`` client), and a call reconstructs only
if each of them gets it right.

An inspector: exit 0 even when the stream breaks rules (``--strict`` exits 1
then, for other projects' CI). A capture that fails (refused, DNS, TLS, HTTP
error, not an event stream, closed or stalled mid-stream, past ``--deadline``)
prints the report of what was received (the very report ``callscope replay``
prints of its recording), keeps the recording, and exits 2 with one line
saying why. The recording keeps ``--atomic-silence`` and ``--client``, so its
replay judges the stream the same way. Ctrl-C or SIGTERM stop it the same way, exit 130. The API key and
URL credentials appear in none of it (:mod:`callscope.engine.capture.redact`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from callscope.commands.common import (
    CliError,
    add_atomic_silence_option,
    add_report_options,
    add_thinking_option,
    print_report,
)
from callscope.engine.capture.client import CaptureResult, capture_sync
from callscope.engine.capture.recording import CaptureRecorder, analyze_capture_results, judged_with
from callscope.engine.capture.redact import api_key
from callscope.engine.capture.request import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_READ_TIMEOUT,
    CaptureRequest,
    RequestError,
    build_body,
    check_api_key_env,
    check_seconds,
    key_env,
    resolve_endpoint,
)
from callscope.engine.streams.clients import PROFILES, default_profiles, parse_profiles
from callscope.engine.streams.protocols import DEFAULT_PROTOCOL, PROTOCOLS, all_protocols


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "capture",
        help="stream a live server's answer (chat completions, Responses, Anthropic) and check its tool-call deltas",
        description="POST a streaming request to URL (base URL, /v1, or the full endpoint), stamp every received "
        "SSE line, and report what the stream means, what real clients assemble from it, and every broken rule.",
    )
    paths = ", ".join(spec.path for spec in all_protocols())
    p.add_argument("url", help=f"server URL, e.g. http://127.0.0.1:8080 (POSTs to URL + the protocol's endpoint; a URL "
                   f"ending in an endpoint ({paths}) names its protocol)")
    p.add_argument("--protocol", choices=PROTOCOLS,
                   help="; ".join(f"{spec.id} = {spec.label}" for spec in all_protocols())
                   + f" (default: named by the URL's endpoint path, else {DEFAULT_PROTOCOL})")
    p.add_argument("--client", metavar="PROFILES",
                   help=f"client profiles that assemble the stream, comma-separated ({', '.join(PROFILES)}; 'all'; "
                   f"'none' for none; default {','.join(default_profiles())})"),
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
        metavar="VAR",
        help="environment variable holding the API key, sent in the protocol's header (default, if set: "
        + ", ".join(f"{spec.api_key_env} for {spec.id}" for spec in all_protocols())
        + "; a VAR given here must be set); the key is masked wherever it appears, even echoed by the server, "
        "and never recorded",
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
    how.add_argument(
        "--deadline",
        type=float,
        metavar="S",
        help="total seconds for the whole response, connect to last byte (default: none); --timeout is per read, "
        "so only this stops a server that drips; when it passes the capture fails (exit 2), keeping what arrived",
    )
    p.add_argument("--record", metavar="OUT", help="write every received line to a callscope.trace/1 capture trace")
    add_atomic_silence_option(p)
    p.add_argument("--strict", action="store_true", help="exit 1 when the stream breaks any rule")
    p.add_argument(
        "--template",
        metavar="FILE",
        help="the model's chat template: the content the server sent is read again with its parser (the one "
        "--format auto picks), and the report says what tool calls or reasoning the server left in content",
    )
    add_thinking_option(p)
    add_report_options(p)
    p.set_defaults(handler=run)


def check_durations(args: argparse.Namespace) -> None:
    """Every duration a finite number of seconds: ``nan`` passes ``<= 0`` checks, ``inf`` means never."""
    try:
        check_seconds(args.timeout, "--timeout")
        check_seconds(args.connect_timeout, "--connect-timeout")
        check_seconds(args.deadline, "--deadline", none_ok=True)
        check_seconds(args.atomic_silence, "--atomic-silence", zero_ok=True)
    except RequestError as exc:
        raise CliError(str(exc)) from None


def key_variable(args: argparse.Namespace, protocol: str = DEFAULT_PROTOCOL) -> str:
    """The key variable's name: a name given with --api-key-env must be set (the user asked for a key)."""
    name = args.api_key_env if args.api_key_env is not None else key_env(protocol)
    try:
        check_api_key_env(name)
    except RequestError as exc:
        raise CliError(f"--api-key-env: {exc}") from None
    if args.api_key_env is not None and not api_key(name):
        raise CliError(f"--api-key-env: ${name} is not set (or empty); export the key in it first")
    return name


def build_request(args: argparse.Namespace) -> CaptureRequest:
    check_durations(args)
    if args.max_tokens is not None and args.max_tokens <= 0:
        raise CliError("--max-tokens must be positive")
    try:
        url, protocol = resolve_endpoint(args.url, args.protocol)
    except RequestError as exc:
        raise CliError(str(exc)) from None
    key_env = key_variable(args, protocol)
    try:
        body = build_body(
            request_file=args.request,
            prompt=args.prompt,
            messages_file=args.messages,
            tools_file=args.tools,
            tool_choice=args.tool_choice,
            model=args.model,
            max_tokens=args.max_tokens,
            protocol=protocol,
        )
    except RequestError as exc:
        raise CliError(str(exc)) from None
    return CaptureRequest(
        url,
        body,
        api_key_env=key_env,
        protocol=protocol,
        insecure=args.insecure,
        connect_timeout=args.connect_timeout,
        read_timeout=args.timeout,
        deadline=args.deadline,
    )


def failure(result: CaptureResult, recorder: CaptureRecorder | None) -> str | None:
    """Why the command fails (exit 2), in one line: the capture's error, the recording's, or both."""
    problems = [m for m in (result.error_message, recorder.failed if recorder else None) if m]
    return "; ".join(problems) or None


def client_profiles(args: argparse.Namespace) -> tuple[str, ...] | None:
    if args.client is None:
        return None
    try:
        return parse_profiles(args.client)
    except ValueError as exc:
        raise CliError(f"--client: {exc}") from None


def read_content_again(analyses: list, template: Any, tools: Any, thinking: str) -> None:
    """``--template``: each stream's content read with the template's parser (the one detection), in its report."""
    from callscope.engine.templates.format_choice import choose_format, read_with

    choice = choose_format(template)
    for analysis in analyses:
        analysis.source.extra["content_read"] = read_with(choice, analysis.terminal.content, tools, thinking)


def run(args: argparse.Namespace) -> int:
    clients = client_profiles(args)
    request = build_request(args)
    template = None
    if args.template:
        from callscope.commands.request import read_template

        template = read_template(args.template)
    recorder = None
    if args.record:
        try:
            recorder = CaptureRecorder(args.record, request,
                                       extra=judged_with(args.atomic_silence * 1000, clients))
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
    analyses = analyze_capture_results(result, name, atomic_silence_ms=args.atomic_silence * 1000, clients=clients)
    if template is not None:
        read_content_again(analyses, template, request.body.get("tools"), args.thinking)
    why = failure(result, recorder)
    print_report(analyses, args)  # even of a capture that failed: the report its recording replays to
    sys.stdout.flush()
    if result.cancelled:
        lost = f"; {recorder.failed}" if recorder is not None and recorder.failed else ""
        print(f"callscope capture: interrupted; reported what was received{lost}", file=sys.stderr)
        return 130
    if why is not None:
        raise CliError(why)
    if args.strict and any(a.violations for a in analyses):
        return 1
    return 0
