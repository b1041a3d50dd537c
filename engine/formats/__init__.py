"""Wire formats: one module per format, each declaring one :class:`FormatSpec`.

A format module ``engine/formats/<id>.py`` holds the format's incremental
parser and ``SPEC = FormatSpec(...)``: its id and one-line description, the
parser class, whether it reads reasoning, its markers (what never leaks into
content; the capture checker and the text pane use them), its writer (sample
and fixture text), its grammar envelopes for forced calls, how a chat template
shows it (with a priority that keeps llama.cpp's detection order) and its
built-in template. Nothing else in callscope names a format: the grammar, the
template detection, the samples and the capture checker loop over the specs.
Shared parser machinery lives in :mod:`callscope.engine.formats._kit`.

Adding a format:

1. write ``engine/formats/<id>.py`` (parser + ``SPEC``; see any format here),
   and, if it has one, its built-in template ``resources/templates/<file>.jinja``;
2. add ``"<id>"`` to :data:`BUILTIN` below (the order is the order of ``--help``
   and the GUI's picker; detection order comes from the specs' priorities).

The tests then ask for its row in docs/formats.md, its peers' cases and its fixtures
(docs/extending.md, "A wire format", counts every touch).

A format defined outside callscope (a plug-in, a test) needs no edit here:
``register_format(SPEC)`` makes it known to every consumer (``--format``,
``replay-text``, ``run``'s forced calls, template detection, the capture
checker) until ``unregister_format(id)``. ``FORMAT_IDS`` follows the
registrations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

# What a spec and a forced-call grammar are made of: public here, so no package outside formats/ imports _kit.
from callscope.engine.formats._kit.gbnf import CallsLayout, CannotForce, Envelope, ParameterRule, lit, repeat
from callscope.engine.formats._kit.parser import FormatParser, declared_type
from callscope.engine.formats._kit.registry import FormatTable, LiveView, UnknownFormat
from callscope.engine.formats._kit.spec import FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.thinking_auto import AUTO, UNDECIDED_REASON, ThinkingDecision, UndecidedReasoning
from callscope.engine.formats._kit.thinking_auto import MODES as THINKING_MODES
from callscope.engine.formats._kit.thinking_auto import recorded as recorded_thinking
from callscope.engine.formats._kit.thinking_auto import resolve as resolve_thinking

#: The built-in formats, one line each: the module of ``callscope.engine.formats`` named by the format id.
BUILTIN: tuple[str, ...] = (
    "hermes",
    "qwen3_coder",
    "llama3_json",
    "mistral",
    "generic",
    "emulated",
    "deepseek_v31",
    "gpt_oss",
    # tag families (group 1)
    "seed_oss",
    "glm45",
    "minimax_m2",
    "deepseek_v32",
    "kimi_k2",
    "deepseek_v3",
    "gemma4",
    "functionary_v3_1",
    # JSON families (group 2)
    "granite",
    "nemotron_v2",
    "apriel",
    "apertus",
    "command_r7b",
    "pythonic",
    "functionary_v3_2",
    "gigachat3",
    "solar_open",
)

_TABLE = FormatTable(__name__, BUILTIN)

#: Every known format id, built-in then registered (a live, read-only sequence).
FORMAT_IDS: Sequence[str] = LiveView(_TABLE, _TABLE.ids)


def get_spec(format_id: str) -> FormatSpec:
    """The spec of ``format_id``; :class:`UnknownFormat` (a ValueError listing the known ids) if none."""
    return _TABLE.get(format_id)


def all_specs() -> tuple[FormatSpec, ...]:
    """Every format's spec, in :data:`FORMAT_IDS` order."""
    return _TABLE.all()


def register_format(spec: FormatSpec, *, replace: bool = False) -> FormatSpec:
    """Make a format defined outside callscope known everywhere; returns ``spec``.

    Its id must not be a built-in one (or, without ``replace``, a registered one).
    """
    return _TABLE.register(spec, replace=replace)


def unregister_format(format_id: str) -> None:
    """Forget a format added with :func:`register_format`."""
    _TABLE.unregister(format_id)


def registry_generation() -> int:
    """A number that changes whenever a format is registered or removed: a cache key for derived data."""
    return _TABLE.generation


def leak_markers() -> tuple[str, ...]:
    """Every format's markers that must never reach a client as content, each once."""
    return tuple(dict.fromkeys(m for spec in all_specs() for m in spec.markers.leak))


