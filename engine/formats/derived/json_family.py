"""The JSON-native family: the whole call is one JSON object, ``{"name": ..., "arguments": {...}}``.

The object is read by :class:`~callscope.engine.formats._kit.json_call_machine.CallObjectScan`
with the template's member names (``tool_name``/``parameters``...), so the
arguments stream verbatim and the name goes out once complete; with
``name_key == ""`` the object is ``{"NAME": {...}}`` and the name is complete
once its value starts. Array-wrapped calls (``[TOOL_CALLS][{...}, {...}]``) need
nothing of their own: the brackets and the comma are part of the section's
patterns (:class:`~callscope.engine.formats.derived.machine.Syntax`).

Until the call opens the attempt is held; if the text stops looking like a call
first, the trigger is content and text is read again after it (a bare attempt
is all content). A syntax error after the call opened ends it with the
arguments so far; what follows is read as what follows a call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.json_call_machine import CallKeys, CallObjectScan, CallReader
from callscope.engine.formats.derived.machine import AFTER_CALL, DerivedParser

JSON_CALL = "json_call"


class NameKeyReader(CallReader):
    """A call object ``{"NAME": {arguments}}``: the first member's key is the name, its value the arguments."""

    __slots__ = ()

    def value_start(self, key: object, pos: int, first: str) -> None:
        if self.opened or self.name is not None:
            self.skip_member()
        elif isinstance(key, str) and key and first in '{"':
            self.name = key
            self._open_arguments(pos, first)
        else:
            self._not_a_call()


class Parser(DerivedParser):
    """Calls written as JSON objects (see the module docstring)."""

    _body_state = JSON_CALL

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)
        d = self.syntax.description
        self._keys = CallKeys(name=(d.name_key,), arguments=(d.arguments_key,), id=(d.id_key or "id",))
        self._object: CallObjectScan | None = None

    def _new_scan(self) -> CallObjectScan:
        scan = CallObjectScan(self, self._keys, wrapper=self.syntax.description.wrapper_key or None)
        if not scan.wrapper and not self.syntax.description.name_key:
            scan.reader = NameKeyReader(self)
        return scan

    def _on_json_call(self) -> bool:
        buf = self._buf
        scan = self._object
        if scan is None:
            rest = buf.lstrip()
            if not rest:
                return False
            if rest[0] != "{":
                return self._give_up()
            scan = self._object = self._new_scan()
        stop = scan.feed(buf, 0)
        if scan.failed:
            self._object = None
            return self._give_up()
        if scan.opened:
            self._pending = ""
            self._opened = True
        else:
            self._pending += buf[:stop]
        self._buf = buf[stop:]
        if not scan.done:
            return False
        self._object = None
        self._state = AFTER_CALL
        return True

    def _body_ahead(self, rest: str) -> bool | None:
        """Without a per-call marker, the next call is the next ``{``."""
        if self.syntax.description.call_start.strip():
            return True
        rest = rest.lstrip()
        return None if not rest else rest[0] == "{"

    def _finish_call(self, state: str, buf: str) -> None:
        if self._object is not None:
            self._object.truncate()
            self._object = None

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **DerivedParser.shared_handlers,
        JSON_CALL: _on_json_call,
    }


__all__ = ["JSON_CALL", "NameKeyReader", "Parser"]
