"""`callscope` command line: one sub-command per module under ``callscope.commands``.

Never imports Qt: ``callscope replay`` must work on a machine without a display.
Only ``callscope gui`` (and ``bench gui``) import the Qt layer, lazily.

Start-up is part of the interface: a verb pays only for its own imports, so
``callscope --version`` loads no command module and ``callscope replay`` never
loads httpx or jinja2. The parser is built in two passes: the first knows
every verb by name and one-line help only (enough for ``--help``,
``--version`` and picking the verb), the second imports the chosen verb's
module and lets it register its real arguments. ``callscope bench cli``
measures this.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType
from typing import NoReturn

from callscope.commands.common import CliError
from callscope.engine import __version__

#: Each verb: (its module under ``callscope.commands``, the one-line help ``callscope --help`` lists),
#: in the order ``--help`` lists them. The help lives here so that listing them imports none of them;
#: a test checks each module registers the same line.
COMMANDS: dict[str, tuple[str, str]] = {
    "replay-text": ("replay_text", "feed a raw generation to a format parser in steps and report what would stream"),
    "replay": ("replay", "replay a recorded trace or a llama.cpp byte-prefix fixture file and report"),
    "run": ("run", "generate with a real model (llama-cpp-python) and report the tool-call stream live"),
    "prompt": ("prompt", "render a request with a chat template and show the detected wire format (no weights loaded)"),
    "template": ("template", "analyse a chat template: the tool-call syntax it teaches, and the parser that reads it"),
    "capture": ("capture", "stream a live server's answer (chat completions, Responses, Anthropic) and check its "
                "tool-call deltas"),
    "proxy": ("proxy", "a recording proxy: forward a client's requests to its server unchanged, record and judge "
              "each stream"),
    "clients": ("clients", "what each client library (openai, AI SDK, LangChain, anthropic...) ends with, per "
                "stream"),
    "serve": ("serve", "an OpenAI-compatible server that plays a recording, a quirk or the model (live) to real "
              "clients"),
    "bench": ("bench", "run a benchmark (parse, template, replay, decode, demo, gui, longline, capture, proxy, clients, cli, "
              "all)"),
    "gui": ("gui", "open the inspector window (a trace, a fixture, or a live run of the packaged model)"),
}
#: Sub-command modules, in the order `--help` lists them.
COMMAND_MODULES = tuple(module for module, _ in COMMANDS.values())


class CommandUnavailable(Exception):
    """A verb's module failed to import: a broken installation, reported (exit 1) instead of a missing verb."""

    def __init__(self, command: str, module: str, cause: BaseException) -> None:
        super().__init__(f"cannot load the {command} command ({module}): {type(cause).__name__}: {cause}")
        self.command = command


class _OneLineErrors(argparse.ArgumentParser):
    """Usage errors as one line (plus the exit code 2), like every other input error here."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``callscope`` parser: every verb listed, and ``command``'s real arguments (its module imported).

    Without ``command`` no command module is imported: the verbs are placeholders that accept
    anything, which is all the first pass needs. Raises :class:`CommandUnavailable` when the
    chosen verb's module cannot be imported.
    """
    parser = _OneLineErrors(
        prog="callscope",
        description="An oscilloscope for streaming LLM tool calls: parse, stream, reconcile, and time them.",
    )
    parser.add_argument("--version", action="version", version=f"callscope {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        if name == command:
            load_command(name).register(sub)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def load_command(name: str) -> ModuleType:
    """Import verb ``name``'s module; a failed import is a :class:`CommandUnavailable`, never a silently missing verb."""
    module_name = f"callscope.commands.{COMMANDS[name][0]}"
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:  # a missing dependency or module: the installation is broken
        raise CommandUnavailable(name, module_name, exc) from exc


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Two passes: find the verb (``--help``/``--version``/usage errors end here), then parse its arguments."""
    argv = sys.argv[1:] if argv is None else list(argv)
    chosen, _ = build_parser().parse_known_args(argv)
    return build_parser(chosen.command).parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except CommandUnavailable as exc:
        print(f"callscope: {exc}", file=sys.stderr)
        return 1
    try:
        return int(args.handler(args) or 0)
    except CliError as exc:
        from callscope.engine.core.terminal import terminal_line

        print(f"callscope {args.command}: {terminal_line(str(exc))}", file=sys.stderr)  # one line, whatever it quotes
        return exc.exit_code
    except KeyboardInterrupt:
        print("callscope: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
