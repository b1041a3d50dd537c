"""Analysing a raw generation fed in steps: what ``callscope replay-text`` and the GUI's Paste source do."""

from __future__ import annotations

from typing import Any

from callscope.engine.analysis.analyzer import Analysis, Analyzer, SourceInfo
from callscope.engine.formats import make_parser
from callscope.engine.recordings.text_source import split_steps, step_ms


def analyze_text(
    text: str,
    format_id: str,
    policy: str = "incremental",
    tools: list[dict[str, Any]] | None = None,
    unit: str = "char",
    size: int = 1,
    rate: float | None = None,
    name: str = "text",
    path: str | None = None,
    cause: str = "stop",
    thinking: bool | str = False,
) -> Analysis:
    """Feed ``text`` ``size`` chars (or bytes) per step through the format's parser and ``policy``.

    ``thinking``: the generation starts inside reasoning (True), outside (False), or the
    text decides (``"auto"``, :mod:`~callscope.engine.formats._kit.thinking_auto`).
    """
    analyzer = Analyzer(
        name,
        SourceInfo("text", path, format_id, policy, {"thinking": thinking} if thinking else {}),
        unit,
        rate is not None,
        make_parser(format_id, tools, thinking=thinking),
    )
    for number, piece in enumerate(split_steps(text, unit, size), start=1):
        analyzer.feed_bytes(piece, step_ms(number, rate))
    return analyzer.finish(cause)
