"""`callscope serve SOURCE`: an OpenAI-compatible server on loopback that plays a recording (or the model) to clients.

Point any client at it (the openai SDK's ``base_url="http://127.0.0.1:8788/v1"``,
the anthropic SDK's ``base_url="http://127.0.0.1:8788"``, an agent's endpoint
setting) to reproduce what a server sent, in the client's own output. SOURCE is
anything ``callscope replay`` reads (a trace, a shipped fixture by name, a
capture recording, a HAR file, an SSE dump) or a proxy session folder (its
turns in order, one per request); ``--model`` answers with the packaged model,
live; ``--quirks`` serves the quirks library (the request's ``model`` picks one).
Each answer is judged like a proxied turn: one line per turn on stderr.
Ctrl-C or SIGTERM stop it, exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
from pathlib import Path
from typing import Any

from callscope.commands.common import CliError, add_atomic_silence_option, add_policy_option, check_policy
from callscope.commands.listening import run_until_signalled, start_listening, stopped_line
from callscope.engine.capture.request import RequestError, check_seconds
from callscope.engine.streams.clients import PROFILES, default_profiles, parse_profiles

HELP = "an OpenAI-compatible server that plays a recording, a quirk or the model (live) to real clients"
DEFAULT_LISTEN = "127.0.0.1:8788"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help=HELP,
        description="Listen on HOST:PORT (loopback) and answer POST /v1/chat/completions, /v1/responses and "
        "/v1/messages (each recognised by its path) and GET /v1/models with SOURCE's streams, timed as recorded, "
        "converted when a client asks for another protocol, or with the model generating live (--model) or the "
        "quirks library (--quirks). Each answer is judged like a proxied turn, one line each on stderr.",
    )
    p.add_argument("source", nargs="?", metavar="SOURCE",
                   help="a .jsonl trace, a shipped fixture's name (e.g. headline_701_tokens), a capture recording, a "
                   "HAR file, an SSE dump, or a proxy session folder (its turns in order, one per request)")
    p.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                   help="where to listen (default %(default)s; port 0 picks a free one)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow listening on an address other than loopback (anyone who reaches it can use it)")
    p.add_argument("--speed", default="1", metavar="X|max",
                   help="play recorded times X times faster (default 1: as recorded), or max: no pauses")
    add_policy_option(p)
    p.add_argument("--quirks", nargs="?", const="", metavar="DIR",
                   help="serve the quirks library (or the quirks in DIR): the request's model names the quirk, "
                   "GET /v1/models lists them")
    p.add_argument("--record-dir", metavar="DIR",
                   help="record each streamed answer as a capture trace in a new session folder DIR/YYYYMMDD-HHMMSS")
    p.add_argument("--client", metavar="PROFILES",
                   help=f"client profiles that judge each answer, comma-separated ({', '.join(PROFILES)}; 'none'; "
                   f"default {','.join(default_profiles())})")
    add_atomic_silence_option(p)
    p.add_argument("--json", action="store_true",
                   help="also one JSON object per turn on stdout (its index record and its callscope.report/1 runs)")
    _add_model_options(p)
    p.set_defaults(handler=run, policy=None)


def _add_model_options(p: argparse.ArgumentParser) -> None:
    """``--model`` and ``callscope run``'s generation options (format, template, grammar forcing, sampling)."""
    from callscope.commands.run import add_form_options
    from callscope.engine.decode.demos import DEFAULT_MAX_STRING
    from callscope.engine.decode.grammar import ANY
    from callscope.engine.decode.loop import SamplerSettings
    from callscope.engine.decode.prompting import AUTO
    from callscope.engine.formats import FORMAT_IDS

    sampler = SamplerSettings()
    live = p.add_argument_group("the model, live (--model)")
    live.add_argument("--model", nargs="?", const="", metavar="GGUF",
                      help="answer with a model generating live: the packaged SmolLM2-135M-Instruct, or GGUF; it "
                      "honours the request's tools and tool_choice (a call is grammar-forced unless a tool's result "
                      "just came back)")
    live.add_argument("--format", default=AUTO, help=f"wire format: auto (from the template) | {' | '.join(FORMAT_IDS)}")
    live.add_argument("--template", metavar="FILE", help="render with this Jinja chat template (default: the model's)")
    live.add_argument("--force-tool", default=ANY, metavar="NAME|any",
                      help="what a forced call may be: any of the request's tools (default), or always NAME")
    live.add_argument("--max-calls", type=int, default=1, help="at most this many calls per answer (default 1)")
    live.add_argument("--min-calls", type=int, default=1, help="at least this many calls when forced (default 1)")
    live.add_argument("--content-chars", type=int, default=0, metavar="N",
                      help="let a forced answer open with a content line of up to N characters (default 0)")
    live.add_argument("--max-string", type=int, default=DEFAULT_MAX_STRING, metavar="N",
                      help=f"longest string a forced argument may hold unless its schema says (default "
                      f"{DEFAULT_MAX_STRING})")
    add_form_options(live)
    live.add_argument("--max-tokens", type=int, default=512, help="the most tokens one answer may have (default 512)")
    live.add_argument("--seed", type=int, default=sampler.seed, help=f"sampling seed (default {sampler.seed})")
    live.add_argument("--temp", type=float, default=sampler.temperature, help="sampling temperature")
    live.add_argument("--ctx", type=int, metavar="N", help="context window in tokens (default: min(4096, the model's))")


# ---------------------------------------------------------------- checking the arguments


def _speed(text: str) -> float | None:
    from callscope.engine.serve.choose import parse_speed

    try:
        return parse_speed(text)
    except ValueError:
        raise CliError(f"--speed takes a number > 0 or max, not {text!r}") from None


