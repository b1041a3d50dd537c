"""The round-trip self-check: does a parser read back, byte by byte, the calls a template renders?

The template renders an ordinary request (two tools, a turn that calls both)
the way it renders any history; what the model would have generated after the
generation prompt is cut out of it (:meth:`~callscope.engine.templates.framing.Framing.cut`:
the header and the end-of-turn stop token off, the reasoning close in when the
prompt opened reasoning) and fed to the parser one byte at a time through the
incremental policy, exactly as ``replay-text --step byte`` would. It passes
when the same calls come back (names, and arguments equal as JSON), streamed
append-only (no violation of any rule), every call reconstructing byte for
byte with ``finish_reason`` ``tool_calls``, and no marker in the content.

A template with a thinking switch (``enable_thinking``, or ``thinking`` as
DeepSeek V3.1 and Kimi-K3 name it) is checked with it on and off too: both
prompts must round-trip. The parser is told neither: when the template
may open a reasoning block it starts undecided (``--thinking auto``) and must
read the reasoning state from the text, as it does for a pasted generation, and
the reasoning must come out as reasoning, never as content.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from callscope.engine.analysis.analyzer import Analyzer, SourceInfo
from callscope.engine.formats import get_spec, make_parser
from callscope.engine.recordings.text_source import split_steps
from callscope.engine.templates.framing import frame
from callscope.engine.templates.renders import ANSWER, REASONING, Renderer, Renders

USER = "What is the weather in Paris for the next 3 days? Also show me notes/todo.txt."
REASONING_TEXT = "The user wants the weather and a file; both tools apply."
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather and forecast for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name."},
                    "days": {"type": "integer", "description": "Days of forecast."},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "Path of the file."}},
                "required": ["path"],
            },
        },
    },
]
CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("get_weather", {"city": "Paris", "days": 3}),
    ("read_file", {"path": "notes/todo.txt"}),
)
#: Call ids the templates accept (nine letters and digits, as Mistral's templates check).
CALL_IDS = ("a1b2c3d4e", "f5g6h7i8j")


@dataclass(slots=True)
class RoundTrip:
    """One round trip's verdict (see the module docstring)."""

    format_id: str
    ok: bool
    #: What was fed to the parser ("" when the template rendered no call turn).
    generation: str = ""
    thinking: bool = False
    #: The thinking switch the template was rendered with (None: its default), and its name.
    enable_thinking: bool | None = None
    expected: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    switch: str = "enable_thinking"

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format_id,
            "ok": self.ok,
            "enable_thinking": self.enable_thinking,
            "switch": self.switch if self.enable_thinking is not None else None,
            "starts_in_reasoning": self.thinking,
            "generation": self.generation,
            "expected": self.expected,
            "calls": self.calls,
            "problems": self.problems,
        }


@dataclass(frozen=True, slots=True)
class CheckTurn:
    """A rendered call turn cut to the model's generation, and the calls it holds."""

    generation: str
    thinking: bool
    calls: tuple[tuple[str, dict[str, Any]], ...]
    enable_thinking: bool | None = None
    switch: str = "enable_thinking"

    @property
    def mode(self) -> str:
        """``default``, or the switch as rendered (``enable_thinking=false``)."""
        return "default" if self.enable_thinking is None else f"{self.switch}={str(self.enable_thinking).lower()}"


#: The names templates give their thinking switch.
SWITCHES = ("enable_thinking", "thinking")


def check_turns(render: Renderer) -> list[CheckTurn]:
    """The call turns to check: the template's default, plus thinking on and off when it reads a switch."""
    turns: list[CheckTurn] = []
    default = check_turn(render, None)
    if default is not None:
        turns.append(default)
    for switch in SWITCHES:
        for value in (True, False):
            turn = check_turn(render, value, switch)
            if turn is not None and all(turn.generation != t.generation or turn.thinking != t.thinking for t in turns):
                turns.append(turn)
    return turns


