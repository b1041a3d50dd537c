"""Reading user-named files with failures a person can act on (one line, no traceback).

Every read is bounded: only regular files are read (``/dev/zero``, a FIFO or a
terminal would never end or would block), and never more than a cap, read in
chunks so an oversized input is refused after ``cap + 1`` bytes rather than
after it has filled memory. The caps are module attributes, read at call time,
so a test can lower them:

* :data:`RECORDING_CAP` (1 GiB): traces, fixture files, raw generations. A
  100,000-step trace is about 10 MB, so the cap leaves a hundredfold margin.
* :data:`DOCUMENT_CAP` (16 MiB): JSON documents and templates a person writes
  (tools, messages, capture requests, chat templates).

Text must be UTF-8: a leading UTF-8 byte-order mark is dropped (editors on
Windows add one), and a UTF-16 (or UTF-32) file is named as such instead of
failing on its first NUL byte. JSON goes through :mod:`callscope.engine.core.json_text`, so a
deeply nested document parses instead of raising ``RecursionError``.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Callable
from typing import IO, Any

from callscope.engine.core.json_text import DOCUMENT_DEPTH, JSONLimitError, loads

#: Most bytes read from a trace, a fixture file or a raw generation.
RECORDING_CAP = 1 << 30
#: Most bytes read from a JSON document or template a person writes.
DOCUMENT_CAP = 16 << 20
#: What a reader raises on failure: called with the whole one-line message (an exception class will do).
ErrorFactory = Callable[[str], Exception]
#: Bytes per read while reading up to a cap.
_CHUNK = 1 << 20

UTF8_BOM = b"\xef\xbb\xbf"
_UTF32_BOMS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def os_error_reason(exc: OSError) -> str:
    """``no such file`` / ``is a directory`` / ``permission denied`` / the system's own words."""
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return f"cannot read ({exc.strerror or exc})"


