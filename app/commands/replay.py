"""`callscope replay FILE`: re-analyse a recorded trace, an imported byte-prefix fixture file, or captured streams.

Captured streams are callscope's capture traces (``capture --record``, ``proxy
--record-dir``) and what other tools recorded: a raw SSE dump, a HAR file, a
mitmproxy flow file. The server chose what went on their wire, so ``--policy``
and ``--format`` do not apply to them (refused); ``--atomic-silence`` re-judges
them with another silence than they were recorded with.
"""

from __future__ import annotations

import argparse
import math

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

DEFAULT_POLICY = "incremental"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="replay a recorded trace or a llama.cpp byte-prefix fixture file and report",
        description="Replay FILE, detected by content: a callscope.trace/1 trace (a run, or a captured stream), a "
        "byte-prefix fixture file, a raw SSE dump (curl -N output, a .sse export), a HAR file or a mitmproxy flow "
        "file; report calls, TTFD and violations, one run per named fixture or captured stream.",
    )
    p.add_argument("file", help="a .jsonl trace, a fixture file, a .sse dump, a .har or a mitmproxy flow file, or the "
                   "name of a shipped fixture (e.g. headline_701_tokens)")
    p.add_argument("--name", metavar="RUN", help="only this named fixture of a fixture file, or stream of a HAR or "
                   "flow file (FILE#N)")
    p.add_argument(
        "--format",
        help="re-analyse a trace with another wire format: auto (the parser of the chat template the trace names) | "
        f"{' | '.join(FORMAT_IDS)} (traces only)",
    )
    add_policy_option(p, DEFAULT_POLICY)
    p.add_argument("--atomic-silence", type=float, metavar="S",
                   help="captured streams only: the silence before a one-chunk call that counts as atomic-tool-call "
                   "(default: what the capture was recorded with, else 1 s)")
    add_report_options(p)
    p.set_defaults(handler=run, policy=None)  # None: not given (a capture refuses a policy it cannot apply)


def run(args: argparse.Namespace) -> int:
    if args.policy is not None:
        check_policy(args.policy)
    if args.format is not None and args.format != "auto":
        check_format(args.format)
    if args.atomic_silence is not None and not (math.isfinite(args.atomic_silence) and args.atomic_silence >= 0):
        raise CliError(f"--atomic-silence must be a finite number of seconds >= 0, got {args.atomic_silence!r}")
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
    _check_options(recording, args)
    if size is not None:
        status.show(f"analysing {_contents(recording)} of {path}...", elapsed=True)
    silence = args.atomic_silence * 1000 if args.atomic_silence is not None else None
    format_id, reason = _trace_format(recording, args.format)
    analyses = analyze_recording(recording, args.policy or DEFAULT_POLICY, format_id, args.name, silence)
    if reason:
        for analysis in analyses:
            analysis.source.extra["format_reason"] = reason
    return analyses


def _trace_format(recording: Recording, requested: str | None) -> tuple[str | None, str]:
    """``--format`` for a trace: auto reads it from the chat template the trace names, and a format derived
    from that template is derived again (the one detection); ``(format or None, why)``."""
    trace = recording.trace
    if trace is None or not trace.steps:
        if requested == "auto":
            raise TraceError(f"{recording.path}: --format auto reads a trace's chat template; this {recording.kind} "
                             "holds none")
        return requested, ""
    if requested != "auto" and (requested is not None or trace.header.format in (*FORMAT_IDS, None)):
        return requested, ""  # nothing to derive: no template is read (replay stays free of Jinja)
    from callscope.engine.templates.recorded import RecordedFormatError, recorded_format

    try:
        format_id, choice = recorded_format(trace.header.format, trace.header.template, requested)
    except RecordedFormatError as exc:
        raise TraceError(f"{recording.path}: {exc}") from None
    if choice is None:
        return requested, ""
    return format_id, f"{choice.reason} (the chat template the trace names: {trace.header.template})"


def _check_options(recording: Recording, args: argparse.Namespace) -> None:
    """``--policy`` means what goes on the wire: a capture's server already chose (refused, like ``--format``);
    ``--atomic-silence`` judges received chunks only."""
    if recording.holds_captures and args.policy is not None:
        raise TraceError(f"{recording.path}: a capture holds the server's chunks: the server chose what went on the "
                         "wire, so --policy does not apply")
    if not recording.holds_captures and args.atomic_silence is not None:
        raise TraceError(f"{recording.path}: --atomic-silence judges captured streams; this {recording.kind} holds "
                         "generated text (its policy decides what streams)")


def _contents(recording: Recording) -> str:
    """``100,000 steps`` / ``3 fixtures`` / ``5,000 received lines``: how much there is to analyse."""
    if recording.fixtures is not None:
        return f"{len(recording.fixtures):,} fixtures"
    if recording.captures is not None:
        return f"{len(recording.captures):,} captured stream{'s' if len(recording.captures) != 1 else ''}"
    trace = recording.trace
    if trace is None:
        return "the recording"
    if not trace.steps and trace.lines:
        return f"{len(trace.lines):,} received lines"
    return f"{len(trace.steps):,} steps"
