"""`callscope template FILE|GGUF [--check] [--json]`: what a chat template teaches, and which parser reads it.

The template (a ``.jinja`` file, a ``tokenizer_config.json``, or a GGUF's
``tokenizer.chat_template``, read without weights) is analysed by rendering it
with variants and diffing the renders (:mod:`~callscope.engine.templates`): the printout
is the learnt format description, the rendered call with its markers marked,
and the parser ``--format auto`` picks for it, with the reason. ``--check``
adds the round trip: the template renders a turn that calls two tools, and what
the model would have generated is fed to the chosen parser byte by byte; the
same calls must come back, streamed append-only and reconstructing (exit 1
when they do not).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from callscope.commands.common import CliError, add_template_timeout_option, apply_template_timeout

if TYPE_CHECKING:
    from callscope.engine.templates.analysis import TemplateAnalysis
    from callscope.engine.templates.chat import ChatTemplate
    from callscope.engine.templates.format_choice import FormatChoice


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "template",
        help="analyse a chat template: the tool-call syntax it teaches, and the parser that reads it",
        description="Render a chat template (a .jinja file, a tokenizer_config.json, or a GGUF's own template) with "
        "variants, diff the renders to learn how it writes tool calls, and print the learnt format description, the "
        "rendered call with its markers marked, and the parser --format auto picks for it.",
    )
    p.add_argument("file", metavar="FILE|GGUF", help="the chat template, or a GGUF model whose template to read")
    p.add_argument(
        "--check",
        action="store_true",
        help="round-trip: feed the rendered calls to the chosen parser byte by byte (exit 1 if they do not come back)",
    )
    p.add_argument("--json", action="store_true", help="print the analysis, the choice and the check as JSON")
    add_template_timeout_option(p)
    p.set_defaults(handler=run)


def load(path: str) -> tuple[ChatTemplate, str, str]:
    """``(the template, bos token, eos token)`` from a template file or a GGUF; one CliError line on failure."""
    from callscope.engine.core.errors import DecodeError
    from callscope.engine.templates.files import read_template_or_model

    try:
        found = read_template_or_model(path)
    except DecodeError as exc:
        raise CliError(str(exc)) from None
    return found.template, found.bos_token, found.eos_token


def run(args: argparse.Namespace) -> int:
    from callscope.engine.core.errors import DecodeError
    from callscope.engine.templates.chat import probe_caps
    from callscope.engine.templates.format_choice import choose_format
    from callscope.engine.templates.isolation import render_budget

    apply_template_timeout(args)
    template, bos, eos = load(args.file)
    try:
        with render_budget():  # the probes and the analysis share one time limit
            choice = choose_format(template, probe_caps(template), bos_token=bos, eos_token=eos, analyse=True)
    except DecodeError as exc:  # a template that fails, or is stopped at its limits: one line
        raise CliError(str(exc)) from None
    ok = all(trip.ok for trip in choice.trips) and bool(choice.trips)
    if args.json:
        json.dump(_document(template, choice, args.check), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(_text(template, choice, args.check))
    return 1 if args.check and not ok else 0


def _document(template: ChatTemplate, choice: FormatChoice, check: bool) -> dict[str, Any]:
    from callscope.engine.templates.evidence import spans

    analysis = choice.analysis
    doc: dict[str, Any] = {
        "template": template.name,
        "origin": template.origin,
        "format": choice.format_id,
        "format_reason": choice.reason,
        "derived": choice.derived,
        "analysis": analysis.to_json() if analysis is not None else None,
        "evidence": [s.to_json() for s in spans(analysis.generation, analysis.description)] if analysis else [],
    }
    if check:
        doc["check"] = {
            "ok": bool(choice.trips) and all(t.ok for t in choice.trips),
            "round_trips": [t.to_json() for t in choice.trips],
            "rejected": [t.to_json() for t in choice.rejected],
        }
    return doc


def _text(template: ChatTemplate, choice: FormatChoice, check: bool) -> str:
    from callscope.engine.core.terminal import terminal_line
    from callscope.engine.templates.evidence import marked, spans

    lines = [f"template: {template.name}", f"parser: {choice.format_id} ({choice.reason})"]
    analysis = choice.analysis
    if analysis is not None:
        lines += ["", *_description_lines(analysis)]
        if analysis.generation:
            lines += [
                "",
                "rendered call, as the model writes it (markers ⟦ ⟧, names « », keys ‹ ›):",
                "  " + marked(spans(analysis.generation, analysis.description)),
            ]
    if check:
        lines.append("")
        if not choice.trips:
            lines.append("check: nothing to round-trip (the template renders no tool call)")
        for trip in choice.trips:
            mode = "" if trip.enable_thinking is None else f" ({trip.switch}={str(trip.enable_thinking).lower()})"
            verdict = "OK" if trip.ok else "FAILED"
            lines.append(f"check{mode}: {verdict}, {trip.format_id} read {len(trip.calls)} of {len(trip.expected)} calls back")
            lines.append(f"  fed byte by byte: {trip.generation!r}")
            lines += [f"  problem: {p}" for p in trip.problems]
    return "\n".join(terminal_line(line) for line in lines) + "\n"  # the template chose what it renders


def _description_lines(analysis: TemplateAnalysis) -> list[str]:
    from callscope.engine.inspector.template_state import describe

    described = describe(analysis)
    out = [f"reasoning: {described.reasoning}"] if described.reasoning else []
    out.append(f"derived format: {described.title}")
    if not described.learnt:
        return out + [f"  because {note}" for note in described.notes]
    out += [f"  {label}: {value}" if label else f"  {value}" for label, value in described.fields]
    return out + [f"  note: {note}" for note in described.notes]
