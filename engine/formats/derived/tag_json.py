"""Tag + JSON arguments: ``call_start NAME name_suffix {...} call_end``.

Functionary v3.1's ``<function=NAME>{...}</function>``, Kimi K2's
``<|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>``,
DeepSeek's fenced ``NAME\\n```json\\n{...}\\n```<｜tool▁call▁end｜>``, Mistral's
``[TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{...}``. The arguments are one JSON value
read by :class:`~callscope.engine.formats._kit.json_call_machine.ArgumentsValueScan`:
streamed verbatim (a JSON string streams decoded), ending at its closing
bracket, so a ``call_end`` inside a string never ends it. A syntax error ends the
arguments where it is; the text from there is read as what follows a call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.formats._kit.json_call_machine import ArgumentsValueScan
from callscope.engine.formats.derived.machine import AFTER_CALL
from callscope.engine.formats.derived.tags import TagParser

ARGUMENTS = "arguments"


class Parser(TagParser):
    """Calls with the name in markup and JSON arguments (see the module docstring)."""

    _arguments_state = ARGUMENTS

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)
        self._args: ArgumentsValueScan | None = None

    def _start_arguments(self) -> None:
        self._args = ArgumentsValueScan(self, self._call)

    def _on_arguments(self) -> bool:
        args = self._args
        buf = self._buf
        stop = args.feed(buf, 0)
        self._buf = buf[stop:]
        if not args.done:
            return False
        self._args = None
        self._state = AFTER_CALL
        return True

    def _finish_call(self, state: str, buf: str) -> None:
        if self._args is not None:
            self._args.truncate()
            self._args = None

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **TagParser.header_handlers,
        ARGUMENTS: _on_arguments,
    }


__all__ = ["ARGUMENTS", "Parser"]
