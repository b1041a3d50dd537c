"""Tag + tagged arguments: ``call_start NAME name_suffix (key_prefix KEY key_suffix VALUE value_end)* call_end``.

GLM's ``<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>``,
MiniMax's ``<invoke name="NAME"><parameter name="K">V</parameter></invoke>``,
Seed-OSS's ``<function=NAME><parameter=K>V</parameter></function>``, DeepSeek
V3.2's DSML. The JSON arguments are built append-only by the same
:class:`~callscope.engine.formats._kit.xml_values.TypedArguments` the dedicated
tagged parsers (Qwen3-Coder, GLM, MiniMax) use, typed from the request's tools:

* ``{`` when the call opens, ``"KEY":`` (``,"KEY":`` after the first) once the key and its suffix are read;
* a ``string`` value: ``"``, then the text JSON-escaped as it arrives, the closing ``"`` at ``value_end``;
* another declared type: the raw text as it arrives (``True``/``False``/``None`` as ``true``/``false``/``null``);
  a declared ``object`` or ``array`` read as JSON or as a Python literal (``{'a': None}``);
* an undeclared type: held until ``value_end``, then written once: a JSON or Python literal as JSON,
  else as a JSON string;
* ``}`` at ``call_end`` (or when something else follows the last value).

The template's own layout around a value (``value_lead`` after ``key_suffix``,
``value_trail`` before ``value_end``, a newline in Qwen3-Coder's spelling) is not
value text; the first ``value_end`` ends the value. At the end of the generation
a value cut short keeps what was written (a held one is written as far as it got).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.marker_search import held_back_from
from callscope.engine.formats._kit.xml_values import TypedArguments
from callscope.engine.formats.derived.description import KEY as KEY_PLACEHOLDER
from callscope.engine.formats.derived.description import SKIP
from callscope.engine.formats.derived.machine import NAME_LIMIT, NEXT, name_stop
from callscope.engine.formats.derived.pattern import DONE, FAIL, MORE, Match, Pattern
from callscope.engine.formats.derived.tags import TagParser

ARG_NEXT = "arg_next"  # another argument, or the call's end
KEY = "key"
KEY_SUFFIX = "key_suffix"
VALUE_START = "value_start"
VALUE = "value"
ARG_SEP = "arg_sep"

def varying(one: str, other: str) -> str:
    """One pattern for two spellings of a marker: what they share, with ``{skip}`` where they differ."""
    if not other or other == one:
        return one
    head = len(os.path.commonprefix([one, other]))
    tail = len(os.path.commonprefix([one[head:][::-1], other[head:][::-1]]))
    while head and one[head - 1].isalnum():  # never cut a word: "true" / "false" share no "e"
        head -= 1
    while tail and one[len(one) - tail].isalnum():
        tail -= 1
    return one[:head] + SKIP + one[len(one) - tail :]


class Parser(TagParser):
    """Calls with the name and every argument in markup (see the module docstring)."""

    _arguments_state = ARG_NEXT

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)
        d = self.syntax.description
        self._key_prefix = Pattern.compile(d.key_prefix)
        self._key_suffix = Pattern.compile(varying(d.key_suffix, d.key_suffix_json))
        self._separator = Pattern.compile(d.argument_separator)
        self._key_stop = name_stop(d.key_suffix)
        self._value_end = ""  # the open value's closer (its key filled in where the closer names it)
        self._value_ends: tuple[str, ...] = ()
        self._closer_names_key = KEY_PLACEHOLDER in d.value_end
        self._set_value_end(d.value_end.strip())
        self._args: TypedArguments | None = None  # the open call's arguments, typed from the tools' schema
        self._key = ""

    def _set_value_end(self, end: str) -> None:
        trail = self.syntax.description.value_trail
        self._value_end = end
        self._value_ends = (trail + end, end) if trail else (end,)

    # ------------------------------------------------------------ the call

    def _start_arguments(self) -> None:
        self._args = TypedArguments(self, self._call, self._function)  # writes "{"

    def _close_call(self) -> None:
        if self._args is not None:
            self._args.close()
            self._args = None

    def _on_arg_next(self) -> bool:
        buf = self._buf
        if not buf.strip():
            return False
        key = self._key_prefix.match(buf) if not self._key_prefix.empty else None
        # no call_end (calls joined without one): the call ends where something other than a key follows
        end = self.syntax.call_end.match(buf) if not self.syntax.call_end.empty else Match(FAIL)
        if key is not None and key.status == DONE:
            if end.status == MORE:
                return False  # "<" may open a key or begin "</invoke>": the next piece decides
            if end.status == DONE and end.end > key.end:
                key = None  # the call's end, which starts like a key's opener ("</invoke>" after "<")
        if key is not None and key.status == DONE:
            self._buf = buf[key.end :]
            self._key = ""
            self._state = KEY
            return True
        if end.status == DONE:
            self._buf = buf[end.end :]
            self._close_call()
            self._state = NEXT
            return True
        if end.status == MORE or (key is not None and key.status == MORE):
            return False
        self._close_call()  # something else follows the last value: the call ends, text resumes
        return self._back_to_text()

    # ------------------------------------------------------------ one argument

    def _on_key(self) -> bool:
        buf = self._buf
        found = self._key_stop.search(buf)
        if found is None:
            if len(self._key) + len(buf) > NAME_LIMIT:
                return self._broken_argument()
            self._key += buf
            self._buf = ""
            return False
        key = self._key + buf[: found.start()]
        self._buf = buf[found.start() :]
        if not key or len(key) > NAME_LIMIT:
            return self._broken_argument()
        self._key = key
        self._state = KEY_SUFFIX
        return True

    def _on_key_suffix(self) -> bool:
        found = self._key_suffix.match(self._buf)
        if found.status == MORE:
            return False
        if found.status == FAIL:
            return self._broken_argument()
        self._buf = self._buf[found.end :]
        if self._args is not None:
            self._args.key(self._key)  # '"KEY":' once its suffix confirmed it (and '"' for a string)
        if self._closer_names_key:
            self._set_value_end(self.syntax.description.value_end.strip().replace(KEY_PLACEHOLDER, self._key))
        self._state = VALUE_START
        return True

    def _on_value_start(self) -> bool:
        lead = self.syntax.description.value_lead
        buf = self._buf
        if lead:
            if buf.startswith(lead):
                buf = buf[len(lead) :]
            elif lead.startswith(buf):
                return False
        self._buf = buf
        self._state = VALUE
        return True

    def _on_value(self) -> bool:
        buf = self._buf
        at = buf.find(self._value_end) if self._value_end else -1
        if at < 0:
            cut = held_back_from(buf, self._value_ends)
            self._value_text(buf[:cut])
            self._buf = buf[cut:]
            return False
        text = buf[:at]
        trail = self.syntax.description.value_trail
        if trail and text.endswith(trail):
            text = text[: -len(trail)]
        self._value_text(text)
        self._close_value()
        self._buf = buf[at + len(self._value_end) :]
        self._state = ARG_SEP
        return True

    def _on_arg_sep(self) -> bool:
        if not self._separator.empty:
            found = self._separator.match(self._buf)
            if found.status == MORE:
                return False
            if found.status == DONE:
                self._buf = self._buf[found.end :]
        self._state = ARG_NEXT
        return True

    def _broken_argument(self) -> bool:
        """A key that is not one (too long, empty, a suffix that does not follow): the call ends here."""
        self._close_call()
        return self._back_to_text()

    # ------------------------------------------------------------ values

    def _value_text(self, text: str) -> None:
        if text and self._args is not None:
            self._args.text(text)

    def _close_value(self) -> None:
        if self._args is not None:
            self._args.close_value()

    def _finish_call(self, state: str, buf: str) -> None:
        if state in (ARG_NEXT, ARG_SEP):  # the generation ends after a value: with no call_end, the call is whole
            if self.syntax.call_end.empty:
                self._close_call()
            return
        if state != VALUE:
            return  # layout or a half-typed marker: dropped
        if self._value_end and self._value_end in buf:  # the end arrived with the last piece
            self._on_value()
        elif self._args is not None:  # cut short: write the value as far as it got
            self._value_text(buf[: held_back_from(buf, self._value_ends)])
            self._args.truncate()

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **TagParser.header_handlers,
        ARG_NEXT: _on_arg_next,
        KEY: _on_key,
        KEY_SUFFIX: _on_key_suffix,
        VALUE_START: _on_value_start,
        VALUE: _on_value,
        ARG_SEP: _on_arg_sep,
    }


__all__ = ["ARG_NEXT", "KEY", "KEY_SUFFIX", "VALUE", "VALUE_START", "Parser", "varying"]
