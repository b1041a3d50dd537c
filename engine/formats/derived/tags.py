"""The call header both tag families share: ``call_start NAME name_suffix``.

The name is read up to its first stop character (whitespace, markup, or the
first character of ``name_suffix``); it must be non-empty and at most
:data:`~callscope.engine.formats.derived.machine.NAME_LIMIT` characters. It is final, and
the call opens, once ``name_suffix`` follows it as the template writes it
(Qwen3-Coder's name is final at ``>``, Kimi's at ``:0<|tool_call_argument_begin|>``);
a suffix holding the call id (``[CALL_ID]{id}[ARGS]``) gives the call that id, so
the model's id travels in its first delta. Anything else after the name means the
attempt was not a call: the trigger is content and text is read again after it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats.derived.machine import NAME_LIMIT, DerivedParser, name_stop
from callscope.engine.formats.derived.pattern import FAIL, MORE

NAME = "name"
SUFFIX = "suffix"


class TagParser(DerivedParser):
    """A call whose name is written in markup; the family reads what follows ``name_suffix``."""

    _body_state = NAME
    #: The state the arguments start in (set by the family).
    _arguments_state: ClassVar[str] = ""

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)
        d = self.syntax.description
        self._name_stop = name_stop(d.name_suffix, d.key_prefix, d.call_end)
        self._function = ""  # the open call's name (for the parameter types)

    def _on_name(self) -> bool:
        if not self._name and not self._buf.strip():
            self._take(len(self._buf))  # layout before the name
            return False
        if not self._name:
            self._take(len(self._buf) - len(self._buf.lstrip()))
        rest = self._read_name(self._name_stop)
        if rest is None:
            return False if len(self._name) <= NAME_LIMIT else self._give_up()
        name, self._name = self._name, ""
        if not name or len(name) > NAME_LIMIT:
            return self._give_up()
        self._function = name
        self._state = SUFFIX
        return True

    def _on_suffix(self) -> bool:
        found = self.syntax.name_suffix.match(self._buf)
        if found.status == MORE:
            return False
        if found.status == FAIL:
            return self._give_up()  # the name is not followed as the template writes it: not a call
        self._commit(found.call_id, self._function)
        self._buf = self._buf[found.end :]
        self._start_arguments()
        self._state = self._arguments_state
        return True

    def _start_arguments(self) -> None:
        """The arguments begin (after ``name_suffix``)."""

    header_handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **DerivedParser.shared_handlers,
        NAME: _on_name,
        SUFFIX: _on_suffix,
    }


__all__ = ["NAME", "SUFFIX", "TagParser"]
