"""The shipped fixture library as a reader browses it: by folder, each recording with what it demonstrates.

The window's File > Fixtures menu is built from :func:`library`; every entry
carries the recording's own description (a trace header's ``description``, a
byte-prefix file's ``# @description`` lines), so a user can pick one without
opening it first. Only the first line of a trace is read, and only the comment
lines of a fixture file: listing the library stays cheap.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from callscope.engine.core.shipped import fixtures_dir, shipped_fixtures

#: What each folder of the library holds, for its menu title (``""``: the library's top level).
FOLDERS: dict[str, str] = {
    "": "the headline run",
    "cases": "edge cases a correct parser must get right",
    "formats": "every wire format: one call, and two parallel calls",
    "prefix": "failure classes, recorded as parses (llama.cpp byte-prefix fixtures)",
    "quirks": "streams real servers send, each as real clients read it",
}
#: A trace header is one line; a longer first line is not read for a description.
_HEADER_LIMIT = 1 << 20
#: Most comment lines read from a byte-prefix fixture file for its descriptions.
_COMMENT_LINES = 200


@dataclass(frozen=True, slots=True)
class LibraryEntry:
    """One shipped recording: where it sits in the library, its name, and what it demonstrates."""

    folder: str  # "" for the library's top level
    name: str  # the file name without suffix; File > Open and ``callscope gui`` accept it
    path: Path
    description: str


def library() -> list[LibraryEntry]:
    """Every shipped recording, top level first, then by folder and name."""
    root = fixtures_dir()
    entries = []
    for path in shipped_fixtures():
        relative = path.relative_to(root)
        folder = relative.parent.as_posix() if relative.parent != Path(".") else ""
        entries.append(LibraryEntry(folder, path.stem, path, describe(path)))
    return sorted(entries, key=lambda e: (e.folder != "", e.folder, e.name))


def by_folder(entries: list[LibraryEntry]) -> dict[str, list[LibraryEntry]]:
    """``entries`` grouped by folder, in their order."""
    groups: dict[str, list[LibraryEntry]] = {}
    for entry in entries:
        groups.setdefault(entry.folder, []).append(entry)
    return groups


def describe(path: Path) -> str:
    """What a shipped recording demonstrates, in its own words ("" when it says nothing)."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            if path.suffix == ".txt":
                return _fixture_descriptions(itertools.islice(handle, _COMMENT_LINES))
            header = json.loads(handle.readline(_HEADER_LIMIT))
    except (OSError, ValueError, UnicodeDecodeError):
        return ""
    description = header.get("description") if isinstance(header, dict) else None
    return description if isinstance(description, str) else ""


def _fixture_descriptions(lines: Iterable[str]) -> str:
    """A byte-prefix file's ``# @description NAME TEXT`` lines, as ``NAME: TEXT`` one per line."""
    found = []
    for line in lines:
        if line.startswith("# @description "):
            name, _, text = line.removeprefix("# @description ").strip().partition(" ")
            found.append(f"{name}: {text}" if text else name)
    return "\n".join(found)