def size_text(count: int) -> str:
    """``16 MiB``, ``1 GiB``, ``512 bytes``: a cap as a person reads it."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if count >= 1 << shift and count % (1 << shift) == 0:
            return f"{count >> shift} {unit}"
    return f"{count:,} bytes"


def _not_regular(mode: int) -> str:
    """Why a file that is not a regular file is refused, in words."""
    if stat.S_ISDIR(mode):
        return "is a directory"
    kinds = (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
    )
    kind = next((name for test, name in kinds if test(mode)), "not a plain file")
    return f"not a regular file ({kind}); expected a file on disk"


def _too_large(cap: int, size: int | None = None) -> str:
    actual = f"{size:,} bytes, " if size is not None else ""
    return f"{actual}larger than {size_text(cap)}, the most callscope reads from one input"


def read_capped(stream: IO[bytes], cap: int, origin: str, error: ErrorFactory) -> bytes:
    """At most ``cap`` bytes from ``stream``, read in chunks; ``error`` as soon as there is one more."""
    parts: list[bytes] = []
    total = 0
    while True:
        piece = stream.read(min(_CHUNK, cap + 1 - total))
        if not piece:
            return b"".join(parts)
        parts.append(piece)
        total += len(piece)
        if total > cap:
            raise error(f"{origin}: {_too_large(cap)}")


def read_bytes(path: str | os.PathLike[str], error: ErrorFactory, cap: int | None = None) -> bytes:
    """A regular file's bytes, at most ``cap`` (default :data:`RECORDING_CAP`), or ``error("<path>: <why>")``.

    The file is opened non-blocking, so naming a FIFO is refused at once
    instead of waiting for a writer, and checked with ``fstat`` before any read.
    """
    cap = RECORDING_CAP if cap is None else cap
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise error(f"{path}: {os_error_reason(exc)}") from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise error(f"{path}: {os_error_reason(exc)}") from None
    refusal = _not_regular(info.st_mode) if not stat.S_ISREG(info.st_mode) else None
    if refusal is None and info.st_size > cap:
        refusal = _too_large(cap, info.st_size)
    if refusal is not None:
        os.close(fd)
        raise error(f"{path}: {refusal}")
    with open(fd, "rb", buffering=0) as stream:  # owns fd from here
        try:
            return read_capped(stream, cap, str(path), error)
        except OSError as exc:
            raise error(f"{path}: {os_error_reason(exc)}") from None


def read_stdin(error: ErrorFactory, cap: int | None = None) -> bytes:
    """Standard input's bytes, at most ``cap`` (default :data:`RECORDING_CAP`).

    Read as bytes, so the locale's text decoding (which turns bad bytes into
    lone surrogates under a C locale) never sees them.
    """
    if sys.stdin is None:
        raise error("<stdin>: standard input is closed")
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # replaced by a text stream (embedding, tests): take its text as it is
        return sys.stdin.read().encode("utf-8", "surrogateescape")
    try:
        return read_capped(stream, RECORDING_CAP if cap is None else cap, "<stdin>", error)
    except OSError as exc:
        raise error(f"<stdin>: {os_error_reason(exc)}") from None


def utf16_name(raw: bytes) -> str | None:
    """``UTF-16`` or ``UTF-32`` when ``raw`` starts like text in that encoding (a byte-order mark,
    or NUL bytes between ASCII characters), else None."""
    if raw.startswith(_UTF32_BOMS):
        return "UTF-32"
    if raw.startswith(_UTF16_BOMS):
        return "UTF-16"
    head = raw[:512]
    if len(head) >= 4 and b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        for zeros, chars in ((odd, even), (even, odd)):
            if zeros.count(0) >= 0.9 * len(zeros) and chars.count(0) <= 0.1 * len(chars):
                return "UTF-16"
    return None


def strip_bom(raw: bytes, origin: str, error: ErrorFactory) -> bytes:
    """``raw`` without a leading UTF-8 byte-order mark; ``error`` naming UTF-16 or UTF-32 text."""
    if raw.startswith(UTF8_BOM):
        return raw[len(UTF8_BOM) :]
    encoding = utf16_name(raw)
    if encoding is not None:
        raise error(f"{origin}: not UTF-8 text, looks like {encoding}; save it as UTF-8")
    return raw


def decode_utf8(raw: bytes, origin: str, error: ErrorFactory, what: str = "a text file") -> str:
    """``raw`` as UTF-8 text (a leading BOM dropped), or ``error("<origin>: <why>")`` naming the first bad byte."""
    body = strip_bom(raw, origin, error)
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + len(raw) - len(body)
        raise error(f"{origin}: not UTF-8 text (byte {offset}); expected {what}") from None


def read_utf8(
    path: str | os.PathLike[str], error: ErrorFactory, what: str = "a text file", cap: int | None = None
) -> str:
    """The file as UTF-8 text, or ``error("<path>: <why>")`` (naming the first bad byte)."""
    return decode_utf8(read_bytes(path, error, cap), str(path), error, what)


def read_document(path: str | os.PathLike[str], error: ErrorFactory, what: str = "a JSON file") -> str:
    """A document a person writes (tools, messages, a request, a template): UTF-8, at most :data:`DOCUMENT_CAP`."""
    return read_utf8(path, error, what, DOCUMENT_CAP)


def parse_json(text: str, origin: str, error: ErrorFactory, max_depth: int = DOCUMENT_DEPTH) -> Any:
    """A JSON document, or ``error("<origin>: not JSON (line L, column C: why)")``.

    Documents (tools, messages, requests) are nested at most ``max_depth``
    levels (:data:`callscope.engine.core.json_text.DOCUMENT_DEPTH`): deeper is refused in one line, not
    left to raise ``RecursionError`` in the code that renders or sends them.
    """
    try:
        return loads(text, max_depth)
    except json.JSONDecodeError as exc:
        what = "JSON past what callscope reads" if isinstance(exc, JSONLimitError) else "not JSON"
        raise error(f"{origin}: {what} (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None


def read_json(path: str | os.PathLike[str], error: ErrorFactory, what: str = "a JSON file") -> Any:
    """A user-named JSON file, any failure as one ``error`` line naming the path."""
    return parse_json(read_document(path, error, what), str(path), error)
