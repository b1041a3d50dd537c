"""Where the inspector's analyses come from, and how to analyse the same source under another policy or parser.

Every source can be re-analysed (the policy picker, the compare pane): a file
is loaded again through :func:`callscope.engine.recordings.replay.load_analyses`; pasted text goes
through :func:`callscope.engine.recordings.replay_text.analyze_text`; a finished live run is
re-fed from its recorded bytes (:func:`reanalyze`). A source that carries
generated text (a trace, pasted text, a live run) can also be re-parsed with
another wire format's parser (``format_id``): the compare pane's "parsers"
view. Every failure a user can cause is a :class:`SourceError` with a
one-line message for the dialog.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from callscope.engine.analysis.analyzer import Analysis, Analyzer, SourceInfo
from callscope.engine.core.parse_model import ParseFailed
from callscope.engine.core.tools import ToolsError, parse_tools
from callscope.engine.formats import UnknownFormat, make_parser, recorded_thinking
from callscope.engine.inspector.parse_cursor import ParseCursor
from callscope.engine.policies import UnknownPolicy


class SourceError(Exception):
    """A source that cannot be analysed; the message is shown to the user as is."""


def known(trace: Any) -> bool:
    """The trace's format is registered (no template needs reading to replay it)."""
    from callscope.engine.formats import FORMAT_IDS

    return trace.header.format is None or trace.header.format in FORMAT_IDS


class Source(Protocol):
    label: str

    def analyses(self, policy: str, format_id: str | None = None) -> list[Analysis]: ...


@dataclass(slots=True)
class FileSource:
    """A trace or an imported fixture file (one analysis per stream it holds)."""

    path: str
    format_id: str | None = None

    @property
    def label(self) -> str:
        return Path(self.path).name

    def analyses(self, policy: str, format_id: str | None = None) -> list[Analysis]:
        from callscope.engine.recordings.replay import analyze_recording, load_recording
        from callscope.engine.templates.recorded import recorded_format

        try:
            recording = load_recording(self.path)
            chosen = format_id or self.format_id
            trace = recording.trace
            if trace is not None and trace.steps and (chosen == "auto" or chosen is None and not known(trace)):
                # a format derived from the template the trace names is derived again; auto: its parser
                chosen, _ = recorded_format(trace.header.format, trace.header.template, chosen)
            found = analyze_recording(recording, policy, chosen)
        except (ValueError, OSError) as exc:  # TraceError, FixtureError, UnknownFormat, UnknownPolicy are ValueErrors
            raise SourceError(str(exc)) from None
        if not found:
            raise SourceError(f"{self.path}: holds no stream to analyse")
        return found


@dataclass(slots=True)
class TextSource:
    """A pasted raw generation, fed to a format parser ``size`` characters per step."""

    text: str
    format_id: str
    tools: list[dict[str, Any]] | None = None
    unit: str = "char"
    size: int = 1
    rate: float | None = None
    name: str = "pasted"
    #: The prompt ended inside a reasoning block (True), did not (False), or may have ("auto": the text decides).
    thinking: bool | str = False

    @property
    def label(self) -> str:
        return f"{self.name} ({self.format_id})"

    def analyses(self, policy: str, format_id: str | None = None) -> list[Analysis]:
        from callscope.engine.recordings.replay_text import analyze_text

        if not self.text:
            raise SourceError("the pasted text is empty")
        try:
            return [
                analyze_text(self.text, format_id or self.format_id, policy, self.tools, self.unit, self.size, self.rate,
                             name=self.name, thinking=self.thinking)
            ]
        except (UnknownFormat, UnknownPolicy) as exc:
            raise SourceError(str(exc)) from None


@dataclass(slots=True)
class AnalysisSource:
    """Finished analyses held in memory (a live run); other policies re-feed their recorded steps."""

    items: list[Analysis]
    tools: list[dict[str, Any]] | None = None
    label: str = "run"
    _by_policy: dict[tuple[str, str | None], list[Analysis]] = field(default_factory=dict)

    def analyses(self, policy: str, format_id: str | None = None) -> list[Analysis]:
        if not self.items:
            raise SourceError("nothing recorded yet")
        if format_id == self.items[0].source.format:
            format_id = None
        if self.items[0].source.policy == policy and format_id is None:
            return self.items
        key = (policy, format_id)
        if key not in self._by_policy:
            self._by_policy[key] = [reanalyze(a, policy, self.tools, format_id) for a in self.items]
        return self._by_policy[key]


def parse_tools_text(text: str) -> list[dict[str, Any]] | None:
    """The tools JSON a user typed (None when blank); a :class:`SourceError` names what is wrong."""
    if not text.strip():
        return None
    try:
        return parse_tools(text, "tools JSON")
    except ToolsError as exc:
        raise SourceError(str(exc)) from None


def carries_text(analysis: Analysis) -> bool:
    """True when the steps hold generated text a parser can read again (not parses, not a server's chunks)."""
    return (
        analysis.source.format is not None
        and analysis.source.kind != "capture"
        and any(s.data for s in analysis.steps)
    )


def reanalyze(
    analysis: Analysis, policy: str, tools: list[dict[str, Any]] | None = None, format_id: str | None = None
) -> Analysis:
    """The same stream under ``policy``: re-fed as bytes when it has them, else as its recorded parses.

    ``format_id``: re-parse the bytes with another wire format's parser (only a
    stream that :func:`carries_text` can be).
    """
    fmt = format_id or analysis.source.format
    extra = dict(analysis.source.extra)
    if format_id is not None and format_id != analysis.source.format:
        if not carries_text(analysis):
            raise SourceError(f"{analysis.name}: this stream carries parses, not text; it cannot be parsed as {format_id}")
        extra.setdefault("recorded_format", analysis.source.format)
    info = SourceInfo(analysis.source.kind, analysis.source.path, fmt, policy, extra)
    try:
        if fmt is not None and any(s.data for s in analysis.steps):
            thinking = recorded_thinking(analysis.source.extra.get("thinking"))  # the prompt opened (or may have) reasoning
            parser = make_parser(fmt, tools, thinking=thinking)
            analyzer = Analyzer(analysis.name, info, analysis.unit, analysis.timed, parser)
            for record in analysis.steps:
                analyzer.feed_bytes(record.data, record.ms, record.tokens, record.step)
            return analyzer.finish(analysis.finish_cause, truncated=analysis.truncated)
        analyzer = Analyzer(analysis.name, info, analysis.unit, analysis.timed, None)
        cursor = ParseCursor(analysis)
        failures: dict[int, str] = {}
        for step, event in analysis.parse_events[: analysis.terminal_events_from]:
            if isinstance(event, ParseFailed):
                failures.setdefault(step, event.message)
        for record in analysis.steps:
            if record.step in failures:
                analyzer.feed_parse(ParseFailed(failures[record.step]), record.ms, record.step)
            else:
                analyzer.feed_parse(cursor.at(record.step), record.ms, record.step)
        return analyzer.finish(analysis.finish_cause, terminal=analysis.terminal, truncated=analysis.truncated)
    except (UnknownFormat, UnknownPolicy) as exc:
        raise SourceError(str(exc)) from None


def default_fixture() -> str | None:
    """A shipped recording to open when no model can run (the first trace, else the first fixture)."""
    from callscope.engine.core.shipped import shipped_fixtures

    files = shipped_fixtures()
    for suffix in (".jsonl", ".trace", ".txt"):
        for p in files:
            if p.suffix == suffix:
                return str(p)
    return str(files[0]) if files else None
