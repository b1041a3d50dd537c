"""What the Template pane shows about one chat template, computed without a window.

A person debugging a template wants to see how it writes a call and how the
parser reads it back. :func:`template_state` runs the same analysis as
``callscope template FILE --check`` (:func:`~callscope.engine.templates.format_choice.choose_format`
with the analysis on) and turns it into plain rows the pane only draws:

* the parser ``--format auto`` picks, whether it is dedicated or derived, and why;
* the learnt format description (:func:`describe`, shared with the CLI printout);
* the rendered call as the template writes it, its markers, names and keys marked
  (:func:`~callscope.engine.templates.evidence.spans`);
* the round trip: for every call turn checked, OK or what failed, and the fed
  text coloured by what the chosen parser made of each character (markup,
  argument text per call, content, reasoning), from the parser's own events
  (:class:`~callscope.engine.inspector.text_spans.TextSpans`), never from a pattern;
* what a live run or a pasted generation needs: the template, the request the
  check renders, whether a generation starts inside reasoning.

Reading a GGUF's metadata can take seconds; the pane calls this on a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from callscope.engine.formats.derived.description import JSON, TAG_TAGGED
from callscope.engine.templates.analysis import TemplateAnalysis
from callscope.engine.templates.chat import ChatTemplate
from callscope.engine.templates.evidence import Span, spans
from callscope.engine.templates.roundtrip import TOOLS, USER, RoundTrip


class TemplateStateError(Exception):
    """A template that cannot be analysed (unreadable, not a template, a GGUF without one): one line."""


@dataclass(frozen=True, slots=True)
class Description:
    """A learnt format description in words: what the CLI prints and the pane lists."""

    #: How reasoning is framed ("none found" when the template has none; "" when nothing rendered).
    reasoning: str
    #: The family title ("tag + tagged arguments"), or "none" when no syntax was learnt.
    title: str
    #: ``(label, value)``; markers as Python literals (whitespace visible), a row with no label is a plain line.
    fields: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    learnt: bool = True


@dataclass(frozen=True, slots=True)
class ReadBack:
    """Characters ``text`` the parser read as ``kind`` (``call`` markup, ``arguments``, ``content``, ``reasoning``, ``held``)."""

    text: str
    kind: str
    call: int | None = None


@dataclass(frozen=True, slots=True)
class TripView:
    """One round trip, as the pane lists it."""

    label: str
    ok: bool
    summary: str
    problems: list[str]
    read_back: list[ReadBack]


@dataclass(slots=True)
class TemplateState:
    """Everything the Template pane shows for one template (see the module docstring)."""

    path: str
    template: ChatTemplate
    format_id: str
    derived: bool
    reason: str
    description: Description
    #: The rendered call as the template writes it (analysis needles), markers/names/keys marked.
    evidence: list[Span]
    trips: list[TripView]
    render_errors: list[str]
    #: How a generation after this template's prompt starts under ``--thinking auto`` (the paste's):
    #: "auto" (the prompt may open reasoning: the text decides) or False.
    thinking: bool | str = False
    #: The template's generation prompt may leave the model inside a reasoning block.
    may_open_reasoning: bool = False
    #: The request a live run sends: the round trip's own user message and two tools.
    prompt: str = USER
    tools: list[dict[str, Any]] = field(default_factory=lambda: [dict(t) for t in TOOLS])

    @property
    def thinking_line(self) -> str:
        """How a generation after this template's prompt is read: the reasoning state, in one sentence."""
        if self.may_open_reasoning:
            return ("thinking: auto. The prompt may open a reasoning block (by default or with its thinking switch), "
                    "so a pasted or live generation is read undecided until the text shows it: a reasoning closer "
                    "first means thinking was on, a tool call or other markup first means it was off")
        return "thinking: off. The prompt never opens a reasoning block; a generation opens one itself if it reasons"

    @property
    def parser_kind(self) -> str:
        return "derived from the template" if self.derived else "dedicated parser"

    @property
    def check_ok(self) -> bool | None:
        """True when every round trip came back, False when one did not, None when nothing renders a call."""
        if not self.trips:
            return None
        return all(t.ok for t in self.trips)

    @property
    def check_line(self) -> str:
        """The verdict in one line (the pane's badge and the status bar)."""
        ok = self.check_ok
        if ok is None:
            return "nothing to round-trip: the template renders no tool call"
        if ok:
            return f"round trip OK: {self.format_id} reads every rendered call back, byte by byte"
        failed = next(t for t in self.trips if not t.ok)
        first = failed.problems[0] if failed.problems else "the calls do not come back"
        return f"round trip FAILED ({failed.label}): {first}"


