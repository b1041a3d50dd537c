"""Reading a JSON tool-call object while it is written: ``{"name": ..., "arguments": ...}``.

Shared by every JSON format (hermes, llama3_json, mistral, generic, emulated).
A :class:`CallReader` follows the members of one call object as
:class:`~callscope.engine.formats._kit.json_scanner.JsonScanner` reports them and talks to the
format parser through its ``_open_call`` / ``_name_call`` / ``_arguments``
helpers. The rules it keeps:

* The call *opens* when its ``"name"`` string is complete or when its
  arguments value starts, whichever comes first (arguments before the name
  give an open, unnamed call whose arguments already stream). Before that
  nothing is emitted, so the format parser can still decide the text was not
  a call at all (:attr:`CallReader.failed`) and show it as content.
* The name is reported once, complete (the JSON string closed), decoded.
* ``"arguments"`` (or ``"parameters"``, Llama's key; the first one present
  wins, a repeated key is ignored) streams the model's own text verbatim,
  from its ``{`` to its matching ``}``: never re-serialised, whitespace kept;
  a partial object is a prefix of the final one. A JSON *string* value (some
  models JSON-encode the arguments) streams its decoded content instead;
  any other value (array, number) streams its raw text.
* A call object that ends without an arguments key gets ``{}``, the
  arguments of a call that takes none. A call cut short by the end of the
  generation keeps exactly what was written (possibly nothing): no invented
  text, the engine reports the invalid JSON.
* A model-written ``"id"`` string is used if it is complete before the call
  opens (the id travels in the call's first wire delta and never changes); an
  id written after the name, as Mistral and generic schemas order it, is
  ignored for the same reason.
* The member names are a :class:`CallKeys` value: ``name``/``arguments``/``id``
  by default, Command R7B's ``tool_name``/``parameters``/``tool_call_id``
  otherwise. A *strict* reader (a call looked for inside prose) gives up as
  soon as a member that is none of them (nor ``"type"``) comes before the call
  opened, so a JSON object quoted in an answer is content at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from callscope.engine.formats._kit.json_scanner import (
    VALUE_END,
    VALUE_START,
    JsonScanner,
    JsonStringDecoder,
    decode_string_body,
)
from callscope.engine.formats._kit.text_machine import PieceMachine

if TYPE_CHECKING:
    from callscope.engine.formats._kit.parser import FormatParser

ARGUMENT_KEYS = ("arguments", "parameters")


@dataclass(frozen=True, slots=True)
class CallKeys:
    """The member names of a call object: its name, its arguments (the first present wins), its id."""

    name: tuple[str, ...] = ("name",)
    arguments: tuple[str, ...] = ARGUMENT_KEYS
    id: tuple[str, ...] = ("id",)

    def known(self, key: object) -> bool:
        """A member a call object may have before it opens (``"type": "function"`` included)."""
        return key in self.name or key in self.arguments or key in self.id or key == "type"


#: ``{"name": ..., "arguments"|"parameters": ..., "id": ...}``, the common shape.
JSON_KEYS = CallKeys()

# what a member value being captured is
_NONE, _NAME, _ID, _ARGS_RAW, _ARGS_STRING, _SKIP = range(6)


class CallReader:
    """One call object, member by member. Feed it the events of its members."""

    __slots__ = (
        "args_seen",
        "call_id",
        "cap_from",
        "cap_parts",
        "capture",
        "closed",
        "decoder",
        "failed",
        "index",
        "keys",
        "name",
        "opened",
        "parser",
        "strict",
    )

    def __init__(self, parser: FormatParser, keys: CallKeys = JSON_KEYS, strict: bool = False) -> None:
        self.parser = parser
        self.keys = keys
        self.strict = strict
        self.index: int | None = None
        self.name: str | None = None
        self.call_id: str | None = None
        self.opened = False
        self.closed = False
        self.failed = False  # shown not to be a call before it opened
        self.args_seen = False
        self.capture = _NONE
        self.cap_from = 0
        self.cap_parts: list[str] = []
        self.decoder: JsonStringDecoder | None = None

    # ------------------------------------------------------------ members

    def value_start(self, key: object, pos: int, first: str) -> None:
        """A member value begins at ``pos`` of the current piece."""
        keys = self.keys
        if key in keys.name and self.name is None and first == '"':
            self._begin(_NAME, pos + 1)
        elif key in keys.name and self.name is None and not self.opened:
            self._not_a_call()  # a name that is not a string: not a tool call
        elif self.strict and not self.opened and not keys.known(key):
            self._not_a_call()  # a JSON object in prose, not a call
        elif key in keys.arguments and not self.args_seen:
            self._open_arguments(pos, first)
        elif key in keys.id and not self.opened and first == '"':
            self._begin(_ID, pos + 1)
        else:
            self.capture = _SKIP

    def skip_member(self) -> None:
        """The member value that starts now is not part of the call."""
        self.capture = _SKIP

    def _open_arguments(self, pos: int, first: str) -> None:
        """The arguments value starts at ``pos``: the call opens, the value streams from here."""
        self.args_seen = True
        self._open()
        if first == '"':
            self.decoder = JsonStringDecoder()
            self.capture = _ARGS_STRING
            self.cap_from = pos + 1
        else:
            self.capture = _ARGS_RAW
            self.cap_from = pos

    def value_end(self, text: str, pos: int) -> None:
        """The member value that started last ends before ``pos`` of ``text``."""
        capture, self.capture = self.capture, _NONE
        if capture == _ARGS_RAW:
            self._emit_arguments(text[self.cap_from : pos])
        elif capture == _ARGS_STRING:
            self._emit_arguments(self.decoder.feed(text[self.cap_from : pos - 1]) + self.decoder.finish())
            self.decoder = None
        elif capture == _NAME or capture == _ID:
            raw = "".join(self.cap_parts) + text[self.cap_from : pos - 1]
            self.cap_parts = []
            value = decode_string_body(raw)
            if capture == _ID:
                self.call_id = value or None
            elif not value:
                if not self.opened:
                    self._not_a_call()
            else:
                self.name = value
                if self.opened:
                    self.parser._name_call(self.index, value)
                else:
                    self._open()

    def flush(self, text: str, stop: int) -> None:
        """End of the piece (scanned up to ``stop``): pass on what the open member has so far."""
        capture = self.capture
        if capture == _ARGS_RAW:
            self._emit_arguments(text[self.cap_from : stop])
        elif capture == _ARGS_STRING:
            self._emit_arguments(self.decoder.feed(text[self.cap_from : stop]))
        elif capture == _NAME or capture == _ID:
            self.cap_parts.append(text[self.cap_from : stop])
        self.cap_from = 0

    # ------------------------------------------------------------ the object

    def close(self) -> None:
        """The call object ended (its ``}``, or a syntax error after it opened)."""
        if self.closed:
            return
        self.closed = True
        if not self.opened:
            self._not_a_call()
            return
        self._finish_capture()
        if not self.args_seen:
            self._emit_arguments("{}")

    def abort(self, text: str, pos: int) -> None:
        """A syntax error at ``pos``: the call (if open) ends with what came before it."""
        if self.opened:
            self.flush(text, pos)
            self.close()
        else:
            self._not_a_call()

    def truncate(self) -> None:
        """The generation ended inside the call: keep what was written."""
        if self.opened and not self.closed:
            self._finish_capture()
            self.closed = True

    # ------------------------------------------------------------ internals

    def _begin(self, capture: int, pos: int) -> None:
        self.capture = capture
        self.cap_from = pos
        self.cap_parts = []

    def _open(self) -> None:
        if self.opened:
            return
        self.opened = True
        self.index = self.parser._open_call(self.call_id)
        if self.name is not None:
            self.parser._name_call(self.index, self.name)

    def _not_a_call(self) -> None:
        self.failed = True
        self.closed = True
        self.capture = _NONE

    def _finish_capture(self) -> None:
        if self.capture == _ARGS_STRING and self.decoder is not None:
            self._emit_arguments(self.decoder.finish())
        self.capture = _NONE
        self.decoder = None

    def _emit_arguments(self, text: str) -> None:
        if text:
            self.parser._arguments(self.index, text)


class CallObjectScan:
    """A call object as a JSON value: scanner + reader.

    The call is the whole value (hermes, llama3_json, emulated), or, with
    ``wrapper``, the object in that member of the value, the OpenAI way
    (``{"type": "function", "function": {"name": ..., "arguments": ...}}``, a
    format derived from a template); then a value that closes without a call
    in it is not one. :meth:`feed` scans from ``pos`` and returns where it
    stopped; then ``failed`` (not a call, nothing was emitted), ``done`` (the
    object closed, or broke after the call opened; ``stop`` is where the
    format's own text resumes) or neither (wants more text).
    """

    __slots__ = ("depth", "done", "failed", "inside", "reader", "scanner", "wrapper")

    def __init__(self, parser: FormatParser, keys: CallKeys = JSON_KEYS, strict: bool = False,
                 wrapper: str | None = None) -> None:
        self.wrapper = wrapper
        self.depth = 0 if wrapper is None else 1  # of the call object; its members are one deeper
        if wrapper is None:
            self.scanner = JsonScanner(report_depth=1)
        else:
            self.scanner = JsonScanner(report_depth=2, descend=lambda depth, slot: depth == 0 or slot == wrapper)
        self.reader = CallReader(parser, keys, strict)
        self.inside = wrapper is None  # reading the call object's members
        self.failed = False
        self.done = False

    @property
    def opened(self) -> bool:
        return self.reader.opened

    def feed(self, text: str, pos: int = 0) -> int:
        events, stop = self.scanner.feed(text, pos)
        reader, members = self.reader, self.depth + 1
        for event in events:
            kind, depth = event[0], event[1]
            if kind == VALUE_START:
                if depth == 0 and event[3] != "{":
                    reader._not_a_call()
                elif depth == members and self.inside:
                    reader.value_start(event[4], event[2], event[3])
                elif depth == 1 and event[4] == self.wrapper and not reader.closed:  # the wrapper member
                    if event[3] != "{":
                        reader._not_a_call()
                    self.inside = True
            elif kind == VALUE_END:
                if depth == members and self.inside:
                    reader.value_end(text, event[2])
                elif depth == self.depth and self.inside:
                    reader.close()
                    self.inside = False
                    self.done = self.wrapper is None
                elif depth == 0:  # the value around the wrapper member
                    if not reader.opened:
                        reader._not_a_call()
                    self.done = True
            else:  # ERROR
                reader.abort(text, event[2])
                self.done = True
            if reader.failed:
                self.failed = True
                self.done = False
                return stop
        if not self.done and self.inside:
            reader.flush(text, stop)
        return stop

    def truncate(self) -> None:
        self.reader.truncate()


class ArgumentsValueScan:
    """The arguments of an already-open call as one bare JSON value (Mistral's ``[ARGS]{...}``).

    Streams the value's raw text (a JSON string: its decoded content) to the
    call at ``index``. ``done`` once the value ended or broke (``broken``: a
    syntax error; the arguments end before it and ``feed`` returns its
    position, where the format's own text resumes).
    """

    __slots__ = ("broken", "cap_from", "capturing", "decoder", "done", "index", "parser", "scanner")

    def __init__(self, parser: FormatParser, index: int) -> None:
        self.parser = parser
        self.index = index
        self.scanner = JsonScanner(report_depth=0)
        self.decoder: JsonStringDecoder | None = None
        self.capturing = False
        self.cap_from = 0
        self.done = False
        self.broken = False

    def feed(self, text: str, pos: int = 0) -> int:
        events, stop = self.scanner.feed(text, pos)
        for event in events:
            kind = event[0]
            if kind == VALUE_START:
                self.capturing = True
                if event[3] == '"':
                    self.decoder = JsonStringDecoder()
                    self.cap_from = event[2] + 1
                else:
                    self.cap_from = event[2]
            elif kind == VALUE_END:
                end = event[2] - 1 if self.decoder is not None else event[2]
                self._emit(text, end)
                self.truncate()
                self.done = True
            else:
                if self.capturing:
                    self._emit(text, event[2])
                self.truncate()
                self.done = self.broken = True
        if self.capturing:
            self._emit(text, stop)
            self.cap_from = 0
        return stop

    def truncate(self) -> None:
        """End of the value (or of the generation): release a held partial escape."""
        if self.decoder is not None:
            tail = self.decoder.finish()
            if tail:
                self.parser._arguments(self.index, tail)
        self.decoder = None
        self.capturing = False

    def _emit(self, text: str, end: int) -> None:
        piece = text[self.cap_from : end]
        if self.decoder is not None:
            piece = self.decoder.feed(piece)
        if piece:
            self.parser._arguments(self.index, piece)


class ArgumentsValueMachine(PieceMachine):
    """A format whose call header is complete before its arguments, written as one bare JSON value.

    Functionary's ``>>>NAME\n{...}``, Solar Open's ``<|tool_call:args|>{...}``:
    the format opens the call and calls :meth:`_start_arguments`; the
    ``_in_arguments`` handler streams the value and, once it ended, goes to
    ``_after_arguments`` (to content if it broke).
    """

    #: The state after the arguments value.
    _after_arguments: ClassVar[int] = 0

    def __init__(self, tools: list[dict[str, Any]] | None, state: int) -> None:
        super().__init__(tools, state)
        self._args: ArgumentsValueScan | None = None

    def _start_arguments(self, index: int, state: int) -> None:
        self._args = ArgumentsValueScan(self, index)
        self._state = state

    def _in_arguments(self, text: str, pos: int) -> tuple[str, int]:
        args = self._args
        stop = args.feed(text, pos)
        if not args.done:
            return text, len(text)
        self._args = None
        self._state = self._content_state if args.broken else self._after_arguments
        return text, stop

    def _truncate_arguments(self) -> None:
        """End of generation inside the value: keep what was written."""
        if self._args is not None:
            self._args.truncate()
            self._args = None


class CallObjectMachine(PieceMachine):
    """A format whose call is one bare JSON object after a marker (hermes, llama3_json, emulated).

    The attempt (the marker and the object so far) is held in ``_held`` until
    the call opens; if it turns out not to be a call first, :meth:`_not_a_call`
    decides what of it is content. By default that is the opener
    (``_opener``) alone, and scanning resumes right after it.
    """

    #: The marker whose text is released when the attempt is not a call.
    _opener: ClassVar[str] = ""

    def __init__(self, tools: list[dict[str, Any]] | None, state: int) -> None:
        super().__init__(tools, state)
        self._call: CallObjectScan | None = None
        self._held: list[str] = []  # the attempt so far, while the call has not opened

    def _in_call(self, text: str, pos: int) -> tuple[str, int]:
        call = self._call
        stop = call.feed(text, pos)
        if call.failed:
            return self._not_a_call(text[pos:])
        if call.done:
            self._call_done(call)
            self._call = None
            self._held = []
            return text, stop
        if call.opened:
            self._held = []
        else:
            self._held.append(text[pos:])
        return text, len(text)

    def _call_done(self, call: CallObjectScan) -> None:  # pragma: no cover - abstract
        """The object closed (or broke after the call opened): set the state that follows."""
        raise NotImplementedError

    def _not_a_call(self, rest: str) -> tuple[str, int]:
        """The held attempt is not a call: its opener is content, scanning resumes right after it."""
        held = "".join(self._held) + rest
        self._held = []
        self._call = None
        self._state = self._content_state
        self._content(self._opener)
        return held[len(self._opener) :], 0

    def _holding_attempt(self) -> bool:
        """An attempt is held that has not opened a call."""
        call = self._call
        return call is not None and not call.opened

    def _settle_call(self) -> None:
        """End of generation: a held attempt is re-read as not a call; an open call keeps its arguments."""
        while self._holding_attempt():
            self._run(*self._not_a_call(""))
        if self._call is not None:
            self._call.truncate()
            self._call = None


__all__ = [
    "ARGUMENT_KEYS",
    "JSON_KEYS",
    "ArgumentsValueMachine",
    "ArgumentsValueScan",
    "CallKeys",
    "CallObjectMachine",
    "CallObjectScan",
    "CallReader",
]
