"""The part every derived parser shares: reasoning, content, and the section / call loop around the calls.

A derived parser is a :class:`~callscope.engine.formats._kit.text_machine.ThinkTextMachine`
(reasoning first, then text) whose markers come from a
:class:`~callscope.engine.formats.derived.description.FormatDescription` instead of
constants. In text it looks for the *trigger*, the first literal of the
description's opener (``<tool_call>``, ``[TOOL_CALLS]``,
``<|tool_calls_section_begin|>``); from there:

* ``INTRO``: the rest of ``section_start`` and ``call_start`` (whitespace-flexible;
  ``[`` between them for array-wrapped JSON calls). A mismatch releases the trigger
  as content and text is scanned again right after it.
* the family's body states (one call; see the family modules), which end in
  ``AFTER_CALL`` or, for a call broken after it opened, back in text;
* ``AFTER_CALL``: ``call_end`` (a missing one is tolerated);
* ``NEXT``: ``section_end`` (back to text), or ``call_separator`` + ``call_start``
  (the next call); anything else is content again.

Until a call opens, everything since the trigger is held (``_pending``) so that
an attempt that turns out not to be a call is shown as content, verbatim. A
call opens once its name is complete; from then on it stays a call. With no
opener at all (a bare JSON call, as Llama 3.x writes it) the generation is a
call attempt only if its text starts with ``{`` or ``[``.

The work per feed is bounded by the new text: the buffer only ever holds a
half-typed marker, a name (at most :data:`NAME_LIMIT` characters) or a
placeholder's text (:data:`~callscope.engine.formats.derived.pattern.CAPTURE_LIMIT`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from callscope.engine.formats._kit.text_machine import START, TEXT, THINK, THINK_END, ThinkTextMachine
from callscope.engine.formats.derived.description import FormatDescription
from callscope.engine.formats.derived.pattern import DONE, FAIL, MORE, Match, Pattern

#: Longest function or argument name accepted; a longer one is malformed (bounds the hold-back).
NAME_LIMIT = 256

# states of every derived parser (besides ThinkTextMachine's start / reasoning / text)
INTRO = "intro"  # after the trigger: the rest of the section and call openers
BODY = "body"  # a call begins here (the family's first state)
AFTER_CALL = "after_call"
NEXT = "next"  # after a call: another one, the section's end, or content

#: Characters that never belong to a function or argument name.
_NOT_NAME = "\\s<>\\[\\]{}\"'|=,()`"


def name_stop(*followers: str) -> re.Pattern[str]:
    """What ends a name: whitespace, markup characters, and the first character of what may follow it."""
    extra = "".join(re.escape(f[0]) for f in followers if f and not f[0].isspace())
    return re.compile(f"[{_NOT_NAME}{extra}]")


@dataclass(frozen=True, slots=True)
class Syntax:
    """A description compiled for parsing: patterns and the text markers, built once per parser class."""

    description: FormatDescription
    trigger: str
    intro: Pattern
    next_intro: Pattern
    call_end: Pattern
    section_end: Pattern
    name_suffix: Pattern
    think_open: str
    think_close: str
    #: The end-of-turn stop token, dropped where it appears in text ("" when it is not special markup).
    stop: str = ""

    @classmethod
    def of(cls, d: FormatDescription) -> Syntax:
        opener = Pattern.compile(d.section_start if d.section_start.strip() else d.call_start)
        after_section = Pattern.compile(d.call_start) if d.section_start.strip() else Pattern.compile("")
        bracket_open = Pattern.compile("[" if d.array else "")
        bracket_close = Pattern.compile("]" if d.array else "")
        trigger, rest = opener.split_first()
        intro = Pattern.join(rest, bracket_open, after_section)
        separator = Pattern.compile("," if d.array else d.call_separator)
        return cls(
            description=d,
            trigger=trigger,
            intro=intro,
            next_intro=Pattern.join(separator, Pattern.compile(d.call_start)),
            call_end=Pattern.compile(d.call_end),
            section_end=Pattern.join(bracket_close, Pattern.compile(d.section_end)),
            name_suffix=Pattern.compile(d.name_suffix),
            think_open=d.reasoning_start.strip() or THINK,
            think_close=d.reasoning_end.strip() or THINK_END,
            stop=_stop_token(d.end_of_turn.strip(), trigger),
        )


def _stop_token(end: str, trigger: str) -> str:
    """``end`` as a marker to drop from text: special markup only, and never the calls' own trigger."""
    special = len(end) >= 3 and any(c in end for c in "<>[]|") and end != trigger
    return end if special else ""


