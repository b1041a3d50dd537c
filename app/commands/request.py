"""The request options ``callscope run`` and ``callscope prompt`` share: what to render, with which template/format.

Its own module (not in ``run.py``) so that ``callscope prompt``, which loads no
weights, does not import the decode loop, the grammar compiler or the report
code just to parse the same options. Helpers import what they read from
inside, so registering the options costs only the format list and the demo
presets (:mod:`~callscope.engine.decode.demos`, which loads nothing else).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from callscope.commands.common import CliError, add_template_timeout_option, read_tools
from callscope.engine.core.shipped import resource
from callscope.engine.decode.demos import DEFAULT_DEMO, DEMOS
from callscope.engine.decode.prompting import AUTO
from callscope.engine.formats import FORMAT_IDS

if TYPE_CHECKING:
    from callscope.engine.templates.chat import ChatTemplate


def add_request_options(p: argparse.ArgumentParser) -> None:
    """Options ``run`` and ``prompt`` share: what to render and with which template/format."""
    p.add_argument(
        "--format", default=AUTO, help=f"wire format: auto (detect from the template) | {' | '.join(FORMAT_IDS)}"
    )
    p.add_argument("--template", metavar="FILE", help="render with this Jinja chat template (or tokenizer_config.json)")
    p.add_argument("--prompt", help="the user message (default: the demo's)")
    p.add_argument(
        "--messages", metavar="FILE", help="JSON messages array, or a chat request body with messages (+tools)"
    )
    p.add_argument("--tools", metavar="FILE", help="OpenAI tools array (default: the demo's, in resources/tools/)")
    p.add_argument(
        "--demo",
        choices=tuple(DEMOS),
        default=DEFAULT_DEMO,
        help="the demo request to start from: " + "; ".join(f"{d.name} = {d.summary}" for d in DEMOS.values())
        + f" (default {DEFAULT_DEMO}; --prompt, --messages and --tools replace its parts)",
    )
    add_template_timeout_option(p)


def read_request(args: argparse.Namespace) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """Messages and tools from ``--messages``/``--prompt``/``--tools`` (defaults: the ``--demo`` request)."""
    from callscope.engine.core.errors import DecodeError
    from callscope.engine.decode.demos import get_demo
    from callscope.engine.decode.messages import load_messages

    demo = get_demo(getattr(args, "demo", None))
    tools_from_request = None
    if args.messages:
        try:
            messages, tools_from_request = load_messages(args.messages)
        except DecodeError as exc:
            raise CliError(str(exc)) from None
        if args.prompt is not None:
            messages = [*messages, {"role": "user", "content": args.prompt}]
    else:
        messages = demo.messages(args.prompt)
    if args.tools:
        tools = read_tools(args.tools)
    elif tools_from_request is not None:
        tools = tools_from_request
    else:
        tools = read_tools(str(resource("tools", demo.tools_file)))
    return messages, tools


def read_template(path: str | None) -> ChatTemplate | None:
    """``--template FILE`` loaded (None without it); a bad file is one CliError line."""
    if path is None:
        return None
    from callscope.engine.core.errors import DecodeError
    from callscope.engine.templates.chat import load_template_file

    try:
        return load_template_file(path)
    except DecodeError as exc:
        raise CliError(str(exc)) from None


def check_format_option(format_id: str) -> str:
    """``--format``: auto or a known wire format, else one CliError line."""
    from callscope.engine.core.errors import DecodeError
    from callscope.engine.decode.prompting import check_format_choice

    try:
        return check_format_choice(format_id)
    except DecodeError as exc:
        raise CliError(str(exc)) from None
