"""`callscope proxy --upstream URL`: a recording proxy between any client and its server.

Point a client at it (the openai SDK's ``base_url``, the anthropic SDK's, an
agent's endpoint setting): every request goes upstream unchanged, every answer
comes back byte for byte as it arrives. Each streamed answer (Chat
Completions, Responses, Anthropic Messages) is a turn, judged like
``callscope capture`` judges a stream and, with ``--record-dir``, recorded as a
capture trace (``callscope replay`` reads it back to the same report). One line
per turn on stdout (``--json``: one JSON object per line). Ctrl-C or SIGTERM
stop it: open turns get their end record, exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import sys
from pathlib import Path

from callscope.commands.common import CliError, add_atomic_silence_option
from callscope.commands.listening import run_until_signalled, start_listening, stopped_line
from callscope.engine.capture.proxy.config import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_IDLE_TIMEOUT,
    MAX_IN_FLIGHT_BYTES,
    MAX_REQUEST_BYTES,
)
from callscope.engine.capture.request import DEFAULT_CONNECT_TIMEOUT, DEFAULT_READ_TIMEOUT, RequestError, check_seconds
from callscope.engine.streams.clients import PROFILES, default_profiles, parse_profiles

MIB = 1 << 20
HELP = "a recording proxy: forward a client's requests to its server unchanged, record and judge each stream"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "proxy",
        help=HELP,
        description="Listen on HOST:PORT and forward every request to the upstream server unchanged, every answer "
        "byte for byte as it arrives. Each streamed answer is a turn: judged like `callscope capture` judges a "
        "stream, one line each, and recorded (with --record-dir) as a capture trace `callscope replay` reads.",
    )
    p.add_argument("--upstream", required=True, metavar="URL",
                   help="the server's base URL, e.g. http://127.0.0.1:8080 or https://api.openai.com (a trailing /v1 "
                   "is fine); a request for /v1/chat/completions goes to URL/v1/chat/completions")
    p.add_argument("--listen", default="127.0.0.1:8787", metavar="HOST:PORT",
                   help="where to listen (default %(default)s; loopback unless told otherwise; port 0 picks a free one)")
    p.add_argument("--record-dir", metavar="DIR",
                   help="record each streamed turn in a new session folder DIR/YYYYMMDD-HHMMSS (turn-0001.jsonl..., "
                   "and turns.jsonl listing every turn); default: record nothing")
    p.add_argument("--client", metavar="PROFILES",
                   help=f"client profiles that judge each stream, comma-separated ({', '.join(PROFILES)}; 'all'; 'none'; "
                   f"default {','.join(default_profiles())})")
    add_atomic_silence_option(p)
    p.add_argument("--insecure", action="store_true", help="do not verify the upstream's TLS certificate")
    p.add_argument("--timeout", type=float, default=DEFAULT_READ_TIMEOUT, metavar="S",
                   help=f"longest upstream silence to wait for, in seconds (default {DEFAULT_READ_TIMEOUT:g})")
    p.add_argument("--connect-timeout", type=float, default=DEFAULT_CONNECT_TIMEOUT, metavar="S",
                   help=f"seconds to wait for the upstream connection (default {DEFAULT_CONNECT_TIMEOUT:g})")
    p.add_argument("--header-timeout", type=float, default=DEFAULT_HEADER_TIMEOUT, metavar="S",
                   help="seconds a request's head may take from its first byte (default %(default)g; then 408)")
    p.add_argument("--idle-timeout", type=float, default=DEFAULT_IDLE_TIMEOUT, metavar="S",
                   help="seconds a connection may sit silent between requests or inside a request body "
                   "(default %(default)g; then it is closed)")
    p.add_argument("--max-body", type=float, default=MAX_REQUEST_BYTES / MIB, metavar="MIB",
                   help="largest request body, in MiB (default %(default)g; larger is a 413)")
    p.add_argument("--max-in-flight", type=float, default=MAX_IN_FLIGHT_BYTES / MIB, metavar="MIB",
                   help="most request-body MiB held at once across every connection (default %(default)g; "
                   "beyond it a 503)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per turn (its index record and its callscope.report/1 runs) instead of a line")
    p.set_defaults(handler=run)


def build_config(args: argparse.Namespace):
    """The proxy's configuration from the arguments; every mistake is one line (exit 2)."""
    from callscope.engine.capture.proxy import ProxyConfig, check_upstream, parse_listen

    try:
        check_seconds(args.atomic_silence, "--atomic-silence", zero_ok=True)
        check_seconds(args.timeout, "--timeout")
        check_seconds(args.connect_timeout, "--connect-timeout")
        check_seconds(args.header_timeout, "--header-timeout")
        check_seconds(args.idle_timeout, "--idle-timeout")
        max_body, max_in_flight = _mib_option(args.max_body, "--max-body"), _mib_option(args.max_in_flight, "--max-in-flight")
        if max_in_flight < max_body:
            raise RequestError(f"--max-in-flight ({args.max_in_flight:g} MiB) must be at least --max-body "
                               f"({args.max_body:g} MiB)")
        host, port = parse_listen(args.listen)
        upstream = check_upstream(args.upstream)
        clients = parse_profiles(args.client) if args.client is not None else None
        return ProxyConfig(upstream, host, port, Path(args.record_dir) if args.record_dir else None,
                           insecure=args.insecure, connect_timeout=args.connect_timeout, read_timeout=args.timeout,
                           atomic_silence_ms=args.atomic_silence * 1000, clients=clients, max_request_bytes=max_body,
                           max_in_flight_bytes=max_in_flight, header_timeout=args.header_timeout,
                           idle_timeout=args.idle_timeout)
    except (RequestError, ValueError) as exc:
        raise CliError(str(exc)) from None


