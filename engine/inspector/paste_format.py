"""Which wire format a pasted generation is in: try every parser, prefer the one that finds complete calls.

A user who pastes a generation often does not know (or mistypes) the format
its server speaks. Every registered format's parser reads the text, and the
readings are ranked by what a correct parser would produce: more *complete*
calls (a whole name and arguments that are valid JSON), then a clean stream
(``finish_reason`` ``tool_calls``, every call reconstructing, no rule broken),
then no known marker left in the content, then the least text left over as
content (a parser that explains the markup as markup beats one that reads it
as prose), and last the registry's own order (dedicated formats before derived
ones). A parser that raises is ranked last with why. The reason names the
winner, what it found and the runner-up, so the choice is never a mystery.

The text is fed in steps of :data:`STEP_CHARS` characters (at most
:data:`MAX_STEPS` steps): the final parse is what is ranked, and a few
hundred steps per format keep a long paste under a second for every format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.analysis.report import plural
from callscope.engine.formats import FORMAT_IDS, get_spec, supports_thinking
from callscope.engine.recordings.replay_text import analyze_text

STEP_CHARS = 16
MAX_STEPS = 400


@dataclass(frozen=True, slots=True)
class Reading:
    """What one format's parser made of the text."""

    format_id: str
    complete: int = 0
    calls: int = 0
    clean: bool = False
    leaked: int = 0
    leftover: int = 0
    order: int = 0
    error: str = ""

    def key(self) -> tuple[int, ...]:
        """Sort key, best first (see the module docstring)."""
        return (bool(self.error), -self.complete, not self.clean, self.leaked, -self.calls, self.leftover, self.order)

    def found(self) -> str:
        """What it found, in words ("2 complete calls, streamed cleanly")."""
        if self.error:
            return f"its parser failed ({self.error})"
        if not self.calls:
            return "no call"
        if self.complete == self.calls:
            words = f"{plural(self.complete, 'complete call')}"
        else:
            words = f"{plural(self.calls, 'call')}, {self.complete} complete"
        return words + (", streamed cleanly" if self.clean else ", not streamed cleanly")


@dataclass(frozen=True, slots=True)
class Detection:
    """The format chosen for a paste, why, and every reading ranked."""

    format_id: str
    reason: str
    ranking: list[Reading]


def read_as(
    text: str, format_id: str, tools: list[dict[str, Any]] | None, thinking: bool | str, order: int = 0
) -> Reading:
    """``text`` through ``format_id``'s parser and the incremental policy, judged."""
    size = max(STEP_CHARS, -(-len(text) // MAX_STEPS))
    try:
        analysis = analyze_text(
            text, format_id, tools=tools, size=size, name="paste", thinking=thinking if supports_thinking(format_id) else False
        )
    except Exception as exc:  # noqa: BLE001 - a parser that throws on this text is simply not the format
        return Reading(format_id, order=order, error=f"{type(exc).__name__}: {exc}")
    return _judge(analysis, format_id, order)


def _judge(analysis: Analysis, format_id: str, order: int) -> Reading:
    calls = analysis.terminal.calls
    complete = sum(1 for call in calls if call.name and _is_json_object(call.arguments))
    clean = (
        bool(calls)
        and analysis.finish_reason == "tool_calls"
        and not analysis.violations
        and all(report.reconstructs for report in analysis.calls)
    )
    content = analysis.terminal.content
    leaked = sum(1 for marker in get_spec(format_id).markers.leak if marker and marker in content)
    return Reading(format_id, complete, len(calls), clean, leaked, len(content.strip()), order)


def _is_json_object(arguments: str) -> bool:
    try:
        return isinstance(json.loads(arguments), dict)
    except ValueError:
        return False


def rank_formats(
    text: str, tools: list[dict[str, Any]] | None = None, thinking: bool | str = False, formats: list[str] | None = None
) -> list[Reading]:
    """Every format's reading of ``text``, best first."""
    ids = list(formats if formats is not None else FORMAT_IDS)
    readings = [read_as(text, format_id, tools, thinking, order) for order, format_id in enumerate(ids)]
    return sorted(readings, key=Reading.key)


def detect_format(
    text: str, tools: list[dict[str, Any]] | None = None, thinking: bool | str = False, formats: list[str] | None = None
) -> Detection:
    """The best reading's format and a one-line reason (see the module docstring)."""
    ranking = rank_formats(text, tools, thinking, formats)
    best = ranking[0]
    if not best.calls:
        reason = f"no parser finds a tool call in it; read as {best.format_id} (it leaves the least text unexplained)"
        return Detection(best.format_id, reason, ranking)
    reason = f"{best.format_id} finds {best.found()}"
    runner = next((r for r in ranking[1:] if r.calls), None)
    if runner is None:
        reason += "; no other parser finds a call"
    else:
        reason += f"; next best {runner.format_id}: {runner.found()}{_behind(best, runner)}"
    return Detection(best.format_id, reason, ranking)


def _behind(best: Reading, runner: Reading) -> str:
    """Why ``runner`` ranks below ``best``, when its summary does not already say it."""
    if runner.complete != best.complete or runner.clean != best.clean:
        return ""
    if runner.leaked != best.leaked:
        return f", but leaves {plural(runner.leaked, 'marker')} in the content"
    if runner.calls != best.calls:
        return f", but opens {plural(runner.calls, 'call')}"
    if runner.leftover != best.leftover:
        return f", but leaves {plural(runner.leftover - best.leftover, 'more character')} as content"
    return " (a tie: the registry's order decides)"


__all__ = ["MAX_STEPS", "STEP_CHARS", "Detection", "Reading", "detect_format", "rank_formats", "read_as"]
