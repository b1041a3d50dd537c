"""Gemma 4 tool calls: ``<|tool_call>call:NAME{key:VALUE,...}<tool_call|>``, an object whose strings are ``<|"|>``-quoted.

Wire format (content around the calls; reasoning in a ``thought`` channel)::

    <|channel>thought
    REASONING<channel|>CONTENT<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>

The arguments are Gemma's JSON-like object, converted to JSON as they are written, as llama.cpp's
Gemma 4 handler (``gemma4_to_json``) and vLLM's ``gemma4`` parser read it:

* Keys are bare (``city``, any text up to ``:``), or ``<|"|>``-quoted, or JSON strings; they go
  out as JSON strings once their ``:`` arrives.
* A string is ``<|"|>TEXT<|"|>``: ``"`` goes out when it opens, the text JSON-escaped as it
  arrives (a half-typed ``<|"|>`` is held back), the closing ``"`` at the closing delimiter. A JSON
  string (``"..."``) is taken as written.
* Objects and arrays nest as in JSON and go out as they arrive (no recursion, any depth).
* A bare value (``42``, ``3.14``, ``true``, ``false``, ``null``) is held until the character after
  it, then written: as is when it is JSON, ``108.`` as ``108.0``, any other word as a JSON string;
  a key without a value (``key:}``) is ``""``. Whitespace between tokens is dropped; a comma goes
  out only when another member follows it (a trailing comma is dropped).
* The call opens, named, at the ``{`` after ``call:NAME`` (``call:`` may be missing); a name with
  whitespace, ``<`` or ``>`` in it, empty or longer than :data:`NAME_LIMIT` is malformed: the
  opener is content. The call ends at the object's ``}``; ``<tool_call|>`` should follow (after
  whitespace), anything else is content. Text that breaks the syntax inside the object ends the
  call there (the arguments so far, reported invalid) and the rest of the call up to
  ``<tool_call|>`` is dropped.
* Reasoning: ``<|channel>thought`` ... ``<channel|>``, at the start or between pieces of content
  (``Parser(tools, thinking=True)`` starts inside it); calls inside reasoning are reasoning. A
  stray ``<channel|>`` in content is dropped.
* Terminal parse: a call cut mid-object keeps its arguments so far (a held bare value is written
  as far as it got); an opener whose name never completed produces no call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, ClassVar

from callscope.engine.core.json_text import is_json
from callscope.engine.formats._kit.gbnf import ArgumentRules, CallsLayout, Envelope, ParameterRule, lit
from callscope.engine.formats._kit.marker_search import held_back_from
from callscope.engine.formats._kit.spec import Call, FormatSpec, Markers, TemplateSign
from callscope.engine.formats._kit.text_machine import REASONING, TEXT, ThinkTextMachine
from callscope.engine.formats._kit.xml_values import escape

TOOL_CALL = "<|tool_call>"
TOOL_CALL_END = "<tool_call|>"
QUOTE = '<|"|>'
CHANNEL = "<|channel>"
CHANNEL_END = "<channel|>"
THOUGHT = CHANNEL + "thought"
CALL_PREFIX = "call:"

#: Longest function name or bare key accepted; a longer one is malformed (bounds the hold-back).
NAME_LIMIT = 256

_NAME_STOP = re.compile(r"[{\s<>]")
_BARE_END = re.compile(r"[,}\]\s<]")
_JSON_STRING_STOP = re.compile(r'["\\]')
_QUOTES = (QUOTE,)

# argument converter states
_VALUE = 0  # a value
_FIRST = 1  # right after [ : a value or ]
_KEY_OR_END = 2  # right after { : a key or }
_KEY = 3  # a key (after a comma)
_COLON = 4  # after a key: ':'
_AFTER = 5  # after a value: ',' or the closer
_QUOTED = 6  # inside <|"|> ... <|"|>
_JSON_STRING = 7  # inside "..."
_BARE = 8  # a bare value or key
_DONE = 9
_BROKEN = 10


class GemmaArguments:
    """Gemma's object syntax in, JSON out, append-only, one piece of text at a time.

    :meth:`feed` reads from the start of a buffer and returns how much of it was
    consumed; the rest (a half-typed delimiter, a bare value not yet ended) is
    for the next call. ``done``: the top-level object closed; ``broken``: the
    text stopped being the syntax.
    """

    __slots__ = ("_comma", "_in_key", "_key", "_say", "escape", "stack", "state")

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self.stack: list[str] = ["{"]
        self.state = _KEY_OR_END
        self.escape = False  # inside a JSON string, after a backslash
        self._in_key = False  # the string or bare text being read is a key
        self._key: list[str] = []
        self._comma = False  # a comma read, not yet written (a trailing one is dropped)
        say("{")

    @property
    def done(self) -> bool:
        return self.state == _DONE

    @property
    def broken(self) -> bool:
        return self.state == _BROKEN

    def feed(self, buf: str) -> int:
        """Consume what ``buf`` decides; return the index of the first character left for later."""
        pos = 0
        n = len(buf)
        while pos < n and self.state < _DONE:
            step = _STEPS[self.state](self, buf, pos)
            if step is None:
                break
            pos = step
        return pos

    def truncate(self, rest: str) -> None:
        """The generation ended: a bare value held in ``rest`` is written as far as it got."""
        if self.state == _BARE and not self._in_key and rest:
            self._say(self._comma_text() + _bare_json(rest))

    # ---------------------------------------------------------------- steps
    # Each returns the position after what it consumed, or None when it needs more text.

    def _value(self, buf: str, pos: int) -> int | None:
        pos = _skip_space(buf, pos)
        if pos >= len(buf):
            return pos
        ch = buf[pos]
        if ch == "<":
            if buf.startswith(QUOTE, pos):
                self._say(self._comma_text() + '"')
                self._in_key = False
                self.state = _QUOTED
                return pos + len(QUOTE)
            if QUOTE.startswith(buf[pos:]):
                return None
            self.state = _BROKEN
            return pos
        if ch == '"':
            self._say(self._comma_text() + '"')
            self._in_key = False
            self.state = _JSON_STRING
            return pos + 1
        if ch in "{[":
            self._say(self._comma_text() + ch)
            self.stack.append(ch)
            self.state = _KEY_OR_END if ch == "{" else _FIRST
            return pos + 1
        if ch in "}]" and self._comma:  # a trailing comma in an array
            return self._close(buf, pos)
        if ch in ",}]":  # a key without a value
            self._say(self._comma_text() + '""')
            self.state = _AFTER
            return pos
        self._in_key = False
        self.state = _BARE
        return pos

    def _first(self, buf: str, pos: int) -> int | None:
        """Right after ``[`` or ``{``: the closer (empty), else the first element or key."""
        pos = _skip_space(buf, pos)
        if pos < len(buf):
            if buf[pos] in "]}":
                return self._close(buf, pos)
            self.state = _KEY if self.stack[-1] == "{" else _VALUE
        return pos

    def _key_start(self, buf: str, pos: int) -> int | None:
        pos = _skip_space(buf, pos)
        if pos >= len(buf):
            return pos
        self._in_key = True
        self._key = []
        if buf.startswith(QUOTE, pos):
            self.state = _QUOTED
            return pos + len(QUOTE)
        if buf[pos] == "<":
            if QUOTE.startswith(buf[pos:]):
                return None
            self.state = _BROKEN
            return pos
        if buf[pos] == '"':
            self.state = _JSON_STRING
            return pos + 1
        if buf[pos] == "}":  # a trailing comma in an object
            return self._close(buf, pos)
        if buf[pos] in ",]:":
            self.state = _BROKEN
            return pos
        self.state = _BARE
        return pos

    def _colon(self, buf: str, pos: int) -> int | None:
        pos = _skip_space(buf, pos)
        if pos >= len(buf):
            return pos
        if buf[pos] != ":":
            self.state = _BROKEN
            return pos
        key = "".join(self._key)
        self._key = []
        self._say(self._comma_text() + json.dumps(key, ensure_ascii=False) + ":")
        self.state = _VALUE
        return pos + 1

    def _after(self, buf: str, pos: int) -> int | None:
        pos = _skip_space(buf, pos)
        if pos >= len(buf):
            return pos
        ch = buf[pos]
        if ch == ",":
            self._comma = True
            self.state = _KEY if self.stack[-1] == "{" else _VALUE
            return pos + 1
        if ch in "}]":
            return self._close(buf, pos)
        self.state = _BROKEN
        return pos

    def _close(self, buf: str, pos: int) -> int:
        ch = buf[pos]
        if ch != ("}" if self.stack[-1] == "{" else "]"):
            self.state = _BROKEN
            return pos
        self._comma = False  # a trailing comma is dropped
        self.stack.pop()
        self._say(ch)
        self.state = _AFTER if self.stack else _DONE
        return pos + 1

    def _quoted(self, buf: str, pos: int) -> int | None:
        end = buf.find(QUOTE, pos)
        if end < 0:
            cut = held_back_from(buf, _QUOTES, pos)
            self._text(buf[pos:cut])
            return None if cut == pos else cut
        self._text(buf[pos:end])
        self._end_string()
        return end + len(QUOTE)

    def _json_string(self, buf: str, pos: int) -> int | None:
        start = pos
        n = len(buf)
        while pos < n:
            if self.escape:
                self.escape = False
                pos += 1
                continue
            found = _JSON_STRING_STOP.search(buf, pos)
            if found is None:
                pos = n
                break
            pos = found.start()
            if buf[pos] == "\\":
                self.escape = True
                pos += 1
                continue
            self._raw(buf[start:pos])
            self._end_string()
            return pos + 1
        self._raw(buf[start:pos])
        return pos

    def _bare(self, buf: str, pos: int) -> int | None:
        stop = _COLON_OR_END.search(buf, pos) if self._in_key else _BARE_END.search(buf, pos)
        if stop is None:
            if len(buf) - pos > NAME_LIMIT:
                self.state = _BROKEN
                return pos
            return None
        text = buf[pos : stop.start()]
        if self._in_key:
            if buf[stop.start()] != ":" or len(text) > NAME_LIMIT or not text.strip():
                self.state = _BROKEN
                return pos
            self._key = [text.strip()]
            self.state = _COLON
        else:
            self._say(self._comma_text() + _bare_json(text))
            self.state = _AFTER
        return stop.start()

    # ---------------------------------------------------------------- output

    def _comma_text(self) -> str:
        if self._comma:
            self._comma = False
            return ","
        return ""

    def _text(self, text: str) -> None:
        """Text of a ``<|"|>`` string."""
        if text:
            if self._in_key:
                self._key.append(text)
            else:
                self._say(escape(text))

    def _raw(self, text: str) -> None:
        """Raw text of a JSON string (already escaped)."""
        if text:
            if self._in_key:
                self._key.append(text)
            else:
                self._say(text)

    def _end_string(self) -> None:
        if self._in_key:
            raw = "".join(self._key)
            self._key = [_decode_json_string(raw)] if self.state == _JSON_STRING else [raw]
            self.state = _COLON
        else:
            self._say('"')
            self.state = _AFTER


_COLON_OR_END = re.compile(r"[:,}\]\n<]")


def _skip_space(text: str, pos: int) -> int:
    n = len(text)
    while pos < n and text[pos].isspace():
        pos += 1
    return pos


def _decode_json_string(raw: str) -> str:
    try:
        return json.loads('"' + raw + '"')
    except ValueError:
        return raw


_TRAILING_DOT = re.compile(r"-?\d+\.")


def _bare_json(text: str) -> str:
    """A bare value as JSON: itself when it is JSON, ``108.`` as ``108.0``, anything else a string."""
    value = text.strip()
    if not value:
        return '""'
    if is_json(value, constants=False) and value[0] not in '"[{':
        return value
    if _TRAILING_DOT.fullmatch(value):
        return value + "0"
    return json.dumps(value, ensure_ascii=False)


_STEPS: dict[int, Callable[[GemmaArguments, str, int], int | None]] = {
    _VALUE: GemmaArguments._value,
    _FIRST: GemmaArguments._first,
    _KEY_OR_END: GemmaArguments._first,
    _KEY: GemmaArguments._key_start,
    _COLON: GemmaArguments._colon,
    _AFTER: GemmaArguments._after,
    _QUOTED: GemmaArguments._quoted,
    _JSON_STRING: GemmaArguments._json_string,
    _BARE: GemmaArguments._bare,
}

# parser states (besides ThinkTextMachine's start / reasoning / text)
_NAME = "name"  # after <|tool_call>: [call:]NAME up to {
_ARGS = "args"
_CALL_END = "call_end"  # after the object: <tool_call|>
_SKIP = "skip"  # a broken call: dropped up to <tool_call|>


class Parser(ThinkTextMachine):
    """Incremental Gemma 4 parser (see the module docstring for the rules)."""

    _think_open = THOUGHT
    _think_close = CHANNEL_END
    _text_markers = (TOOL_CALL, THOUGHT, CHANNEL_END)

    def __init__(self, tools: list[dict[str, Any]] | None = None, thinking: bool = False) -> None:
        super().__init__(tools, thinking)
        self._object: GemmaArguments | None = None

    def _finish_in(self, state: str, buf: str) -> None:
        if state == _ARGS and self._object is not None:
            self._object.truncate(buf)
        # _NAME: no complete name, no call; _CALL_END/_SKIP: a half-typed marker or a broken call.

    # ---------------------------------------------------------------- states

    def _on_text_marker(self, marker: str) -> None:
        if marker == THOUGHT:  # another reasoning block between pieces of content
            self._state = REASONING
            self._skip_ws = True
            return
        self._pending = marker
        self._name = ""
        self._state = _NAME

    def _on_name(self) -> bool:
        if not self._name and self._pending == TOOL_CALL:
            buf = self._buf
            if CALL_PREFIX.startswith(buf):
                return False  # maybe call: still being written
            if buf.startswith(CALL_PREFIX):
                self._pending += CALL_PREFIX
                self._buf = buf[len(CALL_PREFIX) :]
        rest = self._read_name(_NAME_STOP)
        if rest is None:
            return False if len(self._name) <= NAME_LIMIT else self._release_opener(TEXT)
        name = self._name
        if rest[0] != "{" or not name or len(name) > NAME_LIMIT:
            return self._release_opener(TEXT)
        self._pending = ""
        self._call = self._open_call()
        self._name_call(self._call, name)
        self._object = GemmaArguments(self._append_arguments)
        self._buf = rest[1:]
        self._state = _ARGS
        return True

    def _on_args(self) -> bool:
        obj = self._object
        buf = self._buf
        used = obj.feed(buf)
        self._buf = buf[used:]
        if obj.done:
            self._object = None
            self._state = _CALL_END
            return True
        if obj.broken:
            self._object = None
            self._state = _SKIP
            return True
        return False

    def _on_call_end(self) -> bool:
        rest = self._buf.lstrip()
        self._buf = rest
        if not rest or TOOL_CALL_END.startswith(rest):
            return False
        if rest.startswith(TOOL_CALL_END):
            self._buf = rest[len(TOOL_CALL_END) :]
        return self._back_to_text()  # without <tool_call|>, what follows is content

    def _on_skip(self) -> bool:
        buf = self._buf
        end = buf.find(TOOL_CALL_END)
        if end >= 0:
            self._buf = buf[end + len(TOOL_CALL_END) :]
            return self._back_to_text()
        self._buf = buf[held_back_from(buf, (TOOL_CALL_END,)) :]
        return False

    _handlers: ClassVar[dict[str, Callable[[Any], bool]]] = {
        **ThinkTextMachine.think_handlers,
        _NAME: _on_name,
        _ARGS: _on_args,
        _CALL_END: _on_call_end,
        _SKIP: _on_skip,
    }


# -------------------------------------------------------------------- spec


def gemma_value(value: Any) -> str:
    """``value`` in Gemma's syntax: strings ``<|"|>``-quoted, object keys bare, the rest as JSON (iterative)."""
    out: list[str] = []
    work: list[Any] = [value]
    while work:
        item = work.pop()
        if isinstance(item, _Literal):
            out.append(item.text)
        elif isinstance(item, str):
            out.append(QUOTE + item + QUOTE)
        elif isinstance(item, dict):
            parts: list[Any] = [_Literal("{")]
            for i, (key, member) in enumerate(item.items()):
                parts += [_Literal(("," if i else "") + f"{key}:"), member]
            work.extend(reversed([*parts, _Literal("}")]))
        elif isinstance(item, list):
            parts = [_Literal("[")]
            for i, member in enumerate(item):
                parts += ([_Literal(",")] if i else []) + [member]
            work.extend(reversed([*parts, _Literal("]")]))
        else:
            out.append(json.dumps(item))
    return "".join(out)


class _Literal:
    """Text :func:`gemma_value` writes as is."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def write(calls: list[Call], content: str, reasoning: str) -> str:
    """Reasoning in the thought channel, content, then one ``<|tool_call>`` per call, as Gemma 4's template writes them."""
    head = f"{THOUGHT}\n{reasoning}{CHANNEL_END}" if reasoning else ""
    body = "".join(f"{TOOL_CALL}{CALL_PREFIX}{name}{gemma_value(args)}{TOOL_CALL_END}" for name, args in calls)
    return head + content + body


_BARE_KINDS = ("integer", "number", "boolean", "object", "array", "null")


def _parameter(param: ParameterRule) -> str:
    """``key:VALUE``: a string (or a value of no single type) between ``<|"|>`` quotes, JSON types as JSON."""
    key = lit(f"{param.key}:")
    if param.kind in _BARE_KINDS:
        return f"{key} {param.value}"
    return f"{key} {lit(QUOTE)} {param.value} {lit(QUOTE)}"


def grammar_call(name: str, args: ArgumentRules) -> str:
    """``<|tool_call>call:NAME{key:VALUE,...}<tool_call|>``, the required parameters first, commas between them."""
    params = list(args.parameters())
    parts: list[str] = []
    for param in params:
        block = _parameter(param)
        if parts:
            block = f'"," {block}'
        parts.append(block if param.required or not parts else f"({block})?")
    body = " ".join(parts)
    if params and not params[0].required:  # no required parameter: all of them may be left out
        body = f"({body})?"
    return " ".join((lit(f"{TOOL_CALL}{CALL_PREFIX}{name}{{"), body, lit("}" + TOOL_CALL_END)))


SPEC = FormatSpec(
    id="gemma4",
    description='Gemma 4: <|tool_call>call:NAME{key:<|"|>value<|"|>,n:1}<tool_call|>',
    parser=Parser,
    thinking=True,
    markers=Markers(leak=(TOOL_CALL, TOOL_CALL_END, CHANNEL, CHANNEL_END)),
    write=write,
    envelopes=(Envelope(grammar_call, layout=CallsLayout(), content=True),),
    signs=(TemplateSign(695, f"{TOOL_CALL} and {TOOL_CALL_END} tokens (llama.cpp: Gemma 4)", (TOOL_CALL, TOOL_CALL_END)),),
    template="gemma4.jinja",
)
