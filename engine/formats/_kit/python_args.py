"""Python keyword arguments read as they are written and streamed as a JSON object: ``f(a=1, b="x")``.

Pythonic tool calls (Llama 3.2 / 4, LFM2: ``[get_weather(city='Paris')]``) and
Llama 3.1's built-in tools (``<|python_tag|>brave_search.call(query="x")``)
write their arguments as Python literals. :class:`PythonArgsScan` reads the
text after the call's ``(`` up to its matching ``)`` and writes the JSON of
the arguments through ``emit`` piece by piece, append-only: every piece it
emits is final, so the concatenation is at every moment a prefix of the
terminal arguments. The JSON is spelt as ``json.dumps(..., ensure_ascii=False)``
spells it (``", "`` and ``": "``), which is how vLLM reports such calls.

What streams and what is held:

* ``{`` goes out when the scan starts, ``"key": `` when a keyword's ``=`` is
  read, ``, `` when the next item begins (a trailing comma emits nothing),
  the closer when the container closes.
* A string streams as it is decoded: its opening ``"`` at once, every
  character as soon as it is known (an escape waits for its last character;
  ``\\N{...}`` for its ``}``), its closing ``"`` once the quote is known to
  close it (see below).
* A number, ``True``/``False``/``None`` (and, leniently, ``true``/``false``/
  ``null``) are held until the token ends, since their JSON rendering is not
  final before (``1`` may become ``1.5``, ``07`` is ``7``, ``0x1F`` is ``31``).
* ``{`` in a value is a dict or a set, which the JSON of its first element
  cannot tell: that element is held until ``:`` (dict) or ``,``/``}`` (set,
  a JSON array) decides. Tuples and sets become arrays; a dict key that is not
  a string becomes the string of its JSON (``{1: 'a'}`` is ``{"1": "a"}``).

Strings: ``'``/``"`` and triple quotes, ``r``/``u`` prefixes, Python's escapes
(``\\n``, ``\\x41``, ``\\u00e9``, ``\\U0001F600``, octal, ``\\N{name}``, line
continuation; an unknown escape keeps its backslash). As LFM2 models write
them, a raw newline inside a one-line string is accepted, and a quote of the
string's own kind closes it only if the next character (after whitespace)
can follow a value there: ``,``, ``:`` for a key, or the closer of the
enclosing container, in which case the character after that closer must be
able to follow it too (after the call's ``)``: ``,``, ``]``, ``;``, ``<`` or
the end), so ``'sed -n '360,450p' f'`` is one string. ``lenient=False``
turns that off: a quote of the string's kind always closes it. A bytes or
f-string, a positional argument, a name that is not a literal, an unbalanced
closer: a syntax error. The scan then ends (``broken``) with the arguments
written so far and ``feed`` returns the position of the offending character.
"""

from __future__ import annotations

import functools
import json
import math
import re
import unicodedata
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from callscope.engine.formats._kit.parser import FormatParser

# container kinds
ARGS, LIST, TUPLE, DICT, SET, BRACE = range(6)
_CLOSER = {ARGS: ")", LIST: "]", TUPLE: ")", DICT: "}", SET: "}", BRACE: "}"}
_JSON_CLOSER = {ARGS: "}", LIST: "]", TUPLE: "]", DICT: "}", SET: "]"}
_OPENERS = {"[": LIST, "(": TUPLE, "{": BRACE}

# item states of a container
_ITEM = 0  # an item may start (or the container close)
_AFTER = 1  # after an item: "," or the closer
_NAMED = 2  # ARGS: a keyword was read, "=" expected
_VALUE = 3  # ARGS after "=", DICT after ":": a value is expected
_COLON = 4  # DICT: after a key, ":" expected
_DECIDE = 5  # BRACE: after its first element, ":" (dict) or "," / "}" (set)

# scan modes
_STRUCT, _STRING, _ESCAPE, _TOKEN, _WAIT, _QUOTES = range(6)

