"""A chat template analysed: the format description it teaches, and the evidence for it.

:func:`analyze` renders the template with the variants of
:mod:`~callscope.engine.templates.renders`, finds how it frames the assistant's turn
(:mod:`~callscope.engine.templates.framing`) and how it writes calls
(:mod:`~callscope.engine.templates.calls`), and puts them together as a
:class:`~callscope.engine.formats.derived.description.FormatDescription`. The description
is then checked against the renders it came from: a derived parser must read
every one of them back (one call, two calls, an integer argument, no arguments),
or there is no description and ``notes`` says why. Plain data, JSON-serialisable.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from callscope.engine.formats.derived.description import FormatDescription
from callscope.engine.formats.derived.spec import derived_spec
from callscope.engine.templates.affixes import first_marker, marker_suffix
from callscope.engine.templates.calls import Generations, learn
from callscope.engine.templates.framing import Framing, frame
from callscope.engine.templates.renders import (
    ARGS_AB,
    ARGS_AN,
    FIRST,
    KEY_A,
    SECOND,
    TOOLS,
    VALUE_A,
    Renderer,
    Renders,
    collect,
)


@dataclass(slots=True)
class TemplateAnalysis:
    """What :func:`analyze` learnt about one template."""

    name: str
    description: FormatDescription | None
    framing: Framing | None
    #: The one-call generation the description was learnt from (as the model would write it).
    generation: str = ""
    #: The same with two calls ("" when the template renders one call only).
    generation_two: str = ""
    thinking: bool = False
    notes: list[str] = field(default_factory=list)
    #: Why variants failed to render (the template's own messages), for the evidence.
    render_errors: list[str] = field(default_factory=list)

    @property
    def renders_calls(self) -> bool:
        return bool(self.generation)

    def to_json(self) -> dict[str, Any]:
        framing = self.framing
        return {
            "template": self.name,
            "description": self.description.to_json() if self.description is not None else None,
            "framing": None
            if framing is None
            else {
                "prompt_tail": framing.prompt_tail,
                "end_of_turn": framing.end_of_turn,
                "reasoning_start": framing.reasoning_start,
                "reasoning_end": framing.reasoning_end,
                "opens_reasoning": framing.opens_reasoning,
                "opens_reasoning_with_thinking": framing.opens_reasoning_thinking,
                "opens_reasoning_without_thinking": framing.opens_reasoning_no_thinking,
                "prompt_holds": framing.prompt_holds,
            },
            "generation": self.generation,
            "generation_two_calls": self.generation_two,
            "starts_in_reasoning": self.thinking,
            "notes": list(self.notes),
            "render_errors": list(self.render_errors),
        }


def analyze(render: Renderer, name: str) -> TemplateAnalysis:
    """Learn the format description of the template behind ``render`` (see the module docstring)."""
    renders = collect(render)
    framing = frame(renders)
    if framing is None:
        why = "the template renders no generation prompt" if renders.prompt is None else "the template renders no answer"
        return TemplateAnalysis(name, None, None, notes=[why], render_errors=renders.errors)
    end_of_turn = turn_end(renders, framing)
    learnt = learn(renders, framing, renders.ids, end_of_turn)
    gens = learnt.generations
    analysis = TemplateAnalysis(
        name,
        None,
        framing,
        generation=(gens.lead + gens.one) if gens else "",
        generation_two=(gens.lead + gens.two) if gens and gens.two else "",
        thinking=gens.thinking if gens else False,
        notes=list(learnt.notes),
        render_errors=renders.errors,
    )
    if learnt.description is None or gens is None:
        return analysis
    description = dataclasses.replace(
        learnt.description,
        source=name,
        reasoning_start=framing.reasoning_start,
        reasoning_end=framing.reasoning_end,
        opens_reasoning=framing.opens_reasoning,
        end_of_turn=end_of_turn,
        prompt_holds=framing.prompt_holds.strip(),
    )
    problem = reads_back(description, gens)
    if problem:
        analysis.notes.append(f"the learnt syntax does not read the template's own renders back: {problem}")
        return analysis
    analysis.description = description
    return analysis


def turn_end(renders: Renders, framing: Framing) -> str:
    """The stop marker after a call turn: the first marker a call turn and an answer both end with."""
    if renders.one_call is not None and renders.answer is not None:
        shared = first_marker(marker_suffix(renders.one_call, renders.answer))
        if shared:
            return shared
    return framing.end_of_turn


def reads_back(description: FormatDescription, gens: Generations) -> str:
    """"" when a parser of ``description`` reads every analysed render back; else what went wrong."""
    spec = derived_spec(description, "derived_check")
    cases = [("one call", gens.one, [(FIRST, ARGS_AB)])]
    if gens.two is not None and description.parallel:
        cases.append(("two calls", gens.two, [(FIRST, ARGS_AB), (SECOND, {KEY_A: VALUE_A})]))
    if gens.typed is not None:
        cases.append(("an integer argument", gens.typed, [(FIRST, ARGS_AN)]))
    if gens.empty is not None:
        cases.append(("no arguments", gens.empty, [(FIRST, {})]))
    for what, text, expected in cases:
        parser = spec.parser(TOOLS, thinking=gens.thinking)  # type: ignore[call-arg]
        parser.feed(gens.lead + text)
        parser.finish()
        got = []
        for parsed in parser.snapshot().calls:
            try:
                got.append((parsed.name, json.loads(parsed.arguments)))
            except ValueError:
                got.append((parsed.name, parsed.arguments))
        if got != expected:
            return f"{what}: expected {expected}, read {got}"
    return ""


__all__ = ["TemplateAnalysis", "analyze", "reads_back"]
