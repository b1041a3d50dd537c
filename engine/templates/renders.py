"""The renders a template is analysed from: one request per question, with needles that cannot be mistaken.

Every variant differs from another in one thing (no call / one call / two
calls / a call with another id / string and integer values / no arguments /
reasoning on and off / the generation prompt with thinking on and off), so
diffing two renders shows where that thing is written. The needles (function
names, keys, values, ids) are strings no template writes by itself; the ids
are nine letters and digits, which Mistral's templates insist on.

A render that fails (a template that raises for two calls, one that wants
string arguments) is ``None``: the analysis works with what renders. Calls are
rendered with object arguments first and JSON-string arguments when that
fails or drops them, and with ``""`` content, then ``None`` (templates differ
in which they accept). A template that writes the call id where the name
belongs (Kimi's ``functions.NAME:IDX``) gets ids in that shape.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

FIRST = "zq_first_fn"
SECOND = "zq_second_fn"
KEY_A = "zq_key_alpha"
KEY_B = "zq_key_beta"
KEY_N = "zq_key_count"
VALUE_A = "zqv_alpha_value"
VALUE_B = "zqv_beta_value"
NUMBER = 7319
USER = "zq the user asks something"
ANSWER = "zq the plain answer."
REASONING = "zq reasoning about it"
IDS = ("zqcall001", "zqcall002")
OTHER_ID = "zqcall777"

ARGS_AB = {KEY_A: VALUE_A, KEY_B: VALUE_B}
ARGS_AN = {KEY_A: VALUE_A, KEY_N: NUMBER}

_PARAMETERS = {
    "type": "object",
    "properties": {
        KEY_A: {"type": "string", "description": "The first argument."},
        KEY_B: {"type": "string", "description": "The second argument."},
        KEY_N: {"type": "integer", "description": "A number."},
    },
    "required": [],
}
TOOLS = [
    {"type": "function", "function": {"name": name, "description": f"The {which} function.", "parameters": _PARAMETERS}}
    for name, which in ((FIRST, "first"), (SECOND, "second"))
]


class Renderer(Protocol):
    """What the analysis needs of a template: render a request, raising on failure (any exception)."""

    def __call__(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, add_generation_prompt: bool, **extra: Any
    ) -> str: ...


@dataclass(slots=True)
class Renders:
    """The analysed renders (``None``: the template failed on that variant), with the first failure's reason."""

    prompt: str | None = None
    prompt_thinking: str | None = None
    prompt_no_thinking: str | None = None
    answer: str | None = None
    answer_reasoning: str | None = None
    one_call: str | None = None
    two_calls: str | None = None
    typed_call: str | None = None
    empty_call: str | None = None
    other_id: str | None = None
    #: The ids the call renders used (Kimi-style ``functions.NAME:IDX`` when the template writes ids as names).
    ids: tuple[str, ...] = IDS
    errors: list[str] = field(default_factory=list)


def user() -> dict[str, Any]:
    return {"role": "user", "content": USER}


def call(name: str, args: dict[str, Any], call_id: str, as_string: bool = False) -> dict[str, Any]:
    arguments: Any = json.dumps(args, ensure_ascii=False) if as_string else args
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def collect(render: Renderer) -> Renders:
    """Every variant's render (see the module docstring); never raises."""
    out = Renders()

    def attempt(messages: list[dict[str, Any]], prompt: bool = False, **extra: Any) -> str | None:
        try:
            return render(messages, TOOLS, prompt, **extra)
        except Exception as exc:  # noqa: BLE001 - a template can fail in any way; the variant is then missing
            if len(out.errors) < 8:
                out.errors.append(f"{type(exc).__name__}: {exc}")
            return None

    out.prompt = attempt([user()], True)
    out.prompt_thinking = attempt([user()], True, enable_thinking=True)
    out.prompt_no_thinking = attempt([user()], True, enable_thinking=False)
    out.answer = attempt([user(), {"role": "assistant", "content": ANSWER}])
    out.answer_reasoning = attempt([user(), {"role": "assistant", "content": ANSWER, "reasoning_content": REASONING}])

    shape = _call_shape(attempt, (out.prompt or "").count(FIRST))
    if shape is None:
        return out
    as_string, content, ids = shape
    out.ids = ids

    def turn(*calls: tuple[str, dict[str, Any], str]) -> str | None:
        tool_calls = [call(name, args, call_id, as_string) for name, args, call_id in calls]
        return attempt([user(), {"role": "assistant", "content": content, "tool_calls": tool_calls}])

    out.one_call = turn((FIRST, ARGS_AB, ids[0]))
    out.two_calls = turn((FIRST, ARGS_AB, ids[0]), (SECOND, {KEY_A: VALUE_A}, ids[1]))
    out.typed_call = turn((FIRST, ARGS_AN, ids[0]))
    out.empty_call = turn((FIRST, {}, ids[0]))
    out.other_id = turn((FIRST, ARGS_AB, OTHER_ID)) if not ids[0].startswith("functions.") else None
    return out


def _call_shape(attempt: Callable[..., str | None], listed: int) -> tuple[bool, Any, tuple[str, ...]] | None:
    """``(arguments as a JSON string, the content, the ids)`` that make the template render one call; None if none.

    ``listed``: how often the name is written without a call (the tools list in the prompt).
    """
    kimi_ids = (f"functions.{FIRST}:0", f"functions.{SECOND}:1")
    for ids in (IDS, kimi_ids):
        id_as_name = False
        for as_string in (False, True):
            for content in ("", None):
                message = {"role": "assistant", "content": content, "tool_calls": [call(FIRST, ARGS_AB, ids[0], as_string)]}
                text = attempt([user(), message])
                if text is not None and text.count(FIRST) > listed and KEY_A in text:
                    return as_string, content, ids
                id_as_name = id_as_name or (text is not None and ids[0] in text and FIRST not in text)
        if not id_as_name:
            return None  # the template writes neither the name nor the id: it renders no calls
    return None


__all__ = [
    "ANSWER",
    "ARGS_AB",
    "ARGS_AN",
    "FIRST",
    "IDS",
    "KEY_A",
    "KEY_B",
    "KEY_N",
    "NUMBER",
    "OTHER_ID",
    "REASONING",
    "SECOND",
    "TOOLS",
    "USER",
    "VALUE_A",
    "VALUE_B",
    "Renderer",
    "Renders",
    "call",
    "collect",
    "user",
]
