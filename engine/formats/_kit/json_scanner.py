"""A resumable JSON scanner: where values start and end, fed one piece at a time.

The JSON wire formats (hermes, llama3_json, mistral, generic, emulated) need to
know, while a tool call is still being written, where its ``"name"`` string
ends and where its ``"arguments"`` value starts and ends, so that the model's
own argument text can be streamed verbatim. Re-parsing the whole prefix on
every token is what made long calls quadratic; this scanner keeps its state
(container stack, string/escape state, what token comes next) between pieces
and only ever looks at the new characters.

It reports *structure*, not values: :meth:`JsonScanner.feed` returns events
(value started at depth d, value ended, syntax error) with positions into the
piece it was given; the caller slices the piece to capture raw text. Depth is
the number of open containers around a value: the top-level value is at depth
0, the members of a top-level object at depth 1.

Only the levels a caller cares about are tokenised precisely (keys, colons,
commas); anything deeper than ``report_depth`` (or inside a container the
``descend`` predicate declined) is skipped with a regular expression that
jumps from one quote/bracket to the next, and inside strings from one quote or
backslash to the next. That is what keeps a 32 KB argument object cheap: the
per-piece cost is a couple of ``re.search`` calls, whatever the prefix length.

Leniency, on purpose: skipped levels are only checked for brackets, strings
and characters that cannot appear outside a JSON string; a closer of the
wrong kind there closes the innermost container. Such a character (the ``<``
of ``</tool_call>``, say) is a syntax error at every level, so a half-written
object followed by a closing tag is noticed at the tag. Formats whose markers
are made of JSON characters (``[TOOL_CALLS]``) check for them themselves.

:class:`JsonStringDecoder` decodes the raw text of a JSON string as it
arrives (escapes split across pieces, surrogate pairs), for formats that
stream a string value (a JSON-encoded ``"arguments"``, generic's
``"response"``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

# ----------------------------------------------------------------- events

#: ``(VALUE_START, depth, pos, first_char, slot)``: a value begins at ``pos``;
#: ``slot`` is its key (object member), index (array element) or None (top level).
VALUE_START = 0
#: ``(VALUE_END, depth, pos)``: the value that started at ``depth`` ends before ``pos``.
VALUE_END = 1
#: ``(ERROR, depth, pos)``: the character at ``pos`` cannot continue the JSON text.
ERROR = 2

Event = tuple

# ------------------------------------------------------------ token states

_VALUE = 0  # a value (or, right after ``[`` / ``,`` in an array, a ``]``)
_KEY = 1  # a key string (or ``}``)
_COLON = 2
_AFTER = 3  # ``,`` or the closer of the enclosing container
_SCALAR = 4  # inside a number / true / false / null
_DONE = 5
_FAILED = 6

# string kinds
_DEEP = 0  # inside a skipped container: only its end matters
_KEYSTR = 1  # a key at a reported level: its text is collected
_VALSTR = 2  # a value at a reported level: its end is reported

_STRING_STOP = re.compile(r'["\\]')
#: Outside strings, skipped levels only care about quotes, brackets and characters
#: that cannot appear in JSON outside a string.
_SKIP_STOP = re.compile(r"[^\s,:0-9a-zA-Z.+\-]")
_WHITESPACE = re.compile(r"\s+")
_SCALAR_RUN = re.compile(r"[0-9a-zA-Z.+\-]*")
_SCALAR_START = frozenset("-0123456789tfn")

Descend = Callable[[int, "str | int | None"], bool]


class JsonScanner:
    """Incremental scanner of one JSON value (leading whitespace allowed).

    ``report_depth``: events are reported for values at depth ``<= report_depth``.
    ``descend(depth, slot)``: asked when a container value starts at a depth
    below ``report_depth``; False skips its contents like deeper levels (its own
    start and end are still reported).

    :meth:`feed` stops right after the top-level value ends (``done``) or at a
    syntax error (``failed``); the caller owns the rest of the text.
    """

    __slots__ = (
        "descend",
        "escape",
        "in_string",
        "key_from",
        "key_parts",
        "limit",
        "report_depth",
        "slots",
        "stack",
        "state",
        "string_kind",
    )

    def __init__(self, report_depth: int = 1, descend: Descend | None = None) -> None:
        self.report_depth = report_depth
        self.descend = descend
        self.stack: list[str] = []  # "{" / "[" per open container
        self.slots: list[str | int | None] = []  # current key / element index per open container
        self.limit = report_depth  # contents deeper than this are skipped
        self.state = _VALUE
        self.in_string = False
        self.string_kind = _DEEP
        self.escape = False
        self.key_parts: list[str] = []
        self.key_from = 0

    # ------------------------------------------------------------ queries

    @property
    def depth(self) -> int:
        """Open containers right now."""
        return len(self.stack)

    @property
    def done(self) -> bool:
        """The top-level value is complete."""
        return self.state == _DONE

    @property
    def failed(self) -> bool:
        return self.state == _FAILED

    @property
    def started(self) -> bool:
        """The top-level value has begun (something other than whitespace was seen)."""
        return bool(self.stack) or self.in_string or self.state != _VALUE

    def key_at(self, depth: int) -> str | int | None:
        """Key (object) or element index (array) of the member being read at ``depth`` (>= 1)."""
        if 1 <= depth <= len(self.slots):
            return self.slots[depth - 1]
        return None

    # ------------------------------------------------------------ scanning

    def feed(self, text: str, pos: int = 0) -> tuple[list[Event], int]:
        """Scan ``text[pos:]``; return the events and where scanning stopped.

        The stop is ``len(text)`` unless the top-level value ended (stop is just
        after it) or a syntax error was found (stop is the offending character).
        """
        events: list[Event] = []
        state = self.state
        if state == _DONE or state == _FAILED:
            return events, pos
        n = len(text)
        stack = self.stack
        slots = self.slots
        report_depth = self.report_depth
        string_search = _STRING_STOP.search
        skip_search = _SKIP_STOP.search
        while pos < n:
            if self.in_string:
                if self.escape:
                    self.escape = False
                    pos += 1
                    continue
                m = string_search(text, pos)
                if m is None:
                    pos = n
                    break
                i = m.start()
                if text[i] == "\\":
                    if i + 1 < n:
                        pos = i + 2
                    else:
                        self.escape = True
                        pos = n
                    continue
                # the closing quote
                pos = i + 1
                self.in_string = False
                kind = self.string_kind
                if kind == _KEYSTR:
                    raw = "".join(self.key_parts) + text[self.key_from : i]
                    self.key_parts = []
                    try:
                        key = json.loads('"' + raw + '"', strict=False)
                    except ValueError:
                        key = raw
                    slots[-1] = key
                    state = _COLON
                elif kind == _VALSTR:
                    depth = len(stack)
                    events.append((VALUE_END, depth, pos))
                    if depth == 0:
                        state = _DONE
                        break
                    state = _AFTER
                continue

            depth = len(stack)
            if depth > self.limit:
                # skipped level: jump to the next quote / bracket / stray character
                m = skip_search(text, pos)
                if m is None:
                    pos = n
                    break
                i = m.start()
                c = text[i]
                pos = i + 1
                if c == '"':
                    self.in_string = True
                    self.string_kind = _DEEP
                elif c == "{" or c == "[":
                    stack.append(c)
                    slots.append(None)
                elif c == "}" or c == "]":
                    stack.pop()
                    slots.pop()
                    depth -= 1
                    if depth == self.limit:
                        self.limit = report_depth
                        events.append((VALUE_END, depth, pos))
                        if depth == 0:
                            state = _DONE
                            break
                        state = _AFTER
                else:
                    pos = i
                    state = self._fail(events, depth, i)
                    break
                continue

            # a reported level: tokenise precisely
            if state == _SCALAR:
                pos = _SCALAR_RUN.match(text, pos).end()
                if pos >= n:
                    break
                events.append((VALUE_END, depth, pos))
                if depth == 0:
                    state = _DONE
                    break
                state = _AFTER
                continue
            c = text[pos]
            if c in " \t\r\n" or c.isspace():
                pos = _WHITESPACE.match(text, pos).end()
                continue
            # each state either consumes ``c`` (continue), or decides whether it closes the innermost
            # container (``closes``); anything else is a syntax error
            if state == _VALUE:
                if c == "{" or c == "[":
                    slot = slots[-1] if slots else None
                    events.append((VALUE_START, depth, pos, c, slot))
                    stack.append(c)
                    slots.append(None if c == "{" else 0)
                    if depth >= report_depth or (self.descend is not None and not self.descend(depth, slot)):
                        self.limit = depth
                    state = _KEY if c == "{" else _VALUE
                    pos += 1
                    continue
                if c == '"':
                    events.append((VALUE_START, depth, pos, c, slots[-1] if slots else None))
                    self.in_string = True
                    self.string_kind = _VALSTR
                    pos += 1
                    continue
                if c in _SCALAR_START:
                    events.append((VALUE_START, depth, pos, c, slots[-1] if slots else None))
                    state = _SCALAR
                    continue
                closes = c == "]" and bool(stack) and stack[-1] == "["  # an empty array
            elif state == _KEY:
                if c == '"':
                    self.in_string = True
                    self.string_kind = _KEYSTR
                    self.key_parts = []
                    self.key_from = pos + 1
                    pos += 1
                    continue
                closes = c == "}"  # an empty object
            elif state == _COLON:
                if c == ":":
                    state = _VALUE
                    pos += 1
                    continue
                closes = False
            else:  # _AFTER
                top = stack[-1]
                if c == ",":
                    if top == "{":
                        state = _KEY
                    else:
                        slots[-1] += 1
                        state = _VALUE
                    pos += 1
                    continue
                closes = (c == "}" and top == "{") or (c == "]" and top == "[")
            if not closes:
                state = self._fail(events, depth, pos)
                break
            state = self._close(events, pos)
            pos += 1
            if state == _DONE:
                break

        if self.in_string and self.string_kind == _KEYSTR and state != _FAILED:
            self.key_parts.append(text[self.key_from : pos])
            self.key_from = 0
        self.state = state
        return events, pos

    def _close(self, events: list[Event], pos: int) -> int:
        """Close the innermost container (at a reported level); return the new state."""
        self.stack.pop()
        self.slots.pop()
        depth = len(self.stack)
        self.limit = self.report_depth
        events.append((VALUE_END, depth, pos + 1))
        return _DONE if depth == 0 else _AFTER

    def _fail(self, events: list[Event], depth: int, pos: int) -> int:
        events.append((ERROR, depth, pos))
        return _FAILED


# ------------------------------------------------------------ string decoding

#: Complete escape units and plain runs; what is left at the end is an incomplete escape.
_COMPLETE_UNITS = re.compile(r"(?:[^\\]+|\\u[0-9a-fA-F]{4}|\\[^u])*")
_PARTIAL_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{0,3})?")
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_HIGH_SURROGATE_TAIL = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}$")
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_STRING_DECODER = json.JSONDecoder(strict=False)


def _unescape(match: re.Match[str]) -> str:
    body = match.group(1)
    if len(body) == 5:
        return chr(int(body[1:], 16))
    simple = _SIMPLE_ESCAPES.get(body)
    return simple if simple is not None else match.group(0)  # unknown escape: keep it verbatim


def decode_string_body(raw: str) -> str:
    """Decode the inside of a JSON string (no quotes), leniently.

    Invalid escapes are kept verbatim and raw control characters are allowed
    (models write literal newlines); a lone surrogate becomes U+FFFD.
    """
    if "\\" not in raw:
        return raw
    try:
        text = _STRING_DECODER.decode('"' + raw + '"')
    except ValueError:
        text = _ESCAPE.sub(_unescape, raw)
    return _fix_surrogates(text) if _SURROGATE_ESCAPE.search(raw) else text


def _fix_surrogates(text: str) -> str:
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class JsonStringDecoder:
    """Decodes the raw body of a JSON string piece by piece.

    An escape split across pieces (``\\u00`` + ``e9``) and a high surrogate
    waiting for its low half are held back until complete, so the decoded
    pieces concatenate to the decoding of the whole body.
    """

    __slots__ = ("pending",)

    def __init__(self) -> None:
        self.pending = ""

    def feed(self, raw: str) -> str:
        if not raw:
            return ""
        text = self.pending + raw if self.pending else raw
        if "\\" not in text:
            self.pending = ""
            return text
        cut = _COMPLETE_UNITS.match(text).end()
        tail = text[cut:]
        if tail and _PARTIAL_ESCAPE.fullmatch(tail) is None:
            # an invalid escape (``\u12x``): it will never complete; take it verbatim
            cut = len(text)
            tail = ""
        safe = text[:cut]
        m = _HIGH_SURROGATE_TAIL.search(safe)
        if m is not None and not _escaped_backslash_before(safe, m.start()):
            tail = safe[m.start() :] + tail
            safe = safe[: m.start()]
        self.pending = tail
        return decode_string_body(safe)

    def finish(self) -> str:
        """End of the string (or of the generation): decode whatever is held."""
        text, self.pending = self.pending, ""
        return decode_string_body(text) if text else ""


def _escaped_backslash_before(text: str, index: int) -> bool:
    """Is the backslash at ``index`` itself escaped (odd run of backslashes before it)?"""
    run = 0
    i = index - 1
    while i >= 0 and text[i] == "\\":
        run += 1
        i -= 1
    return run % 2 == 1


__all__ = [
    "ERROR",
    "VALUE_END",
    "VALUE_START",
    "JsonScanner",
    "JsonStringDecoder",
    "decode_string_body",
]
