"""`callscope` command line: one sub-command per module under ``app.commands``.

Never imports Qt: ``callscope replay`` must work on a machine without a display.
Only ``callscope gui`` (and ``bench gui``) import the Qt layer, lazily.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

from callscope.commands.common import CliError
from callscope.engine import __version__

#: Sub-command modules, in the order `--help` lists them.
COMMAND_MODULES = ("replay_text", "replay", "run", "prompt", "capture", "bench", "gui")


class _OneLineErrors(argparse.ArgumentParser):
    """Usage errors as one line (plus the exit code 2), like every other input error here."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineErrors(
        prog="callscope",
        description="An oscilloscope for streaming LLM tool calls: parse, stream, reconcile, and time them.",
    )
    parser.add_argument("--version", action="version", version=f"callscope {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"callscope.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"callscope.commands.{name}":
                raise
            continue
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except CliError as exc:
        print(f"callscope {args.command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("callscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