def build_config(args: argparse.Namespace):
    from callscope.engine.capture.proxy import is_loopback, parse_listen
    from callscope.engine.serve import ServeConfig

    try:
        check_seconds(args.atomic_silence, "--atomic-silence", zero_ok=True)
        host, port = parse_listen(args.listen)
        clients = parse_profiles(args.client) if args.client is not None else None
    except (RequestError, ValueError) as exc:
        raise CliError(str(exc)) from None
    if not is_loopback(host) and not args.allow_remote:
        raise CliError(f"--listen {args.listen}: {host} is not loopback; serve listens on loopback only unless "
                       "--allow-remote is given")
    return ServeConfig(host, port, _speed(args.speed), atomic=args.policy == "atomic",
                       record_dir=Path(args.record_dir) if args.record_dir else None,
                       atomic_silence_ms=args.atomic_silence * 1000, clients=clients)


def build_replier(args: argparse.Namespace) -> Any:
    """What answers: the source's streams, the quirks, or the model; an unreadable one is one line (exit 2)."""
    chosen = [what for what, given in (("SOURCE", args.source is not None), ("--model", args.model is not None),
                                       ("--quirks", args.quirks is not None)) if given]
    if len(chosen) != 1:
        raise CliError("give one of SOURCE, --model or --quirks" if not chosen else
                       f"give only one of SOURCE, --model or --quirks (got {' and '.join(chosen)})")
    if args.policy is not None:
        check_policy(args.policy)
    if args.model is not None:
        return _model_replier(args)
    from callscope.engine.serve import SourceError, serve_quirks, serve_recording

    try:
        if args.quirks is not None:
            return serve_quirks(args.quirks or None)
        return serve_recording(args.source, args.policy)
    except SourceError as exc:
        raise CliError(str(exc)) from None


def _model_replier(args: argparse.Namespace) -> Any:
    from callscope.commands.request import check_format_option, read_template
    from callscope.commands.run import chosen_forms
    from callscope.engine.core.errors import DecodeError
    from callscope.engine.decode.loop import SamplerSettings
    from callscope.engine.serve.model import ModelOptions, ModelSource

    check_format_option(args.format)
    for name, low in (("--max-tokens", 1), ("--max-calls", 1), ("--min-calls", 1), ("--max-string", 1),
                      ("--content-chars", 0)):
        if getattr(args, name[2:].replace("-", "_")) < low:
            raise CliError(f"{name} must be at least {low}")
    if args.min_calls > args.max_calls:
        raise CliError(f"--min-calls must be at most --max-calls ({args.max_calls})")
    if not (math.isfinite(args.temp) and args.temp >= 0):
        raise CliError(f"--temp must be a finite number >= 0, not {args.temp}")
    options = ModelOptions(
        path=args.model or None, format_id=args.format, template=read_template(args.template),
        force_tool=args.force_tool, max_calls=args.max_calls, min_calls=args.min_calls,
        content_chars=args.content_chars, max_string=args.max_string, forms=chosen_forms(args),
        policy=args.policy or "incremental", max_tokens=args.max_tokens,
        sampler=SamplerSettings(temperature=args.temp, seed=args.seed), n_ctx=args.ctx,
    )
    source = ModelSource(options)
    try:
        source.start()
    except DecodeError as exc:
        source.close()
        raise CliError(str(exc), exit_code=1 if type(exc).__name__ == "BackendBroken" else 2) from None
    return source


# ---------------------------------------------------------------- running


class TurnPrinter:
    """One line per finished turn on stderr (and, with ``--json``, one JSON object per turn on stdout)."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json

    def turn_started(self, turn: Any) -> None:
        pass

    def turn_lines(self, turn: Any, lines: Any) -> None:
        pass

    def turn_ended(self, turn: Any) -> None:
        try:
            print(turn.summary(), file=sys.stderr, flush=True)
            if self.as_json:
                from callscope.engine.analysis.report import report_json
                from callscope.engine.core.json_text import dumps

                report = turn.report if turn.report is not None else (
                    report_json(turn.analyses) if turn.analyses else None)
                print(dumps({**turn.index_record(), "report": report}, ensure_ascii=False, allow_nan=False),
                      flush=True)
        except BrokenPipeError:
            pass


def run(args: argparse.Namespace) -> int:
    config = build_config(args)
    replier = build_replier(args)
    try:
        return asyncio.run(_serve(config, replier, TurnPrinter(args.json)))
    except KeyboardInterrupt:
        return 0
    finally:
        close = getattr(replier, "close", None)
        if close is not None:
            close()


async def _serve(config: Any, replier: Any, printer: TurnPrinter) -> int:
    from callscope.engine.capture.proxy import is_loopback
    from callscope.engine.capture.proxy.judge import ProcessJudge
    from callscope.engine.serve import ServeServer

    server = ServeServer(config, replier, printer, ProcessJudge(report=printer.as_json))
    await start_listening(server, config.host, config.port)

    def announce() -> None:
        names = replier.names()
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        where = f"; recording to {server.session.path}" if server.session is not None else ""
        print(f"callscope serve: {replier.label} ({shown}) on {server.url}/v1{where} (Ctrl-C stops)",
              file=sys.stderr, flush=True)
        if not is_loopback(config.host):
            print(f"callscope serve: {config.host} is not loopback: anyone who reaches it can use it",
                  file=sys.stderr, flush=True)

    await run_until_signalled(server, announce)
    print(stopped_line("serve", server), file=sys.stderr, flush=True)
    return 0