def check_turn(render: Renderer, enable_thinking: bool | None, switch: str = "enable_thinking") -> CheckTurn | None:
    """The request's call turn as the model would generate it (None when the template renders no call)."""
    extra: dict[str, Any] = {} if enable_thinking is None else {switch: enable_thinking}

    def attempt(messages: list[dict[str, Any]], prompt: bool = False) -> str | None:
        try:
            return render(messages, TOOLS, prompt, **extra)
        except Exception:  # noqa: BLE001 - a variant the template cannot render is simply not checked
            return None

    user = {"role": "user", "content": USER}
    renders = Renders(
        prompt=attempt([user], True),
        answer=attempt([user, {"role": "assistant", "content": ANSWER}]),
        answer_reasoning=attempt([user, {"role": "assistant", "content": ANSWER, "reasoning_content": REASONING}]),
    )
    renders.prompt_thinking = renders.prompt
    framing = frame(renders)
    if framing is None:
        return None
    for calls in (CALLS, CALLS[:1]):
        for as_string in (False, True):
            for content in ("", None):
                tool_calls = [
                    {
                        "id": CALL_IDS[i],
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args) if as_string else args},
                    }
                    for i, (name, args) in enumerate(calls)
                ]
                text = attempt([user, {"role": "assistant", "content": content, "tool_calls": tool_calls}])
                cut = framing.cut(text, REASONING_TEXT) if text is not None else None
                if cut is not None and all(name in cut[0] for name, _ in calls):
                    return CheckTurn(cut[0], cut[1], calls, enable_thinking, switch)
    return None


def may_open_reasoning(turns: list[CheckTurn]) -> bool:
    """Whether any of the template's call turns starts inside reasoning (its prompt opened a block)."""
    return any(turn.thinking for turn in turns)


def round_trip(turn: CheckTurn, format_id: str, thinking: bool | str | None = None) -> RoundTrip:
    """Feed ``turn`` to ``format_id``'s parser byte by byte and judge what streamed (see the module docstring).

    ``thinking``: how the parser starts (``"auto"``: the text decides); None tells it the truth.
    """
    expected = [{"name": name, "arguments": args} for name, args in turn.calls]
    result = RoundTrip(
        format_id, False, turn.generation, turn.thinking, turn.enable_thinking, expected, switch=turn.switch
    )
    try:
        parser = make_parser(format_id, TOOLS, thinking=turn.thinking if thinking is None else thinking)
        analyzer = Analyzer("round-trip", SourceInfo("text", None, format_id, "incremental"), "byte", False, parser)
        for piece in split_steps(turn.generation, "byte", 1):
            analyzer.feed_bytes(piece)
        analysis = analyzer.finish("stop")
    except Exception as exc:  # noqa: BLE001 - a parser that throws fails the check, with the reason
        result.problems.append(f"the parser raised {type(exc).__name__}: {exc}")
        return result
    problems = result.problems
    for report, call in zip(analysis.calls, analysis.terminal.calls):
        result.calls.append({"name": call.name, "arguments": call.arguments, "reconstructs": report.reconstructs})
    got = [(c["name"], _loaded(c["arguments"])) for c in result.calls]
    if got != [(e["name"], e["arguments"]) for e in expected]:
        problems.append(f"calls read back: {[(n, a) for n, a in got] or 'none'}")
    if not all(c["reconstructs"] for c in result.calls):
        problems.append("a call's streamed arguments do not rebuild it byte for byte")
    for violation in analysis.violations:
        problems.append(f"{violation.rule}: {violation.detail}")
    if analysis.finish_reason != "tool_calls":
        problems.append(f"finish_reason {analysis.finish_reason!r}, not 'tool_calls'")
    leaked = [m for m in get_spec(format_id).markers.leak if m in analysis.terminal.content]
    if leaked:
        problems.append(f"markers in the content: {', '.join(leaked)}")
    if REASONING_TEXT in analysis.terminal.content:
        problems.append("the reasoning came out as content")
    elif REASONING_TEXT in turn.generation and REASONING_TEXT not in analysis.terminal.reasoning:
        problems.append(f"the reasoning was not read as reasoning: {analysis.terminal.reasoning!r}")
    result.ok = not problems
    return result


def _loaded(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


__all__ = ["CALLS", "SWITCHES", "TOOLS", "CheckTurn", "RoundTrip", "check_turn", "check_turns", "may_open_reasoning", "round_trip"]
