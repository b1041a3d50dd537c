"""Where the files that ship with callscope are: the one place that knows.

Templates, the style, tool presets and the fixture library install as the
package data ``callscope.resources`` and ``callscope.fixtures``. Found through
:mod:`importlib.resources`, they are the same files in a checkout (an
editable install maps the packages onto the top-level folders), in a built
wheel and in a ``pipx`` venv, whatever the working directory is. Nothing
else in callscope builds a path from ``__file__``.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

#: Suffixes a shipped recording may have, in the order a bare name tries them.
RECORDING_SUFFIXES = (".jsonl", ".txt", ".trace", ".sse")


def _package_dir(package: str) -> Path:
    # Both data packages are regular packages on a file system (never zipped: pip installs
    # wheels unpacked), so files() is a real directory.
    return Path(str(resources.files(package)))


def resources_dir() -> Path:
    """The shipped ``resources/`` folder (style, chat templates, tool presets)."""
    return _package_dir("callscope.resources")


def fixtures_dir() -> Path:
    """The shipped fixture library (``fixtures/``)."""
    return _package_dir("callscope.fixtures")


def resource(*parts: str) -> Path:
    """A shipped resource file, e.g. ``resource("tools", "default.json")``."""
    return resources_dir().joinpath(*parts)


def shipped_fixtures() -> list[Path]:
    """Every recording in the fixture library, sorted by path (READMEs and package files left out)."""
    root = fixtures_dir()
    return sorted(
        p for p in root.rglob("*")
        if p.is_file() and p.suffix in RECORDING_SUFFIXES and "__pycache__" not in p.parts
    )


def fixture_names() -> dict[str, Path]:
    """Each shipped recording by its bare name (``headline_701_tokens``) and by its path in the
    library without suffix (``cases/empty_arguments``); the first file wins a clash of bare names."""
    root = fixtures_dir()
    names: dict[str, Path] = {}
    for path in shipped_fixtures():
        names.setdefault(path.relative_to(root).with_suffix("").as_posix(), path)
    for path in shipped_fixtures():
        names.setdefault(path.stem, path)
    return names


def resolve_recording(name: str) -> str:
    """A user-named recording: the file itself when it exists, else the shipped fixture of that
    name (``headline_701_tokens``, ``formats/hermes_single``, with or without its suffix, with or
    without a leading ``fixtures/``). Anything else is returned unchanged, so the caller's own
    read reports "no such file" with the name the user typed."""
    if Path(name).exists() or name == "-":
        return name
    key = name.removeprefix("fixtures/")
    for suffix in RECORDING_SUFFIXES:
        if key.endswith(suffix):
            key = key[: -len(suffix)]
            break
    found = fixture_names().get(key)
    return str(found) if found is not None else name
