"""What several sub-commands share: errors, report output, reading inputs."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from callscope.engine.analysis import Analysis
from callscope.engine.files import read_utf8
from callscope.engine.formats import FORMAT_IDS, UnknownFormat
from callscope.engine.policies import POLICY_IDS
from callscope.engine.report import chunks_text, report_json, summary_text
from callscope.engine.tools import ToolsError, load_tools


class CliError(Exception):
    """A user error: printed as one line, exit code 2 (or ``exit_code``)."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def add_report_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print the callscope.report/1 JSON document")
    parser.add_argument("--chunks", action="store_true", help="list every emitted chunk with its step")


def add_policy_option(parser: argparse.ArgumentParser, default: str = "incremental") -> None:
    parser.add_argument(
        "--policy", default=default, help=f"streaming policy: {' | '.join(POLICY_IDS)} (default {default})"
    )


def check_policy(policy: str) -> str:
    if policy not in POLICY_IDS:
        raise CliError(f"unknown policy {policy!r}; known policies: {', '.join(POLICY_IDS)}")
    return policy


def check_format(format_id: str) -> str:
    if format_id not in FORMAT_IDS:
        raise CliError(str(UnknownFormat(format_id)))
    return format_id


def read_tools(path: str | None) -> list[dict[str, Any]] | None:
    if path is None:
        return None
    try:
        return load_tools(path)
    except ToolsError as exc:
        raise CliError(str(exc)) from None


def read_text(path: str, what: str = "file") -> str:
    """A UTF-8 text file's contents (``-`` reads standard input); any failure is one CliError line."""
    if path == "-":
        try:
            return sys.stdin.read()
        except UnicodeDecodeError as exc:
            raise CliError(f"cannot read {what} from standard input: not UTF-8 text (byte {exc.start})") from None
    return read_utf8(path, CliError, what)


def print_report(analyses: list[Analysis], args: argparse.Namespace) -> None:
    """``--json``: the report document; otherwise a readable summary per run (plus chunks with --chunks)."""
    if getattr(args, "json", False):
        json.dump(report_json(analyses, include_chunks=getattr(args, "chunks", False)), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return
    for i, analysis in enumerate(analyses):
        if i:
            print()
        if getattr(args, "chunks", False):
            print(chunks_text(analysis))
            print()
        print(summary_text(analysis))