def _mib_option(value: float, option: str) -> int:
    """A size in MiB as bytes: a finite number above zero (fractions allowed: 0.5 is 512 KiB)."""
    if not math.isfinite(value) or value <= 0:
        raise RequestError(f"{option} must be a number of MiB > 0, got {value!r}")
    return max(1, int(value * MIB))


class TurnPrinter:
    """The CLI's observer: one line (or JSON object) per finished turn, on stdout, as each ends."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def turn_started(self, turn) -> None:
        pass

    def turn_lines(self, turn, lines) -> None:
        pass

    def turn_ended(self, turn) -> None:
        if self.as_json:
            from callscope.engine.analysis.report import report_json
            from callscope.engine.core.json_text import dumps
            from callscope.engine.core.terminal import terminal_json

            report = turn.report if turn.report is not None else (report_json(turn.analyses) if turn.analyses else None)
            record = {**turn.index_record(), "report": report}
            text = terminal_json(dumps(record, ensure_ascii=False, allow_nan=False))
        else:
            text = turn.summary()
        try:
            print(text, flush=True)
        except BrokenPipeError:
            pass


def run(args: argparse.Namespace) -> int:
    config = build_config(args)
    try:
        return asyncio.run(_serve(config, TurnPrinter(args.json)))
    except KeyboardInterrupt:  # a Ctrl-C before the signal handlers were in place
        return 0


async def _serve(config, printer: TurnPrinter) -> int:
    from callscope.engine.capture.proxy import ProxyServer, is_loopback
    from callscope.engine.capture.proxy.judge import ProcessJudge

    # judged in a low-priority worker process: the clients' traffic always comes first
    server = ProxyServer(config, printer, ProcessJudge(report=printer.as_json))
    await start_listening(server, config.host, config.port)
    gc.collect()
    gc.freeze()  # what start-up made lives as long as the proxy: out of every later collection's sight

    def announce() -> None:
        where = f"; recording to {server.session.path}" if server.session is not None else ""
        print(f"callscope proxy: listening on {server.url} -> {config.public_upstream}{where} (Ctrl-C stops)",
              file=sys.stderr, flush=True)
        if not is_loopback(config.host):
            print(f"callscope proxy: {config.host} is not loopback: anyone who reaches it can send requests upstream "
                  "with the keys clients pass through", file=sys.stderr, flush=True)

    await run_until_signalled(server, announce)
    print(stopped_line("proxy", server) + (f"; recorded in {server.session.path}" if server.session is not None else ""),
          file=sys.stderr, flush=True)
    return 0
