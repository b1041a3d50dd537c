"""The 2026 call families, each shown by a chat template of callscope's own writing (``templates/families/``).

Each family is a way real templates write tool calls that callscope reads from
the template alone: by a dedicated parser where one fits, else by the format
derived from the template (:mod:`callscope.engine.templates.analysis`). The
templates are written here, never copied, with the markers and layout of the
models they stand for; the fixtures (``fixtures/families/``), the forced live
calls, the peers' cases and ``callscope bench template``/``bench parse`` all
start from this table.
"""

from __future__ import annotations

from dataclasses import dataclass

from callscope.engine.core.shipped import resource
from callscope.engine.templates.chat import ChatTemplate, load_template_file


@dataclass(frozen=True, slots=True)
class Family:
    """One call family and the template that shows it."""

    name: str
    #: What is particular about it, and which models write it.
    title: str
    #: The thinking switch its template reads (None: it has none).
    switch: str | None = None

    @property
    def template_name(self) -> str:
        """The template's path under the shipped ``templates/`` (what a recording names)."""
        return f"families/{self.name}.jinja"

    def template(self) -> ChatTemplate:
        return load_template_file(resource("templates", "families", f"{self.name}.jinja"))


FAMILIES: tuple[Family, ...] = (
    Family("name_tags", "the parameter's name is its tag inside an invoke block (MiniMax-M3)", "enable_thinking"),
    Family("shared_closer", "one closer token ends a value and the call (Kimi-K3)", "thinking"),
    Family("joined_calls", "calls joined without a separator or a closer"),
    Family("pythonic_text", "a pythonic call list after leading text (LFM2.5)"),
    Family("functools", "FireFunction v2's ' functools[...]' after the text"),
    Family("prompt_holds", "an opener the prompt already partly holds (Command R+)"),
    Family("think_brackets", "[THINK]...[/THINK] reasoning before [TOOL_CALLS] (Ministral 3)"),
)


def family(name: str) -> Family:
    for found in FAMILIES:
        if found.name == name:
            return found
    raise ValueError(f"unknown family {name!r}; known: {', '.join(f.name for f in FAMILIES)}")


__all__ = ["FAMILIES", "Family", "family"]
