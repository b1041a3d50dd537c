"""The format of a recording, from the chat template it names: ``replay --format auto``, derived formats again.

A trace names the template its generation answered (its header's ``template``):
a shipped one (``hermes.jinja``, ``families/name_tags.jinja``, or the built-in
name ``run`` records, ``built-in hermes (hermes.jinja)``) or a file. From it,
:func:`recorded_format` gives the format to read the recording with:

* ``--format auto``: the template's parser, by the one detection
  (:func:`~callscope.engine.templates.format_choice.choose_format`);
* a recording whose format is one derived from its template (``derived_...``,
  unknown until the template is analysed again): that template analysed, so the
  recording replays in a new process exactly as it was recorded;
* otherwise the recorded format, as it is.
"""

from __future__ import annotations

import re
from pathlib import Path

from callscope.engine.core.errors import DecodeError
from callscope.engine.core.shipped import resource
from callscope.engine.formats import FORMAT_IDS
from callscope.engine.templates.chat import ChatTemplate, load_template_file
from callscope.engine.templates.format_choice import FormatChoice, choose_format

AUTO = "auto"
_BUILT_IN = re.compile(r"built-in [a-z0-9_]+ \((?P<file>[^()]+)\)$")


class RecordedFormatError(ValueError):
    """The recording's format cannot be had from what it names (one line, for the CLI and the window)."""


def template_named(name: str | None) -> ChatTemplate | None:
    """The template a recording names: a shipped one (by its path under ``templates/``), or a file; else None."""
    if not name:
        return None
    built_in = _BUILT_IN.match(name)
    candidates = [resource("templates", built_in.group("file"))] if built_in else []
    candidates += [resource("templates", *Path(name).parts), Path(name)]
    for path in candidates:
        if path.is_file():
            try:
                return load_template_file(path)
            except DecodeError:
                return None
    return None


def recorded_format(
    recorded: str | None, template_name: str | None, requested: str | None = None
) -> tuple[str | None, FormatChoice | None]:
    """The format to read a recording with, and the template's choice when one was made (see the module docstring).

    ``recorded``: the recording's own format; ``requested``: ``--format`` (None, ``auto`` or an id).
    """
    if requested is not None and requested != AUTO:
        return requested, None
    if requested == AUTO:
        template = template_named(template_name)
        if template is None:
            named = f"names {template_name!r}, which is no shipped template or file" if template_name else "names none"
            raise RecordedFormatError(f"--format auto needs the recording's chat template; this recording {named}")
        choice = choose_format(template)
        return choice.format_id, choice
    if recorded is None or recorded in FORMAT_IDS:
        return recorded, None
    template = template_named(template_name)
    if template is None:
        return recorded, None  # an unknown format: whoever reads it says so
    choice = choose_format(template)
    return choice.format_id, choice


__all__ = ["AUTO", "RecordedFormatError", "recorded_format", "template_named"]
