"""The one declaration a wire format makes: :class:`FormatSpec`.

Everything callscope knows about a format, apart from how its parser reads
text, is in its spec, so the code of a format is one module (parser + spec) and
one line in the registry (docs/extending.md lists the rest: its docs row, peer
cases and generated fixtures). The consumers loop over specs and never name a format:

* the parser registry (:mod:`callscope.engine.formats`): ``id``, ``description``,
  ``parser``, ``thinking``;
* the capture checker and the text pane: ``markers``;
* sample and fixture text (:mod:`callscope.engine.formats.samples`): ``write``;
* forced calls (:mod:`callscope.engine.decode.grammar`): ``envelopes``;
* chat-template detection and built-in templates (:mod:`callscope.engine.templates.chat`):
  ``signs`` and ``template``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from callscope.engine.formats._kit.gbnf import Envelope
from callscope.engine.formats._kit.parser import FormatParser

#: One call as a writer takes it: ``(name, arguments)``.
Call = tuple[str, dict[str, Any]]
#: ``(calls, content, reasoning) -> the generation of a model that writes them in the format``.
Writer = Callable[[list[Call], str, str], str]

#: What a format id may be: it is spelt in ``callscope-format:`` template declarations and CLI flags.
_ID = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True, slots=True)
class Markers:
    """The text a format writes around calls (and reasoning), which is never content.

    ``leak``: exact strings that must never reach a client as ``delta.content``.
    The capture checker cannot know which format a server speaks, so it looks
    for every format's ``leak`` strings at once: list only strings no prose
    would contain (``<tool_call>``, ``[TOOL_CALLS]``), not ``TOOL_CALL``.

    ``markup``: regular expressions for the rest of the format's markup, for the
    text pane's colouring only: markers that carry a value (``<function=NAME>``)
    and reasoning tags. Every ``leak`` string is coloured too.
    """

    leak: tuple[str, ...] = ()
    markup: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for pattern in self.markup:
            re.compile(pattern)  # a broken pattern fails at import of its format, not in the GUI


@dataclass(frozen=True, slots=True)
class TemplateSign:
    """One way a chat template shows that it teaches the format.

    Detection tries the signs of every format in ``priority`` order, lowest
    first, and the first that holds wins, which keeps llama.cpp's order
    (``common_chat_templates_apply_jinja``): DeepSeek V3.1 (100), DeepSeek
    R1/V3 markers (200), Qwen3-Coder XML (600), Hermes 2 Pro (700), GPT-OSS
    (800), Llama 3.x (1000), Mistral Nemo (1100), the generic JSON fallback
    (9000), and finally templates without tool support (9900). New formats take
    the gaps llama.cpp puts them in.

    A sign holds when every one of ``markers`` occurs in the template source
    and, if ``renders_tools`` is set, the template does (True) or does not
    (False) render the request's tools (probed by rendering). ``reason`` is what
    ``callscope prompt`` prints: what was seen and which llama.cpp handler agrees.
    """

    priority: int
    reason: str
    markers: tuple[str, ...] = ()
    renders_tools: bool | None = None


@dataclass(frozen=True, slots=True)
class FormatSpec:
    """A wire format: its parser and everything the rest of callscope needs to know about it."""

    #: The format id (``--format``, traces, reports): lower case, digits and ``_``.
    id: str
    #: One line shown in help and the GUI's format picker.
    description: str
    #: The incremental parser; ``parser(tools)``, or ``parser(tools, thinking=True)`` when ``thinking``.
    parser: type[FormatParser]
    #: What must never leak into content, and what the text pane colours as markup.
    markers: Markers
    #: The writer: the text a model writes for given calls, content and reasoning (samples, fixtures).
    write: Writer
    #: The parser can start inside a reasoning block (the prompt ended with ``<think>``).
    thinking: bool = False
    #: The syntaxes a call can be forced in, the default first; empty: calls cannot be forced.
    envelopes: tuple[Envelope, ...] = ()
    #: How a chat template shows it teaches this format.
    signs: tuple[TemplateSign, ...] = ()
    #: The built-in chat template: a file name under the shipped ``templates/``, or a path
    #: (a format defined outside callscope ships its own); None: no built-in template.
    template: str | Path | None = None

    def __post_init__(self) -> None:
        if not _ID.fullmatch(self.id):
            raise ValueError(f"format id {self.id!r}: use lower-case letters, digits and _, starting with a letter")
        forms = [e.form for e in self.envelopes]
        if len(forms) > 1 and (not all(forms) or len(set(forms)) != len(forms)):
            raise ValueError(f"format {self.id!r}: several envelopes need distinct, non-empty form names")

    @property
    def forms(self) -> tuple[str, ...]:
        """The names of the forced-call syntaxes a user can choose between (empty with one syntax)."""
        return tuple(e.form for e in self.envelopes) if len(self.envelopes) > 1 else ()

    def envelope(self, form: str | None = None) -> Envelope:
        """The envelope for ``form`` (None: the default); an unknown form raises ``ValueError`` naming the known ones."""
        if not self.envelopes:
            raise ValueError(f"format {self.id!r} declares no forced-call grammar")
        if form is None or len(self.envelopes) == 1 and form == self.envelopes[0].form:
            return self.envelopes[0]
        for envelope in self.envelopes:
            if envelope.form == form:
                return envelope
        raise ValueError(f"unknown {self.id} call form {form!r}; known forms: {', '.join(self.forms) or '(one only)'}")


__all__ = ["Call", "FormatSpec", "Markers", "TemplateSign", "Writer"]
