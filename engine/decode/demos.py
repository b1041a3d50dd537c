"""The demo presets: the request and forced-call settings `callscope run` and the window start with.

(Cheap to import: ``callscope prompt`` reads its request from here without loading the grammar code.)

A demo has to show the win live, measured from the request: the first
tool-call delta must leave long before the atomic path would have sent the
call. With the packaged 135M model (about 50 tok/s on two cores) prompt
evaluation is a fixed half second or so, so the gap only shows when the call
is long and starts at once. The default, ``write-file``, forces one call to a
``write_file`` tool (a short prompt, one tool, no content line before the call)
whose ``content`` must hold 2,600 to 3,000 characters (its schema's
``minLength``, the preset's ``max_string``): about 700 tokens, so the header
goes out within the first 20 tokens and the call ends 14 s or more later. (With
a 2,000-character minimum, about 500 tokens, a shared two-core machine measured
9.4-9.8x; 2,600 gave 12.7x in the same minutes. The model writes on to the
bound, so the bound, not the seed, sets the length.) ``quick`` is the earlier demo: two short
calls to the weather and file tools, done in two seconds, where most of the
first-delta time is prompt evaluation.

``max_string`` (the forced run's bound on strings, :func:`~callscope.engine.decode.grammar.tighten`)
belongs to the preset's own tools: ``write_file`` bounds its ``path`` itself
and leaves ``content`` to this bound. With other tools the ordinary bound
applies (:meth:`DemoPreset.max_string_for`), so a tool with an unbounded string
never gets a 3,000-character field to ramble in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from callscope.engine.core.errors import DecodeError
from callscope.engine.core.shipped import resource
from callscope.engine.core.tools import parse_tools

#: The forced run's string bound when nothing raises it (``build_tool_grammar``'s own default).
DEFAULT_MAX_STRING = 24


class UnknownDemo(DecodeError):
    """``--demo`` names no preset."""


@dataclass(frozen=True, slots=True)
class DemoPreset:
    """One demo: the request (prompt, shipped tools file) and how its call is forced and bounded."""

    name: str
    summary: str
    prompt: str
    tools_file: str  # in resources/tools/
    max_calls: int = 1
    min_calls: int = 1
    content_chars: int = 0  # a short content line the grammar allows before the calls (0: the call comes first)
    max_string: int = DEFAULT_MAX_STRING
    max_tokens: int = 256
    #: Sampling's repeat penalty: a tiny model writing 700 tokens of prose loops on one sentence without it.
    repeat_penalty: float = 1.0

    def messages(self, prompt: str | None = None) -> list[dict[str, Any]]:
        """The demo conversation: one user message (``prompt`` replaces the demo's own)."""
        return [{"role": "user", "content": self.prompt if prompt is None else prompt}]

    def tools_text(self) -> str:
        return resource("tools", self.tools_file).read_text(encoding="utf-8")

    def tools(self) -> list[dict[str, Any]]:
        return parse_tools(self.tools_text(), self.tools_file)

    def max_string_for(self, tools: list[dict[str, Any]] | None) -> int:
        """The preset's string bound when the run uses the preset's own tools, else the default one."""
        return self.max_string if tools == self.tools() else DEFAULT_MAX_STRING

    def run_options(self, tools: list[dict[str, Any]] | None) -> dict[str, Any]:
        """The :class:`~callscope.engine.decode.session.RunSettings` fields this demo sets, for a run with ``tools``."""
        return {
            "max_calls": self.max_calls,
            "min_calls": self.min_calls,
            "content_chars": self.content_chars,
            "max_string": self.max_string_for(tools),
        }


WRITE_FILE = DemoPreset(
    name="write-file",
    summary="one long write_file call (about 700 tokens): the first delta arrives 10x+ before the atomic emission",
    prompt="Write a story about a lighthouse keeper to story.txt.",
    tools_file="write_file.json",
    max_calls=1,
    content_chars=0,
    max_string=3000,
    max_tokens=2500,  # a cap, not the length: seed 1 writes about 700 tokens; a garbled seed may need more
    repeat_penalty=1.15,
)

QUICK = DemoPreset(
    name="quick",
    summary="two short calls (get_weather, read_file) in two seconds; mostly prompt evaluation, about 2x",
    prompt="What is the weather in Paris right now? Also show me the file notes/todo.txt.",
    tools_file="default.json",
    max_calls=2,
    content_chars=40,
    max_tokens=256,
)

DEMOS: dict[str, DemoPreset] = {d.name: d for d in (WRITE_FILE, QUICK)}
DEFAULT_DEMO = WRITE_FILE.name


def get_demo(name: str | None = None) -> DemoPreset:
    """The preset called ``name`` (the default demo for None); an unknown name raises :class:`UnknownDemo`."""
    demo = DEMOS.get(name or DEFAULT_DEMO)
    if demo is None:
        raise UnknownDemo(f"unknown demo {name!r}; demos: {', '.join(DEMOS)}")
    return demo
