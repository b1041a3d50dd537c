"""What several sub-commands share: errors, report output, reading inputs.

``callscope.cli`` imports this module for :class:`CliError` before it knows
the verb, so it imports nothing of the engine at the top: each helper imports
what it uses (``--version`` must not pay for the analysis engine).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from callscope.engine.analysis.analyzer import Analysis


class CliError(Exception):
    """A user error: printed as one line, exit code 2 (or ``exit_code``)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def add_template_timeout_option(p: argparse.ArgumentParser) -> None:
    """``--template-timeout S``: every verb that renders a chat template, which is untrusted input."""
    p.add_argument(
        "--template-timeout", type=float, metavar="S",
        help="seconds a chat template's renders may take in all before it is stopped (default 5, or "
        "$CALLSCOPE_TEMPLATE_TIMEOUT; memory: $CALLSCOPE_TEMPLATE_MEMORY MiB, default 512)",
    )


def apply_template_timeout(args: argparse.Namespace) -> None:
    """Put ``--template-timeout`` in force for this process (one CliError line for a meaningless value)."""
    seconds = getattr(args, "template_timeout", None)
    if seconds is None:
        return
    if not (math.isfinite(seconds) and seconds > 0):
        raise CliError(f"--template-timeout must be a finite number of seconds > 0, got {seconds!r}")
    from callscope.engine.templates.isolation import set_render_limits

    set_render_limits(seconds=seconds)


def add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the callscope.report/1 JSON document")
    parser.add_argument("--chunks", action="store_true", help="list every emitted chunk with its step")


def add_atomic_silence_option(parser: argparse.ArgumentParser) -> None:
    """``--atomic-silence S``: every verb that judges a captured stream (capture, proxy, serve) takes it alike."""
    from callscope.engine.streams.conformance import DEFAULT_ATOMIC_SILENCE_MS

    parser.add_argument(
        "--atomic-silence", type=float, default=DEFAULT_ATOMIC_SILENCE_MS / 1000, metavar="S",
        help="silence before a one-chunk call that counts as atomic-tool-call (default %(default)g s)",
    )


def add_policy_option(parser: argparse.ArgumentParser, default: str = "incremental") -> None:
    from callscope.engine.policies import POLICY_IDS

    parser.add_argument(
        "--policy", default=default, help=f"streaming policy: {' | '.join(POLICY_IDS)} (default {default})"
    )


def add_thinking_option(parser: argparse.ArgumentParser) -> None:
    """``--thinking auto|on|off``: whether the generation starts inside a reasoning block."""
    parser.add_argument(
        "--thinking",
        nargs="?",
        const="on",
        default="auto",
        choices=("auto", "on", "off"),
        help="does the generation start inside a reasoning block (the prompt ended with <think>)? auto (default): "
        "when the template may have opened one, the text decides (a reasoning closer first: on; a tool call or "
        "other markup first: off); on; off. --thinking alone is on",
    )


def check_policy(policy: str) -> str:
    from callscope.engine.policies import POLICY_IDS

    if policy not in POLICY_IDS:
        raise CliError(f"unknown policy {policy!r}; known policies: {', '.join(POLICY_IDS)}")
    return policy


def check_format(format_id: str) -> str:
    from callscope.engine.formats import FORMAT_IDS, UnknownFormat

    if format_id not in FORMAT_IDS:
        raise CliError(str(UnknownFormat(format_id)))
    return format_id


def read_tools(path: str | None) -> list[dict[str, Any]] | None:
    if path is None:
        return None
    from callscope.engine.core.tools import ToolsError, load_tools

    try:
        return load_tools(path)
    except ToolsError as exc:
        raise CliError(str(exc)) from None


def read_text(path: str, what: str = "file") -> str:
    """A UTF-8 text file's contents (``-`` reads standard input as bytes, bounded like a file, and
    names ``<stdin>`` and the byte offset of bad UTF-8); any failure is one CliError line."""
    from callscope.engine.core.files import decode_utf8, read_stdin, read_utf8

    if path == "-":
        return decode_utf8(read_stdin(CliError), "<stdin>", CliError, what)
    return read_utf8(path, CliError, what)


def print_report(analyses: list[Analysis], args: argparse.Namespace) -> None:
    """``--json``: the report document; otherwise a readable summary per run (plus chunks with --chunks)."""
    from callscope.engine.analysis.report import chunks_text, report_json, summary_text

    if getattr(args, "json", False):
        from callscope.engine.core.json_text import dumps
        from callscope.engine.core.terminal import terminal_json

        # built whole first, and never with NaN: a report either prints as valid JSON or not at all
        report = report_json(analyses, include_chunks=getattr(args, "chunks", False))
        try:
            text = dumps(report, ensure_ascii=False, indent=2, allow_nan=False)
        except ValueError as exc:
            raise CliError(f"cannot print the report as JSON: {exc}") from None
        sys.stdout.write(terminal_json(text) + "\n")  # the same document, with no raw C1 control or bidi override
        return
    for i, analysis in enumerate(analyses):
        if i:
            print()
        if getattr(args, "chunks", False):
            print(chunks_text(analysis))
            print()
        print(summary_text(analysis))