def template_state(path: str) -> TemplateState:
    """Analyse the template in ``path`` (a ``.jinja``, a ``tokenizer_config.json`` or a GGUF); one-line errors."""
    from callscope.engine.core.errors import DecodeError
    from callscope.engine.templates.chat import probe_caps
    from callscope.engine.templates.files import read_template_or_model
    from callscope.engine.templates.format_choice import choose_format
    from callscope.engine.templates.isolation import render_budget

    try:
        found = read_template_or_model(path)
        template = found.template
        with render_budget():  # the probes and the analysis share one time limit; a hostile template stops both
            choice = choose_format(
                template, probe_caps(template), bos_token=found.bos_token, eos_token=found.eos_token, analyse=True
            )
    except DecodeError as exc:
        raise TemplateStateError(str(exc)) from None
    analysis = choice.analysis
    evidence = spans(analysis.generation, analysis.description) if analysis is not None and analysis.generation else []
    return TemplateState(
        path=str(path),
        template=template,
        format_id=choice.format_id,
        derived=choice.derived,
        reason=choice.reason,
        description=describe(analysis),
        evidence=evidence,
        trips=[trip_view(trip) for trip in choice.trips],
        render_errors=list(analysis.render_errors) if analysis is not None else [],
        thinking=choice.thinking("auto"),
        may_open_reasoning=choice.may_open_reasoning,
    )


def trip_view(trip: RoundTrip) -> TripView:
    """A round trip in words, with the fed text coloured by how the parser read it."""
    label = "default" if trip.enable_thinking is None else f"{trip.switch}={str(trip.enable_thinking).lower()}"
    verdict = "OK" if trip.ok else "FAILED"
    summary = f"{verdict}: {trip.format_id} read {len(trip.calls)} of {len(trip.expected)} calls back"
    return TripView(label, trip.ok, summary, list(trip.problems), read_back(trip))


def read_back(trip: RoundTrip) -> list[ReadBack]:
    """``trip.generation`` in runs of what the parser made of it (the text pane's own colouring, per character)."""
    from callscope.engine.inspector.text_spans import TextSpans
    from callscope.engine.inspector.timebase import Timebase
    from callscope.engine.recordings.replay_text import analyze_text

    if not trip.generation:
        return []
    try:
        analysis = analyze_text(trip.generation, trip.format_id, tools=TOOLS, name="round-trip", thinking=trip.thinking)
    except Exception:  # noqa: BLE001 - the check already reported the parser's failure; show the text plain
        return [ReadBack(trip.generation, "held")]
    text_spans = TextSpans(analysis, Timebase(analysis))
    text_spans.finish_text()
    text = text_spans.text
    runs: list[ReadBack] = []
    start = 0
    kinds = text_spans.char_kinds()
    for i in range(1, len(kinds) + 1):
        if i == len(kinds) or kinds[i] != kinds[start]:
            kind, call = kinds[start]
            runs.append(ReadBack(text[start:i], kind, call))
            start = i
    if len(kinds) < len(text):  # nothing located the tail: held
        runs.append(ReadBack(text[len(kinds):], "held"))
    return runs


def describe(analysis: TemplateAnalysis | None) -> Description:
    """The learnt description of ``analysis`` in words (what ``callscope template`` prints)."""
    if analysis is None:
        return Description("", "none", learnt=False)
    reasoning = _reasoning(analysis)
    d = analysis.description
    if d is None:
        return Description(reasoning, "none", notes=list(analysis.notes), learnt=False)
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
    fields = [(label, repr(value)) for label, value in markers if value] + words
    if not d.parallel:
        fields.append(("", "one call per turn"))
    return Description(reasoning, d.title, fields, list(analysis.notes))


def _reasoning(analysis: TemplateAnalysis) -> str:
    framing = analysis.framing
    if framing is None:
        return ""
    if not framing.reasoning_end:
        return "none found"
    opens = "opens it" if framing.opens_reasoning else "does not open it"
    switch = ""
    if framing.opens_reasoning_thinking is not None or framing.opens_reasoning_no_thinking is not None:
        switch = (
            f"; enable_thinking on: {_opens(framing.opens_reasoning_thinking)}, "
            f"off: {_opens(framing.opens_reasoning_no_thinking)}"
        )
    return f"{framing.reasoning_start or '(no opener)'} ... {framing.reasoning_end} (the generation prompt {opens}{switch})"


def _opens(value: bool | None) -> str:
    return "?" if value is None else "opens" if value else "does not open"


__all__ = [
    "Description",
    "ReadBack",
    "TemplateState",
    "TemplateStateError",
    "TripView",
    "describe",
    "read_back",
    "template_state",
    "trip_view",
]
