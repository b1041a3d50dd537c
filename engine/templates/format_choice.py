"""``--format auto`` for a given chat template: its dedicated parser if it reads the template back, else a derived one.

The template's markers point at a dedicated format (the specs' template signs,
in llama.cpp's order); the choice is then *checked*: the template renders a
turn that calls two tools, and the candidate parser must read it back byte by
byte (:mod:`callscope.engine.templates.roundtrip`). A sign can match a template whose
calls look different (GLM's ``<tool_call>NAME<arg_key>...`` holds Hermes's
``<tool_call>``), and a template may match no sign at all; either way the
template is analysed (:func:`callscope.engine.templates.analysis.analyze`) and the format
derived from it is registered and checked the same way. The first that
round-trips wins, and the reason says which and why. A template that renders
no call at all keeps what its signs say: there is nothing to check.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from callscope.engine.formats.derived import register_derived
from callscope.engine.templates.analysis import TemplateAnalysis, analyze
from callscope.engine.templates.chat import ChatTemplate, FormatDetection, TemplateCaps, detect_format
from callscope.engine.templates.isolation import within_render_budget
from callscope.engine.templates.roundtrip import RoundTrip, check_turns, round_trip


@dataclass(slots=True)
class FormatChoice:
    """The format ``--format auto`` picked for a template, why, and the evidence."""

    format_id: str
    reason: str
    derived: bool = False
    #: The template analysis, when one was run (a dedicated parser that round-trips needs none).
    analysis: TemplateAnalysis | None = None
    #: The round trips of the chosen parser (empty when the template renders no call).
    trips: list[RoundTrip] = field(default_factory=list)
    #: The round trips of a dedicated parser that was tried and failed.
    rejected: list[RoundTrip] = field(default_factory=list)

    @property
    def detection(self) -> FormatDetection:
        return FormatDetection(self.format_id, self.reason)


@within_render_budget  # every render of the analysis and the round trips shares one time limit
def choose_format(
    template: ChatTemplate,
    caps: TemplateCaps | None = None,
    *,
    bos_token: str = "",
    eos_token: str = "",
    analyse: bool = False,
) -> FormatChoice:
    """The parser for ``template`` (see the module docstring); ``analyse`` runs the analysis even when not needed."""
    render = template.renderer(bos_token, eos_token)
    sign = detect_format(template.source, caps)
    turns = check_turns(render)
    analysis = analyze(render, template.name) if analyse else None
    if not turns:
        return FormatChoice(sign.format_id, f"{sign.reason}; the template renders no tool call to check", analysis=analysis)
    trips = [round_trip(turn, sign.format_id) for turn in turns]
    if all(trip.ok for trip in trips):
        return FormatChoice(
            sign.format_id, f"{sign.reason}; its parser reads the template's rendered calls back", analysis=analysis, trips=trips
        )
    failed = next(trip for trip in trips if not trip.ok)
    why_not = f"{sign.format_id} ({sign.reason}) does not read the template's calls back: {failed.problems[0]}"
    analysis = analysis or analyze(render, template.name)
    description = analysis.description
    if description is None:
        note = "; ".join(analysis.notes) or "no syntax learnt"
        return FormatChoice(
            sign.format_id, f"{why_not}; no format could be derived ({note}), so {sign.format_id} it is", analysis=analysis,
            trips=trips,
        )
    spec = register_derived(description)
    derived_trips = [round_trip(turn, spec.id) for turn in turns]
    if all(trip.ok for trip in derived_trips):
        return FormatChoice(
            spec.id,
            f"{why_not}; derived from the template instead ({description.title}, calls opened by "
            f"{description.opener() or 'a bare JSON object'}), and it reads them back",
            derived=True,
            analysis=analysis,
            trips=derived_trips,
            rejected=trips,
        )
    failed_derived = next(trip for trip in derived_trips if not trip.ok)
    return FormatChoice(
        sign.format_id,
        f"{why_not}; the derived {spec.id} does not either ({failed_derived.problems[0]}), so {sign.format_id} it is",
        analysis=analysis,
        trips=trips,
    )


__all__ = ["FormatChoice", "choose_format"]
