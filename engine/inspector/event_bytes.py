"""A captured chunk's event as bytes, Wireshark-style: a hex dump beside the parsed form, each field's byte span.

A capture's wire chunks are normalised (one kind each, the id and model of the
analysis); what the server sent is the SSE event they came from. Each capture
step keeps that event's lines as received (line breaks as ``\\n``), so the
event's bytes are the step's data. :func:`parse_event` reads them the way a
client does (``field: value`` lines; a ``data:`` value that is JSON, member by
member) and records the byte span of every line, key and value. The bytes view
highlights the span of the field picked in the parsed form, and a byte picked
in the dump selects the innermost field holding it (:func:`field_at`).
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from json.decoder import scanstring

from callscope.engine.analysis.analyzer import Analysis

#: Bytes of one event shown (a larger event is dumped up to here; its fields past it are still listed).
SHOWN_BYTES = 64 * 1024
#: Bytes per dump row, and the gap after the first half of them (as Wireshark and ``hexdump -C`` lay it out).
ROW_BYTES = 16
#: JSON nested deeper than this is one field (the span of the whole value), not walked further.
MAX_DEPTH = 32
#: Most fields listed for one event (a huge event lists its first ones).
MAX_FIELDS = 4000

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS = {"true": True, "false": False, "null": None}
_SPACE = " \t\n\r"


@dataclass(frozen=True, slots=True)
class ByteField:
    """One field of the parsed form and the bytes it was read from (``start`` inclusive, ``end`` exclusive)."""

    label: str  # what the parsed form shows: ``data``, ``choices[0]``, ``"content": "Hi"``
    path: str  # where it sits: ``data.choices[0].delta.content``
    start: int
    end: int
    depth: int  # 0 for an SSE line, 1 for a JSON value's top level, and so on


@dataclass(frozen=True, slots=True)
class EventBytes:
    """The event a chunk came from: its bytes and its fields."""

    step: int
    data: bytes
    fields: tuple[ByteField, ...]

    @property
    def shown(self) -> bytes:
        return self.data[:SHOWN_BYTES]


def event_of_chunk(analysis: Analysis, number: int) -> EventBytes | None:
    """The SSE event chunk ``number`` of a capture came from; None for other sources (their steps are not events)."""
    if analysis.source.kind != "capture" or not 0 <= number < len(analysis.chunks):
        return None
    step = analysis.chunks[number].step
    steps = analysis.steps
    at = step - 1  # a capture numbers its events 1, 2, 3...
    if not (0 <= at < len(steps) and steps[at].step == step):
        at = bisect.bisect_left([s.step for s in steps], step)
    if not (0 <= at < len(steps) and steps[at].step == step and steps[at].data):
        return None
    data = steps[at].data
    return EventBytes(step, data, tuple(parse_event(data)))


def parse_event(data: bytes) -> list[ByteField]:
    """Every field of an event's bytes with its span: each line, and a ``data:`` line's JSON member by member."""
    text = data.decode("utf-8", errors="replace")
    offsets = _byte_offsets(text)
    fields: list[ByteField] = []
    position = 0
    for line in text.split("\n"):
        end = position + len(line)
        if line:
            _line_fields(line, position, offsets, fields)
        position = end + 1
        if len(fields) >= MAX_FIELDS:
            break
    return fields[:MAX_FIELDS]


def _line_fields(line: str, at: int, offsets: list[int], fields: list[ByteField]) -> None:
    name, colon, value = line.partition(":")
    if line.startswith(":"):
        fields.append(ByteField(f"comment {line[1:].strip()}"[:80], "comment", offsets[at], offsets[at + len(line)], 0))
        return
    label = _clip(line) if name != "data" else f"data ({offsets[at + len(line)] - offsets[at]:,} bytes)"
    fields.append(ByteField(label, name or line, offsets[at], offsets[at + len(line)], 0))
    if not colon or name != "data":
        return
    skip = 1 if value.startswith(" ") else 0
    start = at + len(name) + 1 + skip
    body = value[skip:]
    if not body.lstrip().startswith(("{", "[")):
        return
    try:
        _JsonSpans(line, at, offsets, fields).value(start - at, "data", 1)
    except (ValueError, IndexError):
        return  # not JSON after all: the line's own span stands


class _JsonSpans:
    """A small JSON reader that records the span of every member (``json`` keeps none)."""

    def __init__(self, line: str, at: int, offsets: list[int], fields: list[ByteField]) -> None:
        self.text, self.at, self.offsets, self.fields = line, at, offsets, fields

    def _span(self, start: int, end: int) -> tuple[int, int]:
        return self.offsets[self.at + start], self.offsets[self.at + end]

    def _skip(self, pos: int) -> int:
        while pos < len(self.text) and self.text[pos] in _SPACE:
            pos += 1
        return pos

    def value(self, pos: int, path: str, depth: int, key: str | None = None, key_at: int | None = None) -> int:
        """Read the value at ``pos`` (after blanks); record it (from its key, when it has one); return where it ends."""
        pos = self._skip(pos)
        begin = pos if key_at is None else key_at
        if len(self.fields) >= MAX_FIELDS:
            raise ValueError("enough fields")
        head = self.text[pos]
        label = f"{json.dumps(key, ensure_ascii=False)}: " if key is not None else ""
        if head in "{[" and depth > MAX_DEPTH:
            end = pos + json.JSONDecoder().raw_decode(self.text[pos:])[1]
            self.fields.append(ByteField(label + ("{…}" if head == "{" else "[…]"), path, *self._span(begin, end), depth))
            return end
        if head == "{":
            return self._object(pos, path, depth, label, begin)
        if head == "[":
            return self._array(pos, path, depth, label, begin)
        if head == '"':
            decoded, end = scanstring(self.text, pos + 1)
            shown = json.dumps(decoded, ensure_ascii=False)
        elif match := _NUMBER.match(self.text, pos):
            end, shown = match.end(), match.group()
        else:
            word = next((w for w in _LITERALS if self.text.startswith(w, pos)), None)
            if word is None:
                raise ValueError(f"not JSON at {pos}")
            end, shown = pos + len(word), word
        self.fields.append(ByteField(label + _clip(shown), path, *self._span(begin, end), depth))
        return end

    def _object(self, pos: int, path: str, depth: int, label: str, opened: int) -> int:
        index = len(self.fields)
        self.fields.append(ByteField(label + "{…}", path, 0, 0, depth))  # its span once its end is known
        pos = self._skip(pos + 1)
        while self.text[pos] != "}":
            if self.text[pos] != '"':
                raise ValueError(f"expected a key at {pos}")
            key, after = scanstring(self.text, pos + 1)
            colon = self._skip(after)
            if self.text[colon] != ":":
                raise ValueError(f"expected ':' at {colon}")
            pos = self._skip(self.value(colon + 1, f"{path}.{key}", depth + 1, key, pos))
            if self.text[pos] == ",":
                pos = self._skip(pos + 1)
        end = pos + 1
        self.fields[index] = ByteField(self.fields[index].label, path, *self._span(opened, end), depth)
        return end

    def _array(self, pos: int, path: str, depth: int, label: str, opened: int) -> int:
        index = len(self.fields)
        self.fields.append(ByteField(label + "[…]", path, 0, 0, depth))
        pos = self._skip(pos + 1)
        item = 0
        while self.text[pos] != "]":
            pos = self._skip(self.value(pos, f"{path}[{item}]", depth + 1))
            item += 1
            if self.text[pos] == ",":
                pos = self._skip(pos + 1)
        end = pos + 1
        self.fields[index] = ByteField(self.fields[index].label, path, *self._span(opened, end), depth)
        return end


def _byte_offsets(text: str) -> list[int]:
    """The UTF-8 byte offset of every character position of ``text`` (and of its end)."""
    offsets = [0] * (len(text) + 1)
    total = 0
    for i, ch in enumerate(text):
        offsets[i] = total
        code = ord(ch)
        total += 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    offsets[len(text)] = total
    return offsets


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def field_at(fields: tuple[ByteField, ...] | list[ByteField], offset: int) -> int | None:
    """The index of the innermost field whose span holds byte ``offset`` (None: no field does)."""
    best: int | None = None
    for index, field in enumerate(fields):
        if field.start <= offset < field.end and (best is None or field.depth >= fields[best].depth):
            best = index
    return best


# ---------------------------------------------------------------- the dump


def hex_dump(data: bytes, width: int = ROW_BYTES) -> str:
    """``0000  64 61 74 61 3a 20 7b 22  69 64 ...  |data: {"id...|``, one row per ``width`` bytes."""
    rows = []
    half = width // 2
    for row in range(0, len(data), width):
        chunk = data[row : row + width]
        cells = [f"{b:02x}" for b in chunk] + ["  "] * (width - len(chunk))
        hexes = " ".join(cells[:half]) + "  " + " ".join(cells[half:])
        text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
        rows.append(f"{row:04x}  {hexes}  |{text}|")
    return "\n".join(rows)


#: Where a row's hex part starts in :func:`hex_dump`'s text.
_HEX_START = 6


def row_chars(width: int = ROW_BYTES) -> int:
    """How many characters one dump row takes (for choosing ``width`` by the room there is)."""
    return ascii_column(width, width) + 1


def hex_column(in_row: int, width: int = ROW_BYTES) -> int:
    """The column of a byte's two hex digits within its row."""
    return _HEX_START + in_row * 3 + (1 if in_row >= width // 2 else 0)


def ascii_column(in_row: int, width: int = ROW_BYTES) -> int:
    """The column of a byte's character within its row."""
    return _HEX_START + width * 3 + 1 + 2 + in_row


def offset_at(row: int, column: int, length: int, width: int = ROW_BYTES) -> int | None:
    """The byte at ``column`` of dump row ``row`` (in its hex or its text part), or None between them."""
    for in_row in range(width):
        if hex_column(in_row, width) <= column < hex_column(in_row, width) + 2 or column == ascii_column(in_row, width):
            offset = row * width + in_row
            return offset if offset < length else None
    return None
