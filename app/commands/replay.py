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
from callscope.commands.status import StatusLine, large_input, megabytes
from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.core.shipped import resolve_recording
from callscope.engine.formats import FORMAT_IDS
from callscope.engine.recordings.replay import Recording, analyze_recording, load_recording
from callscope.engine.recordings.trace import TraceError


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
        with StatusLine.for_args(args) as status:  # erased before the report or an error line
            analyses = load_and_analyse(resolve_recording(args.file), args, status)
    except TraceError as exc:
        raise CliError(str(exc)) from None
    print_report(analyses, args)
    return 0


def load_and_analyse(path: str, args: argparse.Namespace, status: StatusLine) -> list[Analysis]:
    """Read, then analyse the recording; a large file names each step on the status line as it goes."""
    size = large_input(path) if status.enabled else None
    if size is not None:
        status.show(f"reading {path} ({megabytes(size)})...", elapsed=True)
    recording = load_recording(path)
    if size is not None:
        status.show(f"analysing {_contents(recording)} of {path}...", elapsed=True)
    return analyze_recording(recording, args.policy, args.format, args.name)


def _contents(recording: Recording) -> str:
    """``100,000 steps`` / ``3 fixtures`` / ``5,000 received lines``: how much there is to analyse."""
    if recording.fixtures is not None:
        return f"{len(recording.fixtures):,} fixtures"
    trace = recording.trace
    if trace is None:
        return "the recording"
    if not trace.steps and trace.lines:
        return f"{len(trace.lines):,} received lines"
    return f"{len(trace.steps):,} steps"
