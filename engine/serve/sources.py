"""What ``callscope serve`` plays: recorded streams, read once at start, each ready to be served any way asked.

A source is anything ``callscope replay`` reads (a trace, a shipped fixture by
name, a capture recording, a HAR file, an SSE dump...), a proxy session folder
(its turns, in order), or a folder of quirks (the quirks library). Each stream
in it becomes one :class:`Stream`:

- a *captured* stream (what a server sent: a capture trace, a proxy turn, a HAR
  or SSE dump) keeps its received lines and their protocol, so a client of that
  protocol gets those very bytes, with their timing; it also keeps what the
  stream meant (:class:`~callscope.engine.core.wire.WireChunk` s), and its atomic
  twin (the same stream with each call sent whole), to say it in another
  protocol or atomically;
- a *generated* stream (a model run's trace, a byte-prefix fixture) is what a
  streaming policy (``--policy``) emits from the generation: chunks only, said in
  whichever protocol the client asks.

A source picks the stream for a request (:meth:`Source.pick`): by the request's
``model`` when it names one, else the next in turn (a single stream every time).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from callscope.engine.capture.proxy.session import INDEX_NAME, is_session_folder, turn_number
from callscope.engine.core.wire import StreamIdentity, WireChunk
from callscope.engine.recordings.capture_trace import END_NOTE, analyze_capture_traces
from callscope.engine.recordings.replay import Recording, analyze_recording, load_recording
from callscope.engine.recordings.trace import Trace, TraceError
from callscope.engine.serve.errors import ServeError

#: Files a quirks folder may hold beside its recordings (its description, its expected outcomes).
_NOT_RECORDINGS = (".md", ".txt", ".json", ".toml", ".yaml", ".yml", ".py", ".csv")


@dataclass(slots=True)
class Stream:
    """One stream a source can serve."""

    name: str
    identity: StreamIdentity
    #: What the stream meant (captured) or what the policy emitted (generated), with their times.
    chunks: list[WireChunk]
    #: The same response with each call sent whole when it was complete (the atomic way).
    atomic: list[WireChunk]
    #: Captured streams: the protocol of the received lines (None: no protocol callscope knows), and the lines.
    protocol: str | None = None
    lines: list[tuple[float | None, str]] | None = None
    #: A quirk is served only as recorded: said in another protocol, it would not be the quirk any more.
    quirk: bool = False

    @property
    def captured(self) -> bool:
        return self.lines is not None


class SourceError(ValueError):
    """A source that cannot be read (the CLI exits 2 with this one line)."""


class Source:
    """Streams in order, picked by name or in turn."""

    def __init__(self, label: str, streams: list[Stream], *, by_name_only: bool = False) -> None:
        if not streams:
            raise SourceError(f"{label}: no stream to serve in it")
        self.label = label
        self.streams = streams
        self.by_name_only = by_name_only
        self._by_name = {s.name: s for s in streams}
        self._next = 0

    def names(self) -> list[str]:
        return [s.name for s in self.streams]

    def pick(self, model: str | None) -> Stream:
        """The stream ``model`` names; else the next in turn (wrapping round). A quirks folder needs the name."""
        if isinstance(model, str) and model in self._by_name:
            return self._by_name[model]
        if self.by_name_only:
            known = ", ".join(self.names())
            raise ServeError(404, f"the model {model!r} is none of the served quirks; ask one of: {known}",
                             code="model_not_found")
        stream = self.streams[self._next % len(self.streams)]
        self._next += 1
        return stream


# ---------------------------------------------------------------- reading a source


def load_source(path: str | os.PathLike[str], policy: str = "incremental") -> Source:
    """A recording (anything ``replay`` reads) or a proxy session folder; a :class:`SourceError` if it is neither."""
    path = Path(path)
    if path.is_dir():
        if not is_session_folder(path):
            raise SourceError(f"{path}: a folder, but not a proxy session folder (no {INDEX_NAME}, no turn-NNNN.jsonl)")
        return session_source(path, policy)
    return Source(str(path), recording_streams(path, policy))


def session_source(folder: Path, policy: str = "incremental") -> Source:
    """A proxy session folder's streamed turns, in turn order."""
    files = sorted((p for p in folder.glob("turn-*.jsonl") if turn_number(p) is not None), key=turn_number)
    streams = [s for p in files for s in recording_streams(p, policy)]
    return Source(str(folder), streams)


def quirks_source(folder: str | os.PathLike[str]) -> Source:
    """Every recording of a quirks folder (files that describe them are skipped), each named by its file."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SourceError(f"{folder}: not a folder of quirks")
    streams: list[Stream] = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if path.suffix.lower() in _NOT_RECORDINGS or path.name.startswith(("_", ".")):
            continue
        for stream in recording_streams(path):
            stream.quirk = True
            streams.append(stream)
    return Source(str(folder), streams, by_name_only=True)


def recording_streams(path: Path, policy: str = "incremental") -> list[Stream]:
    """Every stream of one recording file, named as ``replay --name`` names them (a file holding one: its stem)."""
    try:
        recording = load_recording(path)
        if recording.holds_captures:
            return [_captured(name, trace) for name, trace in _captures(recording)]
        analyses = analyze_recording(recording, policy)
        atomic = analyze_recording(recording, "atomic")
    except (TraceError, OSError) as exc:
        raise SourceError(str(exc)) from None
    names = recording.names() if len(analyses) > 1 else [Path(path).stem]
    return [Stream(name, a.identity, list(a.chunks), list(b.chunks)) for name, a, b in zip(names, analyses, atomic)]


def _captures(recording: Recording) -> list[tuple[str, Trace]]:
    if recording.captures is not None:
        return recording.captures
    assert recording.trace is not None
    return [(Path(recording.path).stem, recording.trace)]


def _captured(name: str, trace: Trace) -> Stream:
    """A stream a server sent: its lines as received, and what they meant (the first choice of an ``n > 1`` one)."""
    analysis = analyze_capture_traces(trace, name=name)[0]
    protocol = analysis.source.extra.get("protocol")
    lines = [(record.ms, record.line) for record in trace.lines if not record.line.startswith(END_NOTE)]
    return Stream(name, analysis.identity, list(analysis.chunks), list(analysis.baseline_chunks),
                  protocol if isinstance(protocol, str) and protocol != "unknown" else None, lines)