_WS = frozenset(" \t\r\n\f\v")
_IDENT_START = re.compile(r"[A-Za-z_]")
_IDENT_RUN = re.compile(r"[A-Za-z0-9_]*")
_NUMBER_RUN = re.compile(r"(?:[0-9A-Za-z_.]|(?<=[eE])[+\-])*")
_CONSTANTS = {"True": "true", "False": "false", "None": "null", "true": "true", "false": "false", "null": "null"}
_STRING_PREFIXES = {"r": True, "R": True, "u": False, "U": False}
_DECIMAL = re.compile(r"[0-9]+")
_SIMPLE_ESCAPES = {
    "\\": "\\",
    "'": "'",
    '"': '"',
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\n": "",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}
_OCTAL = frozenset("01234567")
_HEX = frozenset("0123456789abcdefABCDEF")
_SURROGATE = re.compile("[\ud800-\udfff]")
_NEEDS_ESCAPE = re.compile('[\\\\"\x00-\x1f\ud800-\udfff]')
#: Per quote kind (one-line strings): the next character that may end the run of plain body text.
_BODY_STOP = {"'": re.compile(r"[\\']"), '"': re.compile(r'[\\"]')}


def json_string_body(text: str) -> str:
    """``text`` as the inside of a JSON string (non-ASCII kept; lone surrogates escaped, so it stays UTF-8)."""
    if _NEEDS_ESCAPE.search(text) is None:  # the common run of plain text: nothing to do
        return text
    body = json.dumps(text, ensure_ascii=False)[1:-1]
    if _SURROGATE.search(body):
        body = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", body)
    return body


def number_json(token: str, negative: bool) -> str | None:
    """The JSON of a Python number literal (None: not a finite number JSON can hold)."""
    text = token.replace("_", "")
    try:
        if _DECIMAL.fullmatch(text):
            value: int | float = int(text, 10)  # leading zeros (07) read as LFM2 models mean them
        elif text[:2].lower() in ("0x", "0o", "0b"):
            value = int(text, 0)
        else:
            value = float(text)
            if not math.isfinite(value):
                return None
    except ValueError:
        return None
    return json.dumps(-value if negative else value)


class PythonArgsScan:
    """The keyword arguments of one Python call, from after ``(`` to ``)``, emitted as JSON (see the module)."""

    __slots__ = (
        "_esc",
        "_frames",
        "_holds",
        "_negative",
        "_quote",
        "_quotes",
        "_raw",
        "_sbuf",
        "_token",
        "_triple",
        "_wait",
        "_wait_stage",
        "broken",
        "done",
        "emit",
        "lenient",
        "mode",
        "started",
        "_settling",
    )

    def __init__(self, emit: Callable[[str], None], lenient: bool = True) -> None:
        self.emit = emit
        self.lenient = lenient
        self.done = False
        self.broken = False
        self.started = False  # a value began that is valid so far (or the call closed): it is a call
        self._settling = False  # a token was the first value: started once the next character fits
        self.mode = _STRUCT
        # frames: [kind, state, items, keyword or first-element kind]
        self._frames: list[list] = [[ARGS, _ITEM, 0, None]]
        self._holds: list[list[str]] = []  # output of undecided braces' first elements
        self._sbuf: list[str] = []  # decoded string text not yet emitted
        self._token = ""
        self._negative = False
        self._quote = ""
        self._triple = False
        self._raw = False
        self._esc = ""
        self._wait = ""
        self._wait_stage = 0
        self._quotes = 0
        self.emit("{")

    # ------------------------------------------------------------ output

    def _out(self, text: str) -> None:
        if self._holds:
            self._holds[-1].append(text)
        else:
            self.emit(text)

    def _flush_string(self) -> None:
        if self._sbuf:
            text = "".join(self._sbuf)
            self._sbuf = []
            if text:
                self._out(json_string_body(text))

    # ------------------------------------------------------------ driving

    def feed(self, text: str, pos: int = 0) -> int:
        """Scan ``text[pos:]``; return where scanning stopped (after ``)`` when ``done``, at the error when ``broken``)."""
        n = len(text)
        handlers = self._modes
        while pos < n and not self.done:
            pos = handlers[self.mode](self, text, pos)
        if self.mode in (_STRING, _ESCAPE, _QUOTES):
            self._flush_string()
        return pos

    def finish(self) -> None:
        """End of generation: what was written goes out (a token, a closing quote); nothing is invented."""
        if self.done:
            return
        mode = self.mode
        if mode == _TOKEN:
            self._end_token(None)
        elif mode == _ESCAPE:
            self._sbuf.append("\\" + self._esc)
            self._flush_string()
        elif mode == _WAIT:
            closer = self._wait_stage == 1
            self._close_string()
            if closer:
                self._close(0)
                if self.done:
                    return
        elif mode == _QUOTES:
            self._sbuf.append(self._quote * self._quotes)
            self._flush_string()
        elif mode == _STRING:
            self._flush_string()
        while self._holds:  # an undecided brace: its first element is all there is
            held = "".join(self._holds.pop())
            self._out(held)
        self.done = True

    def _fail(self, pos: int) -> int:
        self._flush_string()
        while self._holds:
            self._holds.pop()
        self.done = self.broken = True
        return pos

    # ------------------------------------------------------------ structure

    def _struct(self, text: str, pos: int) -> int:
        c = text[pos]
        if c in _WS:
            return pos + 1
        frame = self._frames[-1]
        state = frame[1]
        kind = frame[0]
        if state == _ITEM:
            if c == _CLOSER[kind]:
                return self._close(pos)
            if kind == ARGS:
                if _IDENT_START.match(c):
                    self._token = ""
                    self.mode = _TOKEN
                    return pos
                return self._fail(pos)
            return self._value(text, pos)
        if state == _VALUE:
            return self._value(text, pos)
        if state == _AFTER:
            if c == "," or c == _CLOSER[kind]:
                if self._settling:
                    self.started = True
                    self._settling = False
                if c == ",":
                    frame[1] = _ITEM
                    return pos + 1
                return self._close(pos)
            return self._fail(pos)
        if state == _NAMED:
            if c == "=":
                self._out((", " if frame[2] else "") + json.dumps(frame[3], ensure_ascii=False) + ": ")
                frame[2] += 1
                frame[1] = _VALUE
                return pos + 1
            return self._fail(pos)
        if state == _COLON:
            if c == ":":
                self._out(": ")
                frame[1] = _VALUE
                return pos + 1
            return self._fail(pos)
        # _DECIDE: a brace's first element is complete
        if c == ":":
            if frame[3] == "container":
                return self._fail(pos)
            held = "".join(self._holds.pop())
            frame[0] = DICT
            self._out("{" + (held if frame[3] == "string" else json.dumps(held)) + ": ")
            frame[1] = _VALUE
            return pos + 1
        if c == "," or c == "}":
            held = "".join(self._holds.pop())
            frame[0] = SET
            self._out("[" + held)
            if c == "}":
                frame[1] = _AFTER
                return pos
            frame[1] = _ITEM
            return pos + 1
        return self._fail(pos)

    def _item_starts(self, frame: list) -> None:
        """A value begins in ``frame`` (not a keyword's value or a dict value): its separator goes out."""
        if frame[2]:
            self._out(", ")
        frame[2] += 1

    def _value(self, text: str, pos: int) -> int:
        c = text[pos]
        frame = self._frames[-1]
        kind, state = frame[0], frame[1]
        if state == _ITEM and kind != BRACE:
            self._item_starts(frame)
        if kind == BRACE and state == _ITEM:
            frame[2] += 1
            self._holds.append([])
            frame[3] = "string" if c in "'\"" or c in _STRING_PREFIXES else "scalar"
            if c in _OPENERS:
                frame[3] = "container"
        if c == "'" or c == '"':
            return self._open_string(text, pos, raw=False)
        if c in _OPENERS:
            self.started = True
            opened = _OPENERS[c]
            if opened != BRACE:
                self._out("[")
            self._frames.append([opened, _ITEM, 0, None])
            return pos + 1
        if c == "-" or c == "+":
            if self._negative or self._token:
                return self._fail(pos)
            self._negative = c == "-" and not self._negative
            self._token = "+"  # a sign was read: a number must follow
            self.mode = _TOKEN
            return pos + 1
        if c.isdigit() or c == "." or _IDENT_START.match(c):
            self._token = ""
            self.mode = _TOKEN
            return pos
        return self._fail(pos)

    def _value_done(self) -> None:
        """The value that started last is complete: the enclosing container moves on."""
        frame = self._frames[-1]
        kind, state = frame[0], frame[1]
        if kind == BRACE and state == _ITEM:
            frame[1] = _DECIDE
        elif kind == DICT and state == _ITEM:
            frame[1] = _COLON
        else:
            frame[1] = _AFTER

    def _close(self, pos: int) -> int:
        frame = self._frames.pop()
        kind = frame[0]
        if kind == BRACE:
            if frame[1] == _DECIDE:  # one element and no colon: a set
                self._out("[" + "".join(self._holds.pop()) + "]")
            else:  # {} is an empty dict
                self._out("{}")
        else:
            self._out(_JSON_CLOSER[kind])
        if kind == ARGS:
            self.started = self.done = True
            return pos + 1
        self._value_done()
        return pos + 1

    def _key_position(self) -> bool:
        frame = self._frames[-1]
        return frame[0] == DICT and frame[1] == _ITEM

    # ------------------------------------------------------------ tokens

    def _in_token(self, text: str, pos: int) -> int:
        token = self._token
        if token == "+":  # after a sign: whitespace, then the number
            c = text[pos]
            if c in _WS:
                return pos + 1
            if not (c.isdigit() or c == "."):
                return self._fail(pos)
            token = self._token = ""
        first = token[:1] or text[pos]
        run = _IDENT_RUN if _IDENT_START.match(first) else _NUMBER_RUN
        if run is _NUMBER_RUN and token[-1:] in ("e", "E") and text[pos] in "+-" and token[:2].lower() != "0x":
            pos += 1  # the exponent's sign, the first character of this piece
            token += text[pos - 1]
        end = run.match(text, pos).end()
        self._token = token + text[pos:end]
        if end >= len(text):
            return end
        return self._end_token(text, end)

    def _end_token(self, text: str | None, pos: int = 0) -> int:
        """The token ended before ``text[pos]`` (None: at the end of generation)."""
        token, self._token = self._token, ""
        negative, self._negative = self._negative, False
        self.mode = _STRUCT
        nxt = text[pos] if text is not None else ""
        frame = self._frames[-1]
        if frame[0] == ARGS and frame[1] == _ITEM:  # a keyword
            frame[3] = token
            frame[1] = _NAMED
            return pos
        if token and (token[0].isdigit() or token[0] == "."):
            rendered = number_json(token, negative)
        elif negative or token == "+":
            rendered = None
        elif nxt in ("'", '"') and token in _STRING_PREFIXES:
            return self._open_string(text, pos, raw=_STRING_PREFIXES[token])
        else:
            rendered = _CONSTANTS.get(token)
        if rendered is None:
            return self._fail(max(0, pos - len(token)) if text is not None else 0)
        self._settling = not self.started  # a first value that is a token counts once what follows it fits
        self._out(json.dumps(rendered) if self._key_position() else rendered)
        self._value_done()
        return pos

    # ------------------------------------------------------------ strings

    def _open_string(self, text: str, pos: int, raw: bool) -> int:
        q = text[pos]
        self.started = True
        self._quote = q
        self._raw = raw
        self._triple = False
        self._quotes = 1
        self._out('"')
        self.mode = _QUOTES  # one quote read: a triple quote or an empty string may follow
        return pos + 1

    def _in_quotes(self, text: str, pos: int) -> int:
        """Counting quotes: at a string's start (``'''``?) or inside a triple-quoted string (its end?)."""
        q = self._quote
        n = len(text)
        while pos < n and text[pos] == q and self._quotes < 3:
            self._quotes += 1
            pos += 1
        if pos >= n and self._quotes < 3:
            return pos
        count, self._quotes = self._quotes, 0
        if not self._triple:
            if count == 3:
                self._triple = True
                self.mode = _STRING
                return pos
            if count == 2:  # '' : an empty string
                self._close_string()
                return pos
            self.mode = _STRING
            return pos
        if count == 3:
            self._close_string()
            return pos
        self._sbuf.append(q * count)
        self.mode = _STRING
        return pos

    def _in_string(self, text: str, pos: int) -> int:
        q = self._quote
        n = len(text)
        if self._triple:
            i = text.find(q, pos) if self._raw else _first_of(text, pos, q, "\\")
            stop = n if i < 0 else i
        else:
            m = _BODY_STOP[q].search(text, pos)
            stop = n if m is None else m.start()
        if stop >= n:
            if self._sbuf:
                self._sbuf.append(text[pos:])
            elif pos < n:  # the common case: the piece ends inside the string, nothing held before
                self._out(json_string_body(text[pos:]))
            return n
        if stop > pos:
            self._sbuf.append(text[pos:stop])
        c = text[stop]
        if c == "\\":
            self._esc = ""
            self.mode = _ESCAPE
            return stop + 1
        if self._triple:
            self._quotes = 0
            self.mode = _QUOTES
            return stop
        if not self.lenient:
            self._close_string()
            return stop + 1
        self._flush_string()
        self._wait = q
        self._wait_stage = 0
        self.mode = _WAIT
        return stop + 1

    def _in_escape(self, text: str, pos: int) -> int:
        esc = self._esc + text[pos]
        pos += 1
        if self._raw:  # a raw string keeps the backslash and the character after it
            self._sbuf.append("\\" + esc)
            self.mode = _STRING
            return pos
        head = esc[0]
        decoded: str | None
        if head in _HEX_ESCAPES:
            want = _HEX_ESCAPES[head]
            if len(esc) > 1 and esc[-1] not in _HEX:
                decoded = "\\" + esc[:-1]
                pos -= 1
            elif len(esc) < want + 1:
                self._esc = esc
                return pos
            else:
                code = int(esc[1:], 16)
                decoded = chr(code) if code <= 0x10FFFF else "\\" + esc
        elif head in _OCTAL:
            if len(esc) > 1 and esc[-1] not in _OCTAL:
                decoded = chr(int(esc[:-1], 8))
                pos -= 1
            elif len(esc) < 3:
                self._esc = esc
                return pos
            else:
                decoded = chr(int(esc, 8))
        elif head == "N":
            if len(esc) == 2 and esc[1] != "{":
                decoded = "\\N"
                pos -= 1
            elif not esc.endswith("}") and len(esc) < 80:
                self._esc = esc
                return pos
            else:
                try:
                    decoded = unicodedata.lookup(esc[2:-1])
                except KeyError:
                    decoded = "\\" + esc
        else:
            decoded = _SIMPLE_ESCAPES.get(head)
            if decoded is None:
                decoded = "\\" + head  # Python keeps an unknown escape as written
        self._sbuf.append(decoded)
        self._esc = ""
        self.mode = _STRING
        return pos

    def _in_wait(self, text: str, pos: int) -> int:
        """After a quote of the string's kind: does it close the string? (see the module docstring)."""
        c = text[pos]
        if c in _WS:
            self._wait += c
            return pos + 1
        frames = self._frames
        frame = frames[-1]
        if self._wait_stage == 0:
            if c == "," or (c == ":" and frame[0] in (DICT, BRACE) and frame[1] == _ITEM):
                self._close_string()
                return pos
            if c == _CLOSER[frame[0]]:
                self._wait += c
                self._wait_stage = 1
                return pos + 1
        else:  # the quote, then the container's closer: can this character follow that container?
            if len(frames) == 1:
                follows = c in ",];<"
            else:
                follows = c in ",:" or c == _CLOSER[frames[-2][0]]
            if follows:
                self._close_string()
                self._close(pos)
                return pos
        self._sbuf.append(self._wait)  # the quote was part of the string
        self._wait = ""
        self.mode = _STRING
        return pos

    def _close_string(self) -> None:
        self._flush_string()
        self._wait = ""
        self._out('"')
        self.mode = _STRUCT
        self._value_done()

    _modes = {
        _STRUCT: _struct,
        _STRING: _in_string,
        _ESCAPE: _in_escape,
        _TOKEN: _in_token,
        _WAIT: _in_wait,
        _QUOTES: _in_quotes,
    }


class PythonCall:
    """One Python call after its ``(``: its arguments scanned, the call opened on the parser once it is one.

    The call opens (complete name, then the JSON held so far) when its first
    argument value has begun validly, or at ``)`` for a call without arguments
    (:attr:`PythonArgsScan.started`): ``f(x=b'z')`` is never announced, so a
    format can skip it and read on.
    """

    __slots__ = ("_held", "index", "name", "parser", "scan")

    def __init__(self, parser: FormatParser, name: str, lenient: bool = True) -> None:
        self.parser = parser
        self.name = name
        self.index = -1  # the call's index once opened
        self._held: list[str] = []
        self.scan = PythonArgsScan(self._emit, lenient)

    @property
    def opened(self) -> bool:
        return self.index >= 0

    @property
    def done(self) -> bool:
        return self.scan.done

    @property
    def broken(self) -> bool:
        return self.scan.broken

    def feed(self, text: str, pos: int = 0) -> int:
        """Scan from ``pos``; return where the scan stopped (see :meth:`PythonArgsScan.feed`)."""
        if self.index >= 0:
            return self.scan.feed(text, pos)
        stop = self.scan.feed(text, pos)
        self._open_if_ready()
        return stop

    def finish(self) -> None:
        """End of generation inside the call."""
        self.scan.finish()
        self._open_if_ready()

    def _emit(self, piece: str) -> None:
        if self.index >= 0:
            self.parser._arguments(self.index, piece)
        else:
            self._held.append(piece)

    def _open_if_ready(self) -> None:
        if self.index < 0 and self.scan.started:
            self.index = self.parser._open_call()
            self.parser._name_call(self.index, self.name)
            self.parser._arguments(self.index, "".join(self._held))
            self._held = []
            self.scan.emit = functools.partial(self.parser._arguments, self.index)  # straight to the parser


def _first_of(text: str, pos: int, a: str, b: str) -> int:
    i, j = text.find(a, pos), text.find(b, pos)
    if i < 0:
        return j
    return i if j < 0 else min(i, j)


__all__ = ["PythonArgsScan", "PythonCall", "json_string_body", "number_json"]
