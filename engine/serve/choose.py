"""What to serve, from what a user chose: a recording (or a shipped fixture's name, or a session folder), or quirks.

One place for the command line (``callscope serve``) and the window's Serve
dialog, so both read the same sources and refuse the same mistakes (each a
one-line :class:`~.sources.SourceError`).
"""

from __future__ import annotations

import math
from pathlib import Path

from callscope.engine.core.shipped import fixtures_dir, resolve_recording
from callscope.engine.serve.reply import RecordingReplier
from callscope.engine.serve.sources import SourceError, load_source, quirks_source

#: The quirks library's folder in the shipped fixtures.
QUIRKS = "quirks"


def parse_speed(text: str) -> float | None:
    """``--speed`` (and the dialog's speed field): a factor > 0, or ``max`` (None: every piece at once).

    Anything else is a ``ValueError``; each front end words it its own way, so the check itself is one.
    """
    if text.strip().lower() == "max":
        return None
    try:
        speed = float(text)
    except ValueError:
        speed = math.nan
    if not math.isfinite(speed) or speed <= 0:
        raise ValueError(f"not a number > 0 or max: {text!r}")
    return speed


def quirks_folder() -> Path:
    return fixtures_dir() / QUIRKS


def serve_recording(name: str, policy: str | None = None) -> RecordingReplier:
    """A recording (a path, or a shipped fixture's name) or a proxy session folder, served with ``policy``.

    A stream a server sent (a capture, a HAR, a session's turns) was streamed the way that server chose: it is
    served as recorded, or with ``atomic`` each call whole; another policy is refused.
    """
    source = load_source(resolve_recording(name), policy or "incremental")
    if policy not in (None, "incremental", "atomic") and all(s.captured for s in source.streams):
        raise SourceError(f"--policy {policy}: {source.label} holds streams a server sent (it chose how its calls "
                          "went out); serve them as recorded, or with --policy atomic (each call whole)")
    return RecordingReplier(source, atomic=policy == "atomic")


def serve_quirks(folder: str | Path | None = None) -> RecordingReplier:
    """The quirks library (or the quirks in ``folder``): the request's ``model`` names the quirk."""
    return RecordingReplier(quirks_source(folder or quirks_folder()))
