"""The contract every wire-format parser keeps, and the bookkeeping they share.

A parser is fed the generation piece by piece (:meth:`FormatParser.feed`) and
returns the :mod:`callscope.engine.core.parse_model` events that turn the previous partial
parse into the current one; :meth:`FormatParser.finish` returns the events of
the terminal (non-partial) parse. Subclasses implement ``_feed`` and
``_finish`` and report through the ``_content``/``_open_call``/... helpers,
which also keep the running snapshot, so ``snapshot()`` is always in step with
the events that went out.

Rules (tested for every format): a name appears only once complete; argument
text only grows; no partial marker text ever reaches content; the work per
``feed`` is proportional to the new text.
"""

from __future__ import annotations

from typing import Any

from callscope.engine.core.parse_model import (
    ArgumentsAppended,
    CallNamed,
    CallOpened,
    ContentAppended,
    Parse,
    ParseAccumulator,
    ParseEvent,
    ReasoningAppended,
)


class FormatParser:
    """Base class: incremental parser of one tool-call wire format (its id and description are in its spec)."""

    def __init__(self, tools: list[dict[str, Any]] | None = None) -> None:
        self.tools = tools or []
        self._acc = ParseAccumulator()
        self._out: list[ParseEvent] = []
        self._finished = False

    # ------------------------------------------------------------ public API

    def feed(self, text: str) -> list[ParseEvent]:
        """Append ``text`` to the generation; return the events of the new partial parse."""
        if self._finished:
            raise RuntimeError("feed() after finish()")
        self._out = []
        if text:
            self._feed(text)
        return self._out

    def finish(self) -> list[ParseEvent]:
        """End of generation: return the events that make the terminal parse."""
        if self._finished:
            return []
        self._out = []
        self._finish()
        self._finished = True
        return self._out

    def snapshot(self) -> Parse:
        """The current parse (partial until :meth:`finish` was called)."""
        return self._acc.snapshot(partial=not self._finished)

    @property
    def call_count(self) -> int:
        return self._acc.call_count

    # ------------------------------------------------------ subclass hooks

    def _feed(self, text: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _finish(self) -> None:
        """Default: nothing held back."""

    # ------------------------------------------------------ event helpers

    def _emit(self, event: ParseEvent) -> None:
        self._acc.apply(event)
        self._out.append(event)

    def _content(self, text: str) -> None:
        if text:
            self._emit(ContentAppended(text))

    def _reasoning(self, text: str) -> None:
        if text:
            self._emit(ReasoningAppended(text))

    def _open_call(self, call_id: str | None = None) -> int:
        index = self._acc.call_count
        self._emit(CallOpened(index, call_id))
        return index

    def _name_call(self, index: int, name: str) -> None:
        self._emit(CallNamed(index, name))

    def _arguments(self, index: int, text: str) -> None:
        if text:
            self._emit(ArgumentsAppended(index, text))

    # ------------------------------------------------------ tool schema helpers

    def parameter_type(self, function_name: str, parameter: str) -> str | None:
        """JSON type of ``parameter`` of ``function_name`` in the request's tools, if declared."""
        for tool in self.tools:
            fn = tool.get("function", tool) if isinstance(tool, dict) else None
            if not isinstance(fn, dict) or fn.get("name") != function_name:
                continue
            params = fn.get("parameters")
            props = params.get("properties") if isinstance(params, dict) else None
            return declared_type(props.get(parameter) if isinstance(props, dict) else None)
        return None


def declared_type(spec: Any) -> str | None:
    """The one JSON type a parameter's schema declares (``["string", "null"]`` is a string), else None.

    A string enum counts as a string. Formats that write parameters as raw text
    (Qwen3-Coder) decide from it how to turn the text into JSON, and the forced-call
    grammar decides from it how the text must look, so both call this.
    """
    if not isinstance(spec, dict):
        return None
    kind = spec.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind is None and ("enum" in spec or "const" in spec):
        values = spec.get("enum", [spec.get("const")])
        if all(isinstance(v, str) for v in values):
            kind = "string"
    return kind if isinstance(kind, str) else None
