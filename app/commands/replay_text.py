"""`callscope replay-text FILE --format F`: feed a raw generation in steps and report."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from callscope.commands.common import (
    CliError,
    add_policy_option,
    add_report_options,
    add_template_timeout_option,
    add_thinking_option,
    apply_template_timeout,
    check_format,
    check_policy,
    print_report,
    read_text,
    read_tools,
)
from callscope.commands.status import StatusLine, large_input, megabytes
from callscope.engine.formats import FORMAT_IDS, resolve_thinking
from callscope.engine.recordings.replay_text import analyze_text
from callscope.engine.recordings.text_source import BadStep, parse_step, rate_problem


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay-text",
        help="feed a raw generation to a format parser in steps and report what would stream",
        description="Feed FILE (a raw model generation) to the format's parser one step at a time, "
        "run the streaming policy, and report calls, TTFD and violations.",
    )
    p.add_argument("file", help="the generated text (UTF-8); - reads standard input")
    p.add_argument(
        "--format",
        required=True,
        help=f"wire format: auto (with --template: the parser that reads that template back) | {' | '.join(FORMAT_IDS)}",
    )
    p.add_argument(
        "--template",
        metavar="FILE",
        help="the chat template the model was prompted with (for --format auto: its dedicated or derived parser)",
    )
    p.add_argument("--tools", help="OpenAI tools array (JSON); gives parameter types to qwen3_coder")
    add_thinking_option(p)
    add_template_timeout_option(p)
    add_policy_option(p)
    p.add_argument("--step", default="char", help="char | byte | N (N characters per step); default char")
    p.add_argument("--rate", type=float, help="give step k the time k/RATE seconds (tokens per second)")
    p.add_argument("--record", metavar="OUT", help="also write the steps as a callscope.trace/1 trace")
    add_report_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    apply_template_timeout(args)
    reason, thinking = _resolve_format(args)
    check_format(args.format)
    check_policy(args.policy)
    if args.rate is not None and not (math.isfinite(args.rate) and args.rate > 0):
        raise CliError(f"--rate must be a finite positive number of steps per second, not {args.rate}")
    try:
        unit, size = parse_step(args.step)
    except BadStep as exc:
        raise CliError(str(exc)) from None
    tools = read_tools(args.tools)
    text = read_text(args.file, "a UTF-8 text file")
    problem = rate_problem(text, unit, size, args.rate) if args.rate is not None else None
    if problem is not None:
        raise CliError(problem)
    with StatusLine.for_args(args) as status:  # a large generation takes seconds: say so, erase before the report
        large = large_input(args.file) if status.enabled and args.file != "-" else None
        if large is not None:
            status.show(f"analysing {args.file} ({megabytes(large)})...", elapsed=True)
        analysis = analyze_text(
            text, args.format, args.policy, tools, unit, size, args.rate, name="stdin" if args.file == "-" else Path(args.file).stem, path=args.file,
            thinking=thinking,
        )
    if reason:
        analysis.source.extra["format_reason"] = reason
    if args.record:
        from callscope.engine.recordings.trace_io import write_analysis_trace  # issue 3: traces

        try:
            write_analysis_trace(args.record, analysis, tools=tools, description=f"replay-text of {args.file}")
        except OSError as exc:
            raise CliError(f"cannot write the recording {args.record}: {exc.strerror or exc}") from None
    if reason and not args.json:
        from callscope.engine.core.terminal import terminal_line

        print(terminal_line(f"format: {args.format} ({reason})"))  # the reason quotes the template's markers
        print()
    print_report([analysis], args)
    return 0


def _resolve_format(args: argparse.Namespace) -> tuple[str, bool | str]:
    """``--format`` and ``--thinking`` with ``--template``: ``(why this format, how the parser starts)``.

    ``--format auto`` takes the template's parser (the one detection); ``--thinking auto``
    is undecided only when the template may open reasoning (without a template it cannot).
    """
    if args.format == "auto" and not args.template:
        raise CliError("--format auto needs --template FILE (the chat template the generation answers)")
    if not args.template:
        return "", resolve_thinking(args.thinking, False)
    from callscope.commands.request import read_template
    from callscope.engine.core.errors import DecodeError
    from callscope.engine.templates.format_choice import choose_format

    template = read_template(args.template)
    try:
        choice = choose_format(template)
    except DecodeError as exc:  # a template that fails, or is stopped at its limits
        raise CliError(str(exc)) from None
    reason = ""
    if args.format == "auto":
        args.format = choice.format_id
        reason = choice.reason
    return reason, choice.thinking(args.thinking)
