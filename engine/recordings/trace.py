"""The ``callscope.trace/1`` recording format: what happened during one generation, nothing derived.

A trace stores the raw facts of a run (the request, then per step its time,
token ids and the exact bytes it added, then how generation ended) so that any
trace can be re-analysed later with another format parser or policy: parses,
deltas and the report are always derived on load, never stored.

The file is JSON Lines, one record per line, each an object with a ``type``:

``header`` (first line, exactly once)
    ``{"type": "header", "schema": "callscope.trace/1", "source": "model", "format": "hermes", ...}``
    with the fields of :class:`TraceHeader`.
``step``
    ``{"type": "step", "ms": 41.7, "text": "ab", "tokens": [1, 2]}``: ``text``
    when the step's bytes are valid UTF-8 on their own, otherwise
    ``"b64": "4oA="`` (a token can end in the middle of a UTF-8 character).
    ``ms`` is milliseconds since the request started (monotonic), or null.
``line``
    ``{"type": "line", "ms": 12.0, "line": "data: {...}"}``: one SSE line
    received by a capture, stamped with its receive time.
``end``
    ``{"type": "end", "cause": "stop", "ms": 2900.0}``, optionally with
    ``"detail": "connection lost after 3 lines"``: why it ended, in words (a
    capture that ended early, a generation error). ``detail`` is an optional
    addition within ``callscope.trace/1``: traces without it load as before,
    and writers leave it out when there is nothing to say. A trace without an
    end record is truncated (the recorder crashed or was killed): it still loads.

Reading never evaluates anything from the file: JSON is parsed with
:func:`callscope.engine.core.json_text.loads` (any nesting depth) and every field is
type-checked. ``ms`` must be a finite number from 0 to :data:`MAX_MS` that never
decreases from one record to the next: the recorder stamps records in order on
a monotonic clock, so NaN, a negative or a backwards time means the file is
corrupt, and it is refused with ``file:line`` rather than reported as a
negative time to first delta. A leading UTF-8 byte-order mark is accepted.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import time
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from callscope.engine.core.bulk import gc_paused
from callscope.engine.core.causes import END_CAUSES
from callscope.engine.core.files import read_bytes, strip_bom
from callscope.engine.core.json_text import DOCUMENT_DEPTH, JSONLimitError, deeper_than, dumps, loads
from callscope.engine.core.tools import normalize_tools

TRACE_SCHEMA = "callscope.trace/1"
#: Every trace schema version this reader understands.
KNOWN_SCHEMAS: tuple[str, ...] = (TRACE_SCHEMA,)
SCHEMA_PREFIX = "callscope.trace/"

SOURCES = ("text", "model", "capture")
UNITS = ("token", "char", "byte", "chunk")

RECORD_TYPES = ("header", "step", "line", "end")

#: Latest time a record may carry: about 31.7 years after the request. Nothing recorded comes
#: close; the bound keeps every time, difference and ratio derived from a trace a finite float
#: that plots and formats (``1e308`` ms would not).
MAX_MS = 1e12


class TraceError(ValueError):
    """A file that cannot be read as a trace; the message names ``file:line`` and what was expected."""


def now_iso() -> str:
    """Creation time written into new headers (UTC, seconds)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat()


@dataclass(slots=True)
class TraceHeader:
    """The request and the circumstances of one recorded generation."""

    source: str = "text"  # text | model | capture
    format: str | None = None  # wire format id (callscope.engine.formats), None if unknown
    template: str | None = None  # chat template name
    tools: list[dict[str, Any]] | None = None  # the request's OpenAI tools array
    messages: list[dict[str, Any]] | None = None  # the request's messages
    model_file: str | None = None
    model_sha256: str | None = None
    sampler: dict[str, Any] = field(default_factory=dict)
    created: str = field(default_factory=now_iso)
    description: str = ""
    unit: str = "token"  # what one step is: token | char | byte | chunk
    expect: dict[str, Any] | None = None  # expected verdict (fixture library)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        # shallow, not dataclasses.asdict: that copies nested values recursively, and tools or
        # messages from a user's file may nest deeper than Python's recursion limit
        return {"type": "header", "schema": TRACE_SCHEMA, **{f.name: getattr(self, f.name) for f in fields(self)}}


