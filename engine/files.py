"""Reading user-named files with failures a person can act on (one line, no traceback)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def os_error_reason(exc: OSError) -> str:
    """``no such file`` / ``is a directory`` / ``permission denied`` / the system's own words."""
    if isinstance(exc, FileNotFoundError):
        return "no such file"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    if isinstance(exc, PermissionError):
        return "permission denied"
    return f"cannot read ({exc.strerror or exc})"


def read_bytes(path: str | os.PathLike[str], error: type[Exception]) -> bytes:
    """The file's bytes, or ``error("<path>: <why>")``."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise error(f"{path}: {os_error_reason(exc)}") from None


def read_utf8(path: str | os.PathLike[str], error: type[Exception], what: str = "a text file") -> str:
    """The file as UTF-8 text, or ``error("<path>: <why>")`` (naming the first bad byte)."""
    raw = read_bytes(path, error)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start}); expected {what}") from None


def parse_json(text: str, origin: str, error: type[Exception]) -> Any:
    """``text`` as JSON, or ``error("<origin>: not JSON (line L, column C: why)")``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{origin}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None


def read_json(path: str | os.PathLike[str], error: type[Exception], what: str = "a JSON file") -> Any:
    """A user-named JSON file, any failure as one ``error`` line naming the path."""
    return parse_json(read_utf8(path, error, what), str(path), error)
