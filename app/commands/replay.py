"""`callscope replay FILE`: re-analyse a recorded trace or an imported byte-prefix fixture file."""

from __future__ import annotations

import argparse

from callscope.commands.common import (
    CliError,
    add_policy_option,
    add_report_options,
    check_format,
    check_policy,
    print_report,
)
from callscope.engine.formats import FORMAT_IDS
from callscope.engine.replay import load_analyses
from callscope.engine.shipped import resolve_recording
from callscope.engine.trace import TraceError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a recorded trace or a llama.cpp byte-prefix fixture file and report",
        description="Replay FILE, a callscope.trace/1 trace or a byte-prefix fixture file (detected by content), "
        "through a streaming policy and report calls, TTFD and violations; one run per named fixture.",
    )
    p.add_argument("file", help="a .jsonl trace or a byte-prefix fixture file, or the name of a shipped fixture "
                   "(e.g. headline_701_tokens)")
    p.add_argument("--name", metavar="FIXTURE", help="only this named fixture of a fixture file")
    p.add_argument(
        "--format", help=f"re-analyse a trace with another wire format: {' | '.join(FORMAT_IDS)} (traces only)"
    )
    add_policy_option(p)
    add_report_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    check_policy(args.policy)
    if args.format is not None:
        check_format(args.format)
    try:
        analyses = load_analyses(resolve_recording(args.file), args.policy, args.format, args.name)
    except TraceError as exc:
        raise CliError(str(exc)) from None
    print_report(analyses, args)
    return 0