@dataclass(frozen=True, slots=True)
class TraceStep:
    """One step: its time (ms since request start, or None), the bytes it added, its token ids."""

    ms: float | None
    data: bytes
    tokens: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class TraceLine:
    """One received SSE line of a capture, with its receive time."""

    ms: float | None
    line: str


@dataclass(frozen=True, slots=True)
class TraceEnd:
    """How generation ended: the cause, when, and (optionally) why in words."""

    cause: str
    ms: float | None
    detail: str | None = None


@dataclass(slots=True)
class Trace:
    """A loaded trace. ``end`` is None for a truncated recording."""

    header: TraceHeader
    steps: list[TraceStep] = field(default_factory=list)
    lines: list[TraceLine] = field(default_factory=list)
    end: TraceEnd | None = None
    path: str | None = None
    #: The last line was cut off mid-record (a crash while writing); it was ignored.
    partial_last_line: bool = False

    @property
    def truncated(self) -> bool:
        return self.end is None

    @property
    def timed(self) -> bool:
        return any(s.ms is not None for s in self.steps) or any(line.ms is not None for line in self.lines)

    def data(self) -> bytes:
        """Every byte the generation produced, in order."""
        return b"".join(s.data for s in self.steps)

    def text(self) -> str:
        """The generation decoded as a whole (never piece by piece)."""
        return self.data().decode("utf-8", errors="replace")


# ====================================================================== writing


def encode_step(ms: float | None, data: bytes, tokens: tuple[int, ...] | list[int] = ()) -> dict[str, Any]:
    """The ``step`` record for ``data``: readable ``text`` when possible, base64 otherwise."""
    record: dict[str, Any] = {"type": "step", "ms": _round_ms(ms)}
    try:
        record["text"] = data.decode("utf-8")
    except UnicodeDecodeError:
        record["b64"] = base64.b64encode(data).decode("ascii")
    if tokens:
        record["tokens"] = [int(t) for t in tokens]
    return record


def _round_ms(ms: float | None) -> float | None:
    return None if ms is None else round(float(ms), 3)


#: A JSON string as :func:`json.dumps` writes it with ``ensure_ascii=False`` (the C encoder).
_encode_string = json.encoder.encode_basestring  # type: ignore[attr-defined]


def _dumps(record: dict[str, Any]) -> str:
    """One record's line; any depth (a header's tools may nest deeply)."""
    return dumps(record, ensure_ascii=False, separators=(",", ":"))


