"""What ``callscope check PATH...`` names: files, folders, proxy session folders, globs, shipped names.

A file is taken as named, whatever its suffix (the reader tells its kind by content). A folder
is walked (sorted, hidden entries skipped) for files whose suffix a recording has
(:data:`RECORDING_SUFFIXES`); a proxy session folder is a folder like any other, less its
``turns.jsonl`` index (a list of turns, not a recording). A pattern with ``*``, ``?`` or
``[`` is expanded (``**`` crosses folders). A shipped fixture's name (``headline_701_tokens``)
works as in ``callscope replay``. A name that matches nothing is not an error of the run: it
becomes a :class:`Missing` entry, listed with its reason like an unreadable file.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from callscope.engine.capture.proxy.session import INDEX_NAME as SESSION_INDEX
from callscope.engine.core.shipped import resolve_recording

#: Suffixes a folder walk picks up: callscope traces and fixtures, SSE dumps, HAR and mitmproxy flow files.
RECORDING_SUFFIXES = frozenset({".jsonl", ".trace", ".txt", ".sse", ".har", ".mitm", ".flow", ".flows"})
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Missing:
    """A PATH argument that names no file: shown with its reason, never a stop."""

    path: str
    reason: str


def expand(arguments: Iterable[str]) -> Iterator[str | Missing]:
    """Every recording file the arguments name, each once, in the order named (folders sorted)."""
    seen: set[str] = set()
    for argument in arguments:
        for found in _expand_one(argument):
            if isinstance(found, Missing):
                yield found
                continue
            key = os.path.normpath(found)
            if key not in seen:
                seen.add(key)
                yield found


def _expand_one(argument: str) -> Iterator[str | Missing]:
    if os.path.isdir(argument):
        yield from walk(argument)
        return
    if os.path.lexists(argument):
        yield argument  # a file (or a FIFO, a dangling link...): the reader says why it cannot be read
        return
    if _GLOB_CHARS & set(argument):
        matches = sorted(glob.glob(argument, recursive=True))
        if not matches:
            yield Missing(argument, "no file matches this pattern")
        for match in matches:
            yield from walk(match) if os.path.isdir(match) else iter([match])
        return
    shipped = resolve_recording(argument)
    if shipped != argument:
        yield shipped
        return
    yield Missing(argument, "no such file or folder")


def walk(folder: str) -> Iterator[str]:
    """The recordings under ``folder``, sorted by path, hidden files and folders left out."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith(".") or name == SESSION_INDEX or Path(name).suffix.lower() not in RECORDING_SUFFIXES:
                continue  # a session folder's index lists its turns; each turn is its own trace
            yield os.path.join(root, name)