class DerivedParser(ThinkTextMachine):
    """Base of the family parsers: the front (reasoning, content) and the loop over calls.

    A concrete parser class is made per description (:func:`parser_class`);
    ``syntax`` holds the compiled description.
    """

    syntax: ClassVar[Syntax]
    #: The state a call's body starts in (set by the family).
    _body_state: ClassVar[str] = BODY

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)
        self._bare = not self.syntax.trigger  # a bare JSON call: only at the very start of the text
        self._bare_open = self._bare
        self._opened = False  # the current call opened (the attempt is committed)
        self._intro_id: str | None = None  # a call id written before the name (``call_start`` holds ``{id}``)
        self._started = False  # the start's ``prompt_holds`` has been looked for
        self._dropped_holds = False  # ... and dropped: the layout after it is dropped too
        d = self.syntax.description
        opener = d.section_start if d.section_start.strip() else d.call_start
        #: The opener starts with a space on its own line (FireFunction's `` functools[``): content's trailing
        #: spaces are held, and dropped when the opener follows (they are the opener's), as llama.cpp reads it.
        #: (A newline before an opener stays content's, as peers keep it.)
        self._eats_space = opener[:1] in (" ", "\t")
        self._space = ""  # content's trailing whitespace, held
        self._space_at_trigger = ""  # what was held when the trigger came (given back if it is no call)

    # ------------------------------------------------------------ ending

    def _finish(self) -> None:
        if self._space and self._state == TEXT:
            self._buf, self._space = self._space + self._buf, ""
        super()._finish()

    def _finish_in(self, state: str, buf: str) -> None:
        if not self._opened and self._pending:
            self._say_content(self._pending + buf)  # an attempt that never became a call: it was text
            self._pending = ""
            return
        self._finish_call(state, buf)

    def _finish_call(self, state: str, buf: str) -> None:
        """End of generation inside a call (or after one): keep what was written; by default drop the rest."""

    # ------------------------------------------------------------ text

    def _on_derived_start(self) -> bool:
        """The generation's start: the end of the prompt written again (``prompt_holds``) is dropped first."""
        held = self.syntax.description.prompt_holds
        if held and not self._started:
            rest = self._buf.lstrip()
            if not rest or (held.startswith(rest) and rest != held):
                return False
            self._started = True
            if rest.startswith(held):
                self._buf = rest[len(held) :]
                self._dropped_holds = True
        progressed = ThinkTextMachine._on_start(self)
        if self._state != START:
            # layout at the very start (a template's newline before its calls, or after the header the
            # prompt holds) is not content
            self._dropped_holds = False
            self._skip_ws = True
        return progressed

    def _on_derived_text(self) -> bool:
        if self._bare_open:
            return self._bare_start()
        if not self._eats_space:
            return ThinkTextMachine._on_text(self)
        marker = self._scan(self._text_markers, self._say_text)
        if marker is None:
            return False
        if marker == self._think_close:
            self._space = ""
            self._skip_ws = True
        else:
            self._on_text_marker(marker)
        return True

    def _say_text(self, text: str) -> None:
        """Content before a call opener that starts with whitespace: its trailing whitespace waits."""
        body = text.rstrip()
        if body:
            self._say_content(self._space + body)
            self._space = text[len(body) :]
        else:
            self._space += text

    def _bare_start(self) -> bool:
        """Bare JSON: the text is a call attempt only if it starts (after whitespace) with ``{`` or ``[``."""
        buf = self._buf
        rest = buf.lstrip()
        if not rest:
            return False
        self._bare_open = False
        if rest[0] in "{[":
            self._pending = buf[: len(buf) - len(rest)]
            self._buf = rest
            self._opened = False
            self._state = INTRO  # the array's "[" for array-wrapped calls; nothing otherwise
        return True

    def _on_text_marker(self, marker: str) -> None:
        if marker == self.syntax.stop:  # the turn's stop token in the text (a peer's recorded output): dropped
            self._skip_ws = True
            self._space = ""
            return
        self._space_at_trigger, self._space = self._space, ""
        self._pending = marker
        self._opened = False
        self._state = INTRO

    def _on_intro(self) -> bool:
        found = self.syntax.intro.match(self._buf)
        if found.status == MORE:
            return False
        if found.status == FAIL:
            return self._give_up()
        self._take(found.end)
        self._intro_id = found.call_id
        self._state = self._body_state
        return True

    # ------------------------------------------------------------ between calls

    def _on_after_call(self) -> bool:
        found = self.syntax.call_end.match(self._buf)
        if found.status == MORE:
            return False
        if found.status == DONE:
            self._buf = self._buf[found.end :]
        self._state = NEXT
        return True

    def _on_next(self) -> bool:
        syntax = self.syntax
        buf = self._buf
        if not buf.strip():
            return False
        end = syntax.section_end.match(buf) if not syntax.section_end.empty else None
        if end is not None and end.status == DONE:
            self._buf = buf[end.end :]
            return self._back_to_text()
        nxt = syntax.next_intro.match(buf)
        if nxt.status == DONE:
            ahead = self._body_ahead(buf[nxt.end :])
            if ahead is None:
                return False
            if ahead:
                self._intro_id = nxt.call_id
                self._buf = buf[nxt.end :]
                self._pending = ""
                self._opened = False
                self._state = self._body_state
                return True
            nxt = Match(FAIL)
        if nxt.status == MORE or (end is not None and end.status == MORE):
            return False
        return self._back_to_text()  # the section was never closed: what follows is content

    def _body_ahead(self, rest: str) -> bool | None:
        """Whether a call body starts at ``rest`` (None: the next piece decides). Default: it does."""
        return True

    # ------------------------------------------------------------ helpers

    def _take(self, n: int) -> None:
        """Consume ``n`` characters of the buffer into the held attempt."""
        self._pending += self._buf[:n]
        self._buf = self._buf[n:]

    def _give_up(self) -> bool:
        """The attempt is not a call: its trigger is content, and text is scanned again right after it."""
        held, trigger = self._pending, self.syntax.trigger
        self._pending = ""
        if trigger and held.startswith(trigger):
            self._say_content(self._space_at_trigger + trigger)
            self._space_at_trigger = ""
            self._buf = held[len(trigger) :] + self._buf
        else:  # a bare attempt: all of it is content, and so is what follows
            self._say_content(held + self._buf)
            self._buf = ""
        self._state = TEXT
        return True

    def _open_call(self, call_id: str | None = None) -> int:
        """A call opens; an id the intro carried (``<|tool_call:begin|>ID``) is its id unless the call has its own."""
        call_id, self._intro_id = call_id or self._intro_id, None
        return super()._open_call(call_id)

    def _commit(self, call_id: str | None, name: str) -> int:
        """The call opens (its name is complete): the held attempt is settled."""
        self._pending = ""
        self._opened = True
        self._call = self._open_call(call_id)
        self._name_call(self._call, name)
        return self._call

    #: The handlers of the shared states, for a family's ``_handlers`` table.
    shared_handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **ThinkTextMachine.think_handlers,
        START: _on_derived_start,
        TEXT: _on_derived_text,
        INTRO: _on_intro,
        AFTER_CALL: _on_after_call,
        NEXT: _on_next,
    }


def parser_class(base: type[DerivedParser], description: FormatDescription, name: str) -> type[DerivedParser]:
    """A parser class for ``description``: ``base`` (a family) with its compiled syntax and markers."""
    syntax = Syntax.of(description)
    markers = tuple(m for m in (syntax.trigger, syntax.think_close, syntax.stop) if m)
    namespace = {
        "syntax": syntax,
        "_think_open": syntax.think_open,
        "_think_close": syntax.think_close,
        "_text_markers": markers,
        "__doc__": f"Derived parser ({description.title}) for {description.source or name}.",
    }
    return type(name, (base,), namespace)


__all__ = [
    "AFTER_CALL",
    "BODY",
    "INTRO",
    "NAME_LIMIT",
    "NEXT",
    "DerivedParser",
    "Syntax",
    "name_stop",
    "parser_class",
]