class TraceWriter:
    """Writes a trace record by record, flushing each, so a crash leaves a readable truncated trace.

    Use as a context manager; call :meth:`end` when generation ends. Closing
    without :meth:`end` deliberately leaves the trace truncated: that is what
    happened. One thread at a time (the decode loop's worker owns it).
    """

    #: With ``flush_each=False``, still flush at least this often, so a crash loses at most this much.
    FLUSH_INTERVAL_S = 0.25

    def __init__(self, path: str | os.PathLike[str], header: TraceHeader, flush_each: bool = True) -> None:
        if header.source not in SOURCES:
            raise ValueError(f"trace source must be one of {', '.join(SOURCES)}, not {header.source!r}")
        if header.unit not in UNITS:
            raise ValueError(f"trace unit must be one of {', '.join(UNITS)}, not {header.unit!r}")
        self.path = Path(path)
        self.header = header
        self.flush_each = flush_each
        self.ended = False
        self.steps_written = 0
        self._file: IO[str] | None = open(self.path, "w", encoding="utf-8", newline="\n")
        self._flushed_at = time.monotonic()
        self._write(header.to_json())
        self._file.flush()

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._file is None

    def _write(self, record: dict[str, Any]) -> None:
        self._write_text(_dumps(record) + "\n")

    def _write_text(self, text: str) -> None:
        if self._file is None:
            raise ValueError(f"trace {self.path} is closed")
        if self.ended:
            raise ValueError(f"trace {self.path} already has its end record")
        self._file.write(text)
        if self.flush_each:
            self._file.flush()
        else:
            now = time.monotonic()
            if now - self._flushed_at >= self.FLUSH_INTERVAL_S:
                self._file.flush()
                self._flushed_at = now

    def write_step(self, ms: float | None, data: bytes, tokens: tuple[int, ...] | list[int] = ()) -> None:
        """One decoded step: the exact bytes it added (may split a UTF-8 character)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"write_step takes bytes, not {type(data).__name__}")
        self._write(encode_step(ms, bytes(data), tokens))
        self.steps_written += 1

    def write_line(self, ms: float | None, line: str) -> None:
        """One SSE line a capture received, stamped with its receive time.

        The record's text is put together directly (the same bytes :func:`_dumps` writes for
        ``{"type": "line", "ms": ..., "line": ...}``): a capture or a proxy writes thousands a second.
        """
        ms = _round_ms(ms)
        self._write_text(f'{{"type":"line","ms":{"null" if ms is None else float.__repr__(ms)},'
                         f'"line":{_encode_string(line)}}}\n')

    def end(self, cause: str, ms: float | None, detail: str | None = None) -> None:
        """How generation ended (``stop``, ``length``, ``cancelled``, ``error``), and why in words if known."""
        if cause not in END_CAUSES:
            raise ValueError(f"end cause must be one of {', '.join(END_CAUSES)}, not {cause!r}")
        if detail is not None and not isinstance(detail, str):
            raise TypeError(f"end detail must be a string or None, not {type(detail).__name__}")
        record: dict[str, Any] = {"type": "end", "cause": cause, "ms": _round_ms(ms)}
        if detail is not None:
            record["detail"] = detail
        self._write(record)
        self.ended = True
        if self._file is not None:
            self._file.flush()

    def flush(self) -> None:
        """Hand everything written so far to the OS now (a writer that batches records decides when)."""
        if self._file is not None:
            self._file.flush()
            self._flushed_at = time.monotonic()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def write_trace(path: str | os.PathLike[str], trace: Trace) -> None:
    """Write a whole in-memory :class:`Trace` (scripts, tests, format conversion)."""
    with TraceWriter(path, trace.header, flush_each=False) as writer:
        for step in trace.steps:
            writer.write_step(step.ms, step.data, step.tokens)
        for line in trace.lines:
            writer.write_line(line.ms, line.line)
        if trace.end is not None:
            writer.end(trace.end.cause, trace.end.ms, trace.end.detail)


# ====================================================================== reading


def is_trace_header_line(line: str | bytes) -> bool:
    """Does this (first non-blank) line look like a trace header? Used to tell traces from fixtures."""
    if isinstance(line, bytes):
        line = line.decode("utf-8", errors="replace")
    line = line.strip()
    if not line.startswith("{"):
        return False
    try:
        record = loads(line)
    except ValueError:
        return False
    return (
        isinstance(record, dict)
        and isinstance(record.get("schema"), str)
        and record["schema"].startswith(SCHEMA_PREFIX)
    )


def read_trace(path: str | os.PathLike[str]) -> Trace:
    """Load a trace file; raises :class:`TraceError` naming ``file:line`` for anything malformed."""
    return parse_trace(read_bytes(path, TraceError), str(path))


def parse_trace(raw: bytes, origin: str = "<trace>") -> Trace:
    """Parse the bytes of a trace file (see :func:`read_trace`)."""
    raw = strip_bom(raw, origin, TraceError)
    with gc_paused():
        return _parse_trace(raw, origin)


def _parse_trace(raw: bytes, origin: str) -> Trace:
    lines = raw.split(b"\n")
    # A file that ends without a newline had its last record cut off only if that record is not valid JSON.
    last_unterminated = not raw.endswith(b"\n")
    trace: Trace | None = None
    latest = 0.0  # the latest "ms" so far: times never go back
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{origin}:{number}"
        is_last = number == len(lines)
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            if trace is not None and is_last and last_unterminated:
                trace.partial_last_line = True
                break
            raise TraceError(f"{where}: not UTF-8 text (byte {exc.start}); expected one JSON record per line") from None
        try:
            record = loads(text)
        except JSONLimitError as exc:  # valid JSON, and complete: not a record cut off by a crash
            raise TraceError(f"{where}: a record past what callscope reads ({exc})") from None
        except ValueError as exc:
            if trace is not None and is_last and last_unterminated:
                trace.partial_last_line = True  # a crash mid-write: keep what came before
                break
            if trace is None:
                raise TraceError(
                    f"{where}: not a callscope trace: expected a JSON header record with "
                    f'"schema": "{TRACE_SCHEMA}" ({exc})'
                ) from None
            raise TraceError(f"{where}: not a JSON record ({exc}); expected a step, line or end record") from None
        if not isinstance(record, dict):
            raise TraceError(f"{where}: expected a JSON object record, got {_kind(record)}")
        if trace is None:
            trace = Trace(_header(record, where), path=origin)
            continue
        ms = _add_record(trace, record, where)
        if ms is not None:
            if ms < latest:
                raise TraceError(
                    f'{where}: "ms" goes back in time ({ms:g} after {latest:g}); expected milliseconds since '
                    "the request on a monotonic clock, never decreasing"
                )
            latest = ms
    if trace is None:
        raise TraceError(f'{origin}: empty file; expected a header record with "schema": "{TRACE_SCHEMA}"')
    return trace


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _header(record: dict[str, Any], where: str) -> TraceHeader:
    schema = record.get("schema")
    if not isinstance(schema, str):
        raise TraceError(
            f'{where}: not a callscope trace: the first record has no "schema" (expected "{TRACE_SCHEMA}")'
        )
    if schema not in KNOWN_SCHEMAS:
        raise TraceError(f"{where}: unknown trace schema {_shown(schema)}; known versions: {', '.join(KNOWN_SCHEMAS)}")
    if record.get("type", "header") != "header":
        raise TraceError(f"{where}: expected the header record first, got a {_shown(record.get('type'))} record")
    header = TraceHeader(created=_opt(record, "created", str, where) or "")
    header.source = _choice(record, "source", SOURCES, where, "text")
    header.unit = _choice(record, "unit", UNITS, where, "token")
    header.format = _opt(record, "format", str, where)
    header.template = _opt(record, "template", str, where)
    tools = _opt(record, "tools", list, where)
    header.tools = normalize_tools(tools) if tools is not None else None  # bare function objects too: the OpenAI array
    header.messages = _opt(record, "messages", list, where)
    header.model_file = _opt(record, "model_file", str, where)
    header.model_sha256 = _opt(record, "model_sha256", str, where)
    header.sampler = _opt(record, "sampler", dict, where) or {}
    header.description = _opt(record, "description", str, where) or ""
    header.expect = _opt(record, "expect", dict, where)
    header.extra = _opt(record, "extra", dict, where) or {}
    return header


def _opt(record: dict[str, Any], key: str, kind: type, where: str) -> Any:
    value = record.get(key)
    if value is not None and not isinstance(value, kind):
        expected = {str: "a string", list: "an array", dict: "an object"}[kind]
        raise TraceError(f'{where}: header field "{key}" must be {expected} or null, got {_kind(value)}')
    if kind is not str and value is not None and deeper_than(value, DOCUMENT_DEPTH):
        # tools and messages are documents: held to the depth the code that renders them can take
        raise TraceError(f'{where}: header field "{key}" nests deeper than {DOCUMENT_DEPTH} levels')
    return value


def _choice(record: dict[str, Any], key: str, allowed: tuple[str, ...], where: str, default: str) -> str:
    value = record.get(key, default)
    if value not in allowed:
        raise TraceError(f'{where}: header field "{key}" must be one of {", ".join(allowed)}, got {_shown(value)}')
    return value


def _ms(record: dict[str, Any], where: str) -> float | None:
    ms = record.get("ms")
    if ms is None:
        return None
    if isinstance(ms, bool) or not isinstance(ms, (int, float)):
        raise TraceError(f'{where}: "ms" must be a number of milliseconds or null, got {_kind(ms)}')
    try:
        value = float(ms)
    except OverflowError:  # an integer with hundreds of digits
        value = math.inf
    if not 0.0 <= value <= MAX_MS:  # also false for NaN and the infinities (1e400 reads as one)
        raise TraceError(
            f'{where}: "ms" must be milliseconds since the request, from 0 to 1e12 (about 31 years), '
            f"got {_number_text(ms)}"
        )
    return value


def _number_text(value: int | float) -> str:
    """A number from a trace as its JSON spelling (``NaN``, ``Infinity``; 1e400 was read as Infinity)."""
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            return "NaN"
        return ("" if value > 0 else "-") + "Infinity (or a number too large for a float, like 1e400)"
    return f"{value:g}" if isinstance(value, float) else _shown(value)


def _shown(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters: an error line stays one short line whatever the file holds."""
    try:
        text = repr(value)
    except RecursionError:  # a value nested deeper than repr() goes (a fuzzed or hostile file)
        text = f"a {type(value).__name__} nested too deep to show"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _add_record(trace: Trace, record: dict[str, Any], where: str) -> float | None:
    """Add one step, line or end record to ``trace``; return its ``ms``."""
    kind = record.get("type")
    if trace.end is not None:
        raise TraceError(f"{where}: a {_shown(kind)} record after the end record; expected nothing after it")
    if kind == "step":
        step = _step(record, where)
        trace.steps.append(step)
        return step.ms
    if kind == "line":
        line = record.get("line")
        if not isinstance(line, str):
            raise TraceError(f'{where}: a line record needs "line": the received SSE line as a string')
        trace.lines.append(TraceLine(_ms(record, where), line))
        return trace.lines[-1].ms
    if kind == "end":
        cause = record.get("cause")
        if cause not in END_CAUSES:
            raise TraceError(f'{where}: end record "cause" must be one of {", ".join(END_CAUSES)}, got {_shown(cause)}')
        detail = record.get("detail")
        if detail is not None and not isinstance(detail, str):
            raise TraceError(f'{where}: end record "detail" must be a string or null, got {_kind(detail)}')
        trace.end = TraceEnd(cause, _ms(record, where), detail)
        return trace.end.ms
    if kind == "header":
        raise TraceError(f"{where}: a second header record; expected step, line or end records after the header")
    raise TraceError(f"{where}: unknown record type {_shown(kind)}; expected one of: step, line, end")


