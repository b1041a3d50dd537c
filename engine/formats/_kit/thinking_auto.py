"""``--thinking auto``: whether a generation starts inside reasoning, read from the text itself.

A chat template may open a reasoning block in its generation prompt
(``<think>\\n``) or not (``enable_thinking=false`` writes an empty block, or none),
and the generation alone does not say which prompt it answered. When the
template *may* have opened one, the parser starts undecided
(:class:`UndecidedReasoning`) and the text decides:

* a **reasoning closer** (``</think>``, or the format's own) before anything else
  that decides: thinking was **on**; everything before it is reasoning;
* a **tool-call opener**, any other marker of the format, or the reasoning
  **opener** itself first: thinking was **off**; the text is content (a
  reasoning opener then opens reasoning the ordinary way);
* the generation **ends** with neither: plain content, thinking was **off**.

Until one of those is seen the text is held, as a half-typed marker is held,
and nothing of it reaches the parse; :attr:`UndecidedReasoning.decision` says
what was inferred, from which characters (:class:`ThinkingDecision`), and the
inspector shows the held text with :data:`UNDECIDED_REASON`. Once decided, the
held text is fed to the format's own parser, built with ``thinking`` on or off,
and every later piece goes straight to it: the only cost is the scan of the
held text for the markers, linear in the text while undecided and nothing after.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from callscope.engine.core.parse_model import Parse, ParseEvent
from callscope.engine.formats._kit.marker_search import find_first
from callscope.engine.formats._kit.parser import FormatParser

#: ``--thinking`` values: read from the text, or told.
AUTO = "auto"
ON = "on"
OFF = "off"
MODES = (AUTO, ON, OFF)

#: Why held text is held while undecided (the inspector's held-text reason).
UNDECIDED_REASON = (
    "thinking is not decided yet: the template may have opened a reasoning block, so this is held until a "
    "reasoning closer (thinking on: it was reasoning) or a tool-call opener or other markup (thinking off: "
    "it was content) decides; a generation that ends first was content"
)


@dataclass(frozen=True, slots=True)
class ThinkingDecision:
    """What ``--thinking auto`` inferred, and from which characters of the generation."""

    #: ``on`` (the generation started inside reasoning) or ``off``.
    inferred: str
    #: The marker that decided (``</think>``, ``<tool_call>``); "" when the generation ended undecided.
    marker: str
    #: Character offsets ``[start, end)`` of that marker in the generation (the end of the text when none).
    start: int
    end: int
    #: In words, for the report and the status lines.
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": AUTO,
            "inferred": self.inferred,
            "marker": self.marker,
            "start": self.start,
            "end": self.end,
            "reason": self.reason,
        }


def mode_of(thinking: bool | str | None) -> str:
    """``thinking`` as one of :data:`MODES` (True/False are the old on/off; None is off)."""
    if thinking is True:
        return ON
    if thinking is False or thinking is None:
        return OFF
    if thinking not in MODES:
        raise ValueError(f"thinking must be one of {', '.join(MODES)}, not {thinking!r}")
    return thinking


def resolve(requested: bool | str | None, may_open: bool) -> bool | str:
    """What to build a parser with: ``requested`` (auto/on/off) given whether the prompt may have opened reasoning.

    ``auto`` stays undecided only when it may have (``may_open``); otherwise there is
    nothing to infer and the generation starts outside reasoning.
    """
    mode = mode_of(requested)
    if mode == AUTO:
        return AUTO if may_open else False
    return mode == ON


def recorded(value: Any) -> bool | str:
    """A source's or trace header's ``thinking`` value as a parser takes it (``"auto"``, else on when truthy)."""
    return AUTO if value == AUTO else bool(value) and value != OFF


class UndecidedReasoning(FormatParser):
    """A format's parser behind the decision of :mod:`this module <callscope.engine.formats._kit.thinking_auto>`.

    ``build(thinking)`` makes the format's parser; ``closers`` decide *on*,
    ``deciders`` (the reasoning opener and the format's markup) decide *off*.
    """

    def __init__(
        self,
        build: Callable[[bool], FormatParser],
        closers: tuple[str, ...],
        deciders: tuple[str, ...],
        tools: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(tools)
        self._build = build
        self._closers = tuple(c for c in closers if c)
        self._markers = tuple(dict.fromkeys(m for m in (*self._closers, *deciders) if m))
        self._longest = max((len(m) for m in self._markers), default=1)
        self._held = ""
        self._searched = 0  # markers cannot start before this index of the held text
        self._inner: FormatParser | None = None
        self.decision: ThinkingDecision | None = None

    @property
    def undecided(self) -> bool:
        return self._inner is None

    @property
    def held(self) -> str:
        """The text held while undecided ("" once decided)."""
        return self._held if self._inner is None else ""

    # ------------------------------------------------------------ the parser contract

    def feed(self, text: str) -> list[ParseEvent]:
        if self._finished:
            raise RuntimeError("feed() after finish()")
        if self._inner is not None:
            return self._inner.feed(text)
        if not text:
            return []
        self._held += text
        found = find_first(self._held, self._markers, self._searched) if self._markers else None
        if found is None:
            self._searched = max(self._searched, len(self._held) - self._longest + 1)
            return []
        at, marker = found
        on = marker in self._closers
        why = (
            f"{marker} closes reasoning before anything else: the generation started inside it (thinking on)"
            if on
            else f"{marker} comes before any reasoning closer: the generation started outside reasoning (thinking off)"
        )
        return self._decide(ThinkingDecision(ON if on else OFF, marker, at, at + len(marker), why))

    def finish(self) -> list[ParseEvent]:
        if self._finished:
            return []
        events: list[ParseEvent] = []
        if self._inner is None:
            end = len(self._held)
            events = self._decide(
                ThinkingDecision(
                    OFF, "", end, end,
                    "the generation ended with no reasoning closer and no tool call: it was content (thinking off)",
                )
            )
        assert self._inner is not None
        events = events + self._inner.finish()
        self._finished = True
        return events

    def snapshot(self) -> Parse:
        if self._inner is None:
            return Parse(partial=not self._finished)
        return self._inner.snapshot()

    @property
    def call_count(self) -> int:
        return 0 if self._inner is None else self._inner.call_count

    def _decide(self, decision: ThinkingDecision) -> list[ParseEvent]:
        self.decision = decision
        self._inner = self._build(decision.inferred == ON)
        held, self._held = self._held, ""
        return self._inner.feed(held)

    def __getattr__(self, name: str) -> Any:
        """Anything else (a format parser's own attributes) is the decided parser's."""
        inner = self.__dict__.get("_inner")
        if inner is None or name.startswith("__"):
            raise AttributeError(name)
        return getattr(inner, name)


__all__ = [
    "AUTO",
    "MODES",
    "OFF",
    "ON",
    "UNDECIDED_REASON",
    "ThinkingDecision",
    "UndecidedReasoning",
    "mode_of",
    "recorded",
    "resolve",
]