def live_view(compute: Callable[[], tuple[str, ...]]) -> Sequence[str]:
    """A read-only sequence of ``compute()``, recomputed whenever a format is registered or removed.

    For module-level names derived from the specs (``BUILTIN_FORMATS``), which
    other modules import by value.
    """
    return LiveView(_TABLE, compute)


def markers_view(extra: tuple[str, ...] = ()) -> Sequence[str]:
    """:func:`leak_markers` plus ``extra``, as a sequence that stays current when formats are registered."""
    return live_view(lambda: tuple(dict.fromkeys((*leak_markers(), *extra))))


def parser_class(format_id: str) -> type[FormatParser]:
    return get_spec(format_id).parser


def supports_thinking(format_id: str) -> bool:
    """Whether the format's parser can start inside a reasoning block (prompt ended with ``<think>``)."""
    return get_spec(format_id).thinking


def reasoning_tags(format_id: str) -> tuple[str, str]:
    """The tags around ``format_id``'s reasoning block: ``(opener, closer)`` (``<think>``/``</think>`` unless it names its own).

    Read from the parser class: ``_think_open``/``_think_close`` (the marker
    machines, derived parsers) or ``think`` (the JSON-array machines).
    """
    parser = get_spec(format_id).parser
    tags = getattr(parser, "think", None)
    if isinstance(tags, tuple) and len(tags) == 2 and all(tags):
        return tags[0], tags[1]
    return getattr(parser, "_think_open", None) or "<think>", getattr(parser, "_think_close", None) or "</think>"


def prompt_opens_reasoning(prompt: str, format_id: str | None = None) -> bool:
    """True when a rendered prompt leaves the model inside a reasoning block (Qwen3, DeepSeek thinking mode).

    The block is ``<think>``, or the reasoning opener of ``format_id``'s parser when it names its own
    (a format derived from a template that reasons in ``<|START_THINKING|>``).
    """
    opener = "<think>"
    if format_id is not None and format_id in FORMAT_IDS and get_spec(format_id).thinking:
        opener = reasoning_tags(format_id)[0]
    return prompt.rstrip().endswith(opener.strip())


def make_parser(
    format_id: str, tools: list[dict[str, Any]] | None = None, thinking: bool | str = False
) -> FormatParser:
    """A fresh parser for ``format_id``; ``tools`` is the request's OpenAI ``tools`` array.

    ``thinking``: True (``"on"``) when the prompt left the model inside a reasoning
    block (the chat template ended the prompt with ``<think>``), so the generation
    starts with reasoning and only a ``</think>`` closes it; False (``"off"``)
    when it did not; ``"auto"`` when it may have: the parser starts undecided and
    the text decides (:mod:`~callscope.engine.formats._kit.thinking_auto`).
    Ignored by formats without reasoning.
    """
    spec = get_spec(format_id)
    if not spec.thinking:
        return spec.parser(tools)
    if thinking == AUTO:
        opener, closer = reasoning_tags(format_id)
        deciders = (opener, *(m for m in spec.markers.leak if m != closer))

        def build(on: bool) -> FormatParser:
            return spec.parser(tools, thinking=True) if on else spec.parser(tools)  # type: ignore[call-arg]

        return UndecidedReasoning(build, (closer,), deciders, tools)
    if thinking is True or thinking == "on":
        return spec.parser(tools, thinking=True)  # type: ignore[call-arg]
    return spec.parser(tools)


__all__ = [
    "BUILTIN",
    "FORMAT_IDS",
    "CallsLayout",
    "CannotForce",
    "Envelope",
    "FormatParser",
    "FormatSpec",
    "Markers",
    "ParameterRule",
    "THINKING_MODES",
    "TemplateSign",
    "ThinkingDecision",
    "UNDECIDED_REASON",
    "UndecidedReasoning",
    "UnknownFormat",
    "all_specs",
    "declared_type",
    "get_spec",
    "leak_markers",
    "lit",
    "live_view",
    "make_parser",
    "markers_view",
    "parser_class",
    "prompt_opens_reasoning",
    "recorded_thinking",
    "resolve_thinking",
    "reasoning_tags",
    "register_format",
    "registry_generation",
    "repeat",
    "supports_thinking",
    "unregister_format",
]
