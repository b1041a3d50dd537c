"""`callscope prompt`: print the prompt a request renders to, and the wire format detected, without loading weights.

Templates are debugged here: ``--template FILE`` renders any Jinja chat
template the way a model's runtime does; ``--model PATH`` reads the GGUF's own
template from its metadata (no weights). Neither: the packaged model's.
"""

from __future__ import annotations

import argparse
import json
import sys

from callscope.commands.common import CliError, apply_template_timeout
from callscope.commands.request import add_request_options, check_format_option, read_request, read_template
from callscope.engine.core.errors import DecodeError
from callscope.engine.core.gguf import read_model_info
from callscope.engine.decode.prompting import plan_prompt


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "prompt",
        help="render a request with a chat template and show the detected wire format (no weights loaded)",
        description="Render messages + tools with a chat template (--template FILE, or the GGUF's own from --model, "
        "or the packaged model's) and print the prompt and the wire format detected from the template's markers.",
    )
    p.add_argument(
        "--model", metavar="PATH", help="read the chat template and special tokens from this GGUF's metadata"
    )
    add_request_options(p)
    p.add_argument("--json", action="store_true", help='print {"format": ..., "prompt": ...} (plus the reasons)')
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    apply_template_timeout(args)
    check_format_option(args.format)
    messages, tools = read_request(args)
    template = read_template(args.template)
    try:
        # With --template, the model only lends its special tokens, and only if one was named.
        info = read_model_info(args.model) if (args.model or template is None) else None
        plan = plan_prompt(messages, tools, args.format, template, info)
    except DecodeError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        doc = {"format": plan.format_id, "prompt": plan.prompt, **plan.to_json()}
        if info is not None:
            doc["model"] = info.to_json()
        json.dump(doc, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    from callscope.engine.core.terminal import terminal_line

    # the prompt below is printed as rendered; these lines quote the template's markers and the GGUF's name
    print(terminal_line(f"format: {plan.format_id} ({plan.format_reason})"))
    print(terminal_line(f"template: {plan.template.name} ({plan.template_reason})"))
    print("-" * 72)
    sys.stdout.write(plan.prompt)
    if not plan.prompt.endswith("\n"):
        sys.stdout.write("\n")
    return 0
