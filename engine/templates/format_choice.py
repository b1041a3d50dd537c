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
no call at all keeps what its signs say: there is nothing to check (a template
that renders no tools either gets the prompt-taught ``emulated`` format).

This is the one detection: ``callscope prompt``, ``run --format auto``,
``template``, ``replay-text --format auto``, ``capture --template`` and the
window's Run, Paste and Template panes all call :func:`choose_format`, so one
template gets one parser everywhere, with one reason.

The choice also says whether the template's generation prompt may leave the
model inside a reasoning block (:attr:`FormatChoice.may_open_reasoning`: by
default, or with ``enable_thinking``): ``--thinking auto`` then reads the
reasoning state from the text (:mod:`callscope.engine.formats._kit.thinking_auto`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from callscope.engine.formats import FORMAT_IDS, all_specs, prompt_opens_reasoning, resolve_thinking
from callscope.engine.formats.derived import register_derived
from callscope.engine.formats.derived.spec import PREFIX as DERIVED_PREFIX
from callscope.engine.templates.analysis import TemplateAnalysis, analyze
from callscope.engine.templates.chat import ChatTemplate, FormatDetection, TemplateCaps, detect_format, probe_caps
from callscope.engine.templates.isolation import within_render_budget
from callscope.engine.templates.roundtrip import SWITCHES, RoundTrip, check_turns, may_open_reasoning, round_trip


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
    #: The generation prompt leaves the model inside reasoning, by default or with ``enable_thinking``.
    may_open_reasoning: bool = False

    @property
    def detection(self) -> FormatDetection:
        return FormatDetection(self.format_id, self.reason)

    def thinking(self, requested: bool | str | None = "auto") -> bool | str:
        """What to build this format's parser with for ``--thinking requested`` (auto/on/off)."""
        return resolve_thinking(requested, self.may_open_reasoning)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format_id,
            "format_reason": self.reason,
            "derived": self.derived,
            "may_open_reasoning": self.may_open_reasoning,
        }


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
    choice = _choose(template, caps if caps is not None else probe_caps(template), render, analyse)
    choice.may_open_reasoning = choice.may_open_reasoning or _may_open_reasoning(render, choice)
    return choice


def _may_open_reasoning(render: Any, choice: FormatChoice) -> bool:
    """Whether the template's generation prompt (by default, or with ``enable_thinking``) ends inside reasoning."""
    if any(trip.thinking for trip in choice.trips):
        return True
    fmt = choice.format_id if choice.format_id in FORMAT_IDS else None
    user = [{"role": "user", "content": "Hi"}]
    for extra in ({}, *({switch: True} for switch in SWITCHES)):
        try:
            prompt = render(user, None, True, **extra)
        except Exception:  # noqa: BLE001 - a variant the template refuses opens nothing
            continue
        if prompt_opens_reasoning(prompt, fmt):
            return True
    return False


def _choose(template: ChatTemplate, caps: TemplateCaps, render: Any, analyse: bool) -> FormatChoice:
    sign = detect_format(template.source, caps)
    turns = check_turns(render)
    analysis = analyze(render, template.name) if analyse else None
    if not turns:
        return FormatChoice(sign.format_id, f"{sign.reason}; the template renders no tool call to check", analysis=analysis)
    may_open = may_open_reasoning(turns)
    thinking = resolve_thinking("auto", may_open)

    def trips_of(format_id: str) -> list[RoundTrip]:
        return [round_trip(turn, format_id, thinking) for turn in turns]

    trips = trips_of(sign.format_id)
    if all(trip.ok for trip in trips):
        return FormatChoice(
            sign.format_id, f"{sign.reason}; its parser reads the template's rendered calls back", analysis=analysis,
            trips=trips, may_open_reasoning=may_open,
        )
    failed = next(trip for trip in trips if not trip.ok)
    why_not = f"{sign.format_id} ({sign.reason}) does not read the template's calls back: {failed.problems[0]}"
    analysis = analysis or analyze(render, template.name)
    description = analysis.description
    if description is None:
        note = "; ".join(analysis.notes) or "no syntax learnt"
        why_not = f"{why_not}; no format could be derived ({note})"
    else:
        spec = register_derived(description)
        derived_trips = trips_of(spec.id)
        if all(trip.ok for trip in derived_trips):
            return FormatChoice(
                spec.id,
                f"{why_not}; derived from the template instead ({description.title}, calls opened by "
                f"{description.opener() or 'a bare JSON object'}), and it reads them back",
                derived=True,
                analysis=analysis,
                trips=derived_trips,
                rejected=trips,
                may_open_reasoning=may_open,
            )
        failed_derived = next(trip for trip in derived_trips if not trip.ok)
        why_not = f"{why_not}; the derived {spec.id} does not either ({failed_derived.problems[0]})"
    for other in _dedicated(sign.format_id):
        other_trips = trips_of(other)
        if all(trip.ok for trip in other_trips):
            return FormatChoice(
                other,
                f"{why_not}; {other}'s parser does, though the template shows none of its signs",
                analysis=analysis,
                trips=other_trips,
                rejected=trips,
                may_open_reasoning=may_open,
            )
    return FormatChoice(
        sign.format_id, f"{why_not}, and no other parser does, so {sign.format_id} it is", analysis=analysis, trips=trips,
        may_open_reasoning=may_open,
    )


def _dedicated(tried: str) -> list[str]:
    """The dedicated formats to try when neither the signs' format nor a derived one reads a template's calls back."""
    return [spec.id for spec in all_specs() if spec.id != tried and not spec.id.startswith(DERIVED_PREFIX)]


def read_with(choice: FormatChoice, text: str, tools: list[dict[str, Any]] | None, thinking: str = "auto") -> dict[str, Any]:
    """``text`` (what a server sent as content) read with the template's parser: what it holds, as plain data.

    ``capture --template`` reports it: tool calls or reasoning a server left in its content.
    """
    from callscope.engine.formats import make_parser

    parser = make_parser(choice.format_id, tools, choice.thinking(thinking))
    parser.feed(text)
    parser.finish()
    parse = parser.snapshot()
    out: dict[str, Any] = {
        **choice.to_json(),
        "calls": [{"name": c.name, "arguments": c.arguments} for c in parse.calls],
        "reasoning": parse.reasoning,
        "content": parse.content,
    }
    decision = getattr(parser, "decision", None)
    if decision is not None:
        out["thinking_inferred"] = decision.to_json()
    return out


__all__ = ["FormatChoice", "choose_format", "read_with"]
