"""What the proxy keeps of a streamed body: its lines, stamped with the read that completed them, secrets masked.

The client gets the upstream's bytes untouched (still compressed, if they were);
the recording gets what an SSE reader would read: the body decoded
(``gzip``/``deflate``, and ``br``/``zstd`` when their modules are installed),
split into lines (CR, LF and CRLF end a line; blank lines kept, they end
events), each stamped with the time of the read that brought its line end,
exactly as the capture client stamps them
(:mod:`callscope.engine.capture.client`), so a proxied turn and a captured one
are judged alike.
"""

from __future__ import annotations

import codecs
import importlib
import zlib
from typing import Protocol

from callscope.engine.capture.client import Line
from callscope.engine.capture.redact import MASK, Redactor


class _Decompressor(Protocol):
    def decompress(self, data: bytes) -> bytes: ...


class BodyDecoder:
    """A response body's ``Content-Encoding`` undone, incrementally; ``error`` says why it cannot be."""

    def __init__(self, encoding: str | None) -> None:
        self.encoding = (encoding or "identity").strip().lower()
        self.error: str | None = None
        self._steps: list[_Decompressor] = []
        for coding in reversed([c.strip() for c in self.encoding.split(",") if c.strip()]):
            step = _decompressor(coding)
            if step is None and coding != "identity":
                self.error = f"the response is {coding}-encoded, which callscope cannot decode here; not recorded"
                return
            if step is not None:
                self._steps.append(step)

    def decode(self, data: bytes) -> bytes:
        for step in self._steps:
            data = step.decompress(data)
        return data


def _decompressor(coding: str) -> _Decompressor | None:
    if coding in ("gzip", "x-gzip"):
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    if coding == "deflate":
        return _Deflate()
    for module_name, name in (("brotli", "br"), ("zstandard", "zstd")):
        if coding == name:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                return None
            return module.Decompressor() if name == "br" else module.ZstdDecompressor().decompressobj()
    return None


class _Deflate:
    """``deflate`` as servers send it: zlib-wrapped, or (some servers) raw; told apart by the first bytes."""

    def __init__(self) -> None:
        self._inner: zlib._Decompress | None = None

    def decompress(self, data: bytes) -> bytes:
        if self._inner is None:
            if not data:
                return b""
            wrapped = len(data) >= 2 and (data[0] & 0x0F) == 8 and ((data[0] << 8) | data[1]) % 31 == 0
            self._inner = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        return self._inner.decompress(data)


class LineStamper:
    """Decoded body bytes in (one call per network read), stamped lines out; :meth:`rest` keeps a cut last line.

    Per read, not per line: one incremental UTF-8 decode (a character split over reads is
    joined), one split, one look for each secret; a line split over reads is joined once.
    """

    __slots__ = ("secrets", "_decode", "_tail", "_skip_lf", "cut_bytes")

    def __init__(self, redactor: Redactor) -> None:
        self.secrets = redactor.secrets
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self._tail: list[str] = []  # the unfinished line's pieces
        self._skip_lf = False  # the last read ended in CR: an LF opening this one ends the same line
        self.cut_bytes = 0

    def feed(self, ms: float, data: bytes) -> list[Line]:
        text = self._decode(data)
        if self._skip_lf:
            self._skip_lf = False
            if text[:1] == "\n":
                text = text[1:]
        if not text:
            return []
        if "\r" in text:
            self._skip_lf = text[-1] == "\r"
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        tail = self._tail
        if "\n" not in text:
            tail.append(text)
            return []
        parts = text.split("\n")
        last = parts.pop()
        if tail:
            tail.append(parts[0])
            parts[0] = "".join(tail)
            tail.clear()
        if last:
            tail.append(last)
        if self.secrets and any(secret in text or secret in parts[0] for secret in self.secrets):
            parts = [self._masked(part) for part in parts]
        return [(ms, part) for part in parts]

    def rest(self, ms: float) -> list[Line]:
        """The text after the last line end (a stream cut mid-line, or a last line without its newline)."""
        text = "".join(self._tail) + self._decode(b"", True)
        self._tail.clear()
        if not text:
            return []
        self.cut_bytes = len(text.encode("utf-8"))
        return [(ms, self._masked(text))]

    def _masked(self, line: str) -> str:
        for secret in self.secrets:
            if secret in line:
                line = line.replace(secret, MASK)
        return line
