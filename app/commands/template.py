"""`callscope template FILE|GGUF [--check] [--json]`: what a chat template teaches, and which parser reads it.

The template (a ``.jinja`` file, a ``tokenizer_config.json``, or a GGUF's
``tokenizer.chat_template``, read without weights) is analysed by rendering it
with variants and diffing the renders (:mod:`~engine.templates`): the printout
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

from callscope.commands.common import CliError
from callscope.engine.formats.derived.description import JSON, TAG_TAGGED

if TYPE_CHECKING:
    from callscope.engine.decode.format_choice import FormatChoice
    from callscope.engine.decode.templates import ChatTemplate
    from callscope.engine.templates.analysis import TemplateAnalysis


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
    p.set_defaults(handler=run)


def load(path: str) -> tuple[ChatTemplate, str, str]:
    """``(the template, bos token, eos token)`` from a template file or a GGUF; one CliError line on failure."""
    from callscope.engine.decode.errors import DecodeError
    from callscope.engine.decode.model import read_model_info
    from callscope.engine.decode.templates import ChatTemplate, load_template_file

    try:
        if _is_gguf(path):
            info = read_model_info(path)
            if info.chat_template is None:
                raise CliError(f"{path}: the model has no tokenizer.chat_template")
            name = f"gguf:tokenizer.chat_template of {info.file_name}"
            return ChatTemplate(name, info.chat_template, "model"), info.bos_token, info.eos_token
        return load_template_file(path), "", ""
    except DecodeError as exc:
        raise CliError(str(exc)) from None


def _is_gguf(path: str) -> bool:
    if path.lower().endswith(".gguf"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return False  # the template reader says what is wrong with the path


def run(args: argparse.Namespace) -> int:
    from callscope.engine.decode.format_choice import choose_format
    from callscope.engine.decode.templates import probe_caps

    template, bos, eos = load(args.file)
    choice = choose_format(template, probe_caps(template), bos_token=bos, eos_token=eos, analyse=True)
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
            mode = "" if trip.enable_thinking is None else f" (enable_thinking={str(trip.enable_thinking).lower()})"
            verdict = "OK" if trip.ok else "FAILED"
            lines.append(f"check{mode}: {verdict}, {trip.format_id} read {len(trip.calls)} of {len(trip.expected)} calls back")
            lines.append(f"  fed byte by byte: {trip.generation!r}")
            lines += [f"  problem: {p}" for p in trip.problems]
    return "\n".join(lines) + "\n"


def _description_lines(analysis: TemplateAnalysis) -> list[str]:
    d = analysis.description
    framing = analysis.framing
    out = []
    if framing is not None:
        if framing.reasoning_end:
            opens = "opens it" if framing.opens_reasoning else "does not open it"
            switch = ""
            if framing.opens_reasoning_thinking is not None or framing.opens_reasoning_no_thinking is not None:
                switch = f"; enable_thinking on: {_yes(framing.opens_reasoning_thinking)}, off: {_yes(framing.opens_reasoning_no_thinking)}"
            out.append(f"reasoning: {framing.reasoning_start or '(no opener)'} ... {framing.reasoning_end} (the generation prompt {opens}{switch})")
        else:
            out.append("reasoning: none found")
    if d is None:
        out.append("derived format: none")
        out += [f"  because {note}" for note in analysis.notes]
        return out
    out.append(f"derived format: {d.title}")
    markers = [
        ("end of turn", d.end_of_turn),
        ("section start", d.section_start),
        ("section end", d.section_end),
        ("call start", d.call_start),
        ("call end", d.call_end),
        ("between calls", d.call_separator),
    ]
    words: list[tuple[str, str]] = []
    if d.family == JSON:
        words += [
            ("calls", "the elements of one JSON array" if d.array else "one JSON object each"),
            ("name", f'the "{d.name_key}" member' if d.name_key else 'the object\'s only key: {"NAME": {...}}'),
            ("arguments", f'the "{d.arguments_key}" member' if d.name_key else "that key's value"),
        ]
        if d.id_key:
            words.append(("id", f'the "{d.id_key}" member'))
    else:
        markers.append(("after the name", d.name_suffix))
    if d.family == TAG_TAGGED:
        markers += [
            ("key prefix", d.key_prefix),
            ("key suffix", d.key_suffix),
            ("key suffix of non-strings", d.key_suffix_json),
            ("value end", d.value_end),
            ("between arguments", d.argument_separator),
        ]
    out += [f"  {label}: {value!r}" for label, value in markers if value]
    out += [f"  {label}: {value}" for label, value in words]
    if not d.parallel:
        out.append("  one call per turn")
    out += [f"  note: {note}" for note in analysis.notes]
    return out


def _yes(value: bool | None) -> str:
    return "?" if value is None else "opens" if value else "does not open"