def _step(record: dict[str, Any], where: str) -> TraceStep:
    text = record.get("text")
    b64 = record.get("b64")
    if (text is None) == (b64 is None):
        raise TraceError(f'{where}: a step record needs exactly one of "text" (UTF-8 string) or "b64" (base64 bytes)')
    if text is not None:
        if not isinstance(text, str):
            raise TraceError(f'{where}: step "text" must be a string, got {_kind(text)}')
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            raise TraceError(f'{where}: step "text" holds a lone surrogate; store such bytes as "b64"') from None
    else:
        if not isinstance(b64, str):
            raise TraceError(f'{where}: step "b64" must be a base64 string, got {_kind(b64)}')
        try:
            data = base64.b64decode(b64, validate=True)
        except (binascii.Error, ValueError):
            raise TraceError(f'{where}: step "b64" is not valid base64') from None
    tokens = record.get("tokens", ())
    if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, int) and not isinstance(t, bool) for t in tokens):
        raise TraceError(f'{where}: step "tokens" must be an array of integer token ids')
    return TraceStep(_ms(record, where), data, tuple(tokens))


__all__ = [
    "END_CAUSES",
    "KNOWN_SCHEMAS",
    "SOURCES",
    "TRACE_SCHEMA",
    "UNITS",
    "Trace",
    "TraceEnd",
    "TraceError",
    "TraceHeader",
    "TraceLine",
    "TraceStep",
    "TraceWriter",
    "is_trace_header_line",
    "parse_trace",
    "read_trace",
    "write_trace",
]
