"""A corpus of recordings made from the shipped library: what ``callscope bench check`` and the corpus tests check.

``python -m callscope.benchmarks.corpus OUT --count 10000`` writes, deterministically (``--seed``):

- **traces** (35%): the shipped text traces (one per wire format, single and parallel calls, the
  cases, the headline), re-timed to between 8 and 120 steps a second;
- **proxy session folders** (40%): ``session-NNN/turn-NNNN.jsonl`` capture traces plus their
  ``turns.jsonl`` index, 50 turns a session: a quarter are the shipped capture traces as recorded
  (the quirks library: what real servers send, in every protocol), the rest one of those streams served as Chat
  Completions chunks by one of four servers that differ the way real ones do: a clean incremental
  one, one that repeats each call's id and name on every fragment (``id-repeated``,
  ``name-repeated``), one that sends each call whole after the silence of its generation
  (``atomic-tool-call``), one that leaves ``index`` out (``index-missing``);
- **SSE dumps** (10%, untimed, like ``curl -N``) and **HAR files** (10%, one to three streams each);
- **byte-prefix fixture files** (5%): the shipped ones.

Nothing here is committed data: the corpus is made in a second or two where it is needed.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Share of each kind in a generated corpus (the rest of the rounding goes to traces).
SHARES = {"capture": 0.40, "sse": 0.10, "har": 0.10, "fixture": 0.05}
TURNS_PER_SESSION = 50
#: When every generated capture says it was recorded: a corpus is the same bytes for the same seed.
CREATED = "2026-01-01T00:00:00Z"
#: Share of proxied turns that are a shipped capture trace as recorded (the quirks library, when it ships).
SHIPPED_CAPTURES = 0.25


@dataclass(frozen=True, slots=True)
class Server:
    """A server the corpus pretends recorded its streams: where, which model, how it streams."""

    style: str  # clean | repeats | atomic | no-index
    url: str
    model: str


SERVERS = (
    Server("clean", "http://10.0.0.11:8000/v1/chat/completions", "Qwen/Qwen3-8B"),
    Server("repeats", "http://10.0.0.12:8080/v1/chat/completions", "qwen3-8b-q4_k_m.gguf"),
    Server("atomic", "http://10.0.0.13:11434/v1/chat/completions", "gpt-oss:20b"),
    Server("no-index", "http://10.0.0.14:30000/v1/chat/completions", "meta-llama/Llama-3.1-8B-Instruct"),
)


@dataclass(slots=True)
class Source:
    """One shipped trace, read once: its trace (to re-time) and the chunks an incremental server sends."""

    name: str
    trace: Any
    events: list[tuple[float, dict[str, Any]]]  # (ms, chat.completion.chunk) as a clean server sends them


def load_sources() -> tuple[list[Source], list[Path], list[Path]]:
    """The shipped text traces (analysed once), the shipped capture traces (the quirks library: streams real
    servers send, in every protocol) and the shipped byte-prefix fixture files."""
    from callscope.engine.core.shipped import shipped_fixtures
    from callscope.engine.core.wire import chunk_json
    from callscope.engine.recordings.replay import FIXTURE, TRACE, detect_kind, load_recording
    from callscope.engine.recordings.trace_io import analyze_trace
    from callscope.engine.templates.trace_format import trace_format

    sources: list[Source] = []
    captures: list[Path] = []
    fixtures: list[Path] = []
    for path in shipped_fixtures():
        kind = detect_kind(path.read_bytes())
        if kind == FIXTURE:
            fixtures.append(path)
        elif kind == TRACE:
            recording = load_recording(path)
            trace = recording.trace
            if recording.holds_captures:
                captures.append(path)
                continue
            format_id, _why = trace_format(recording, None)  # a derived format is derived again from its template
            analysis = analyze_trace(trace, "incremental", format_id, path.stem)
            events = [(c.ms or 0.0, chunk_json(c, analysis.identity)) for c in analysis.chunks]
            sources.append(Source(path.stem, trace, events))
    return sources, captures, fixtures


# ------------------------------------------------------------------ how each server streams


def served(events: list[tuple[float, dict[str, Any]]], server: Server, speed: float) -> list[tuple[float, dict]]:
    """The clean chunks as ``server`` sends them, times scaled by ``speed`` (2.0: twice as fast)."""
    out = [(ms / speed, json.loads(json.dumps(chunk))) for ms, chunk in events]
    for _, chunk in out:
        chunk["model"] = server.model
    if server.style == "repeats":
        _repeat_headers(out)
    elif server.style == "atomic":
        out = _atomic(out)
    elif server.style == "no-index":
        for _, chunk in out:
            for call in _calls(chunk):
                call.pop("index", None)
    return out


def _calls(chunk: dict[str, Any]) -> list[dict[str, Any]]:
    return chunk["choices"][0]["delta"].get("tool_calls") or []


def _repeat_headers(events: list[tuple[float, dict]]) -> None:
    """llama.cpp's server with a named tool_choice: every fragment carries the call's id, type and name again."""
    headers: dict[int, dict[str, Any]] = {}
    for _, chunk in events:
        for call in _calls(chunk):
            if "id" in call:
                headers[call["index"]] = {"id": call["id"], "type": "function", "name": call["function"]["name"]}
            elif call.get("index") in headers:
                head = headers[call["index"]]
                call["id"], call["type"] = head["id"], head["type"]
                call["function"] = {"name": head["name"], **call["function"]}


def _atomic(events: list[tuple[float, dict]]) -> list[tuple[float, dict]]:
    """A server that parses the whole generation first: each call in one chunk, when the generation ended."""
    calls: dict[int, dict[str, Any]] = {}
    kept: list[tuple[float, dict]] = []
    for ms, chunk in events:
        fragments = _calls(chunk)
        if not fragments:
            kept.append((ms, chunk))
            continue
        for fragment in fragments:
            whole = calls.setdefault(fragment["index"], {"index": fragment["index"], "function": {"arguments": ""}})
            for key in ("id", "type"):
                if key in fragment:
                    whole[key] = fragment[key]
            function = fragment.get("function", {})
            if "name" in function:
                whole["function"]["name"] = function["name"]
            whole["function"]["arguments"] += function.get("arguments", "")
    if not calls:
        return kept
    finish_at = next((i for i, (_, c) in enumerate(kept) if c["choices"][0].get("finish_reason")), len(kept))
    end_ms = kept[finish_at][0] if finish_at < len(kept) else kept[-1][0]
    whole_chunk = json.loads(json.dumps(kept[0][1]))
    whole_chunk["choices"][0]["delta"] = {"tool_calls": [calls[i] for i in sorted(calls)]}
    whole_chunk["choices"][0]["finish_reason"] = None
    kept.insert(finish_at, (end_ms, whole_chunk))
    return kept


def sse_lines(events: list[tuple[float, dict]]) -> list[tuple[float, str]]:
    """(ms, line) of an event stream: a data line and a blank line per chunk, then ``[DONE]``."""
    lines: list[tuple[float, str]] = []
    for ms, chunk in events:
        lines.append((ms, "data: " + json.dumps(chunk, ensure_ascii=False, separators=(",", ":"))))
        lines.append((ms, ""))
    end = events[-1][0] if events else 0.0
    lines += [(end, "data: [DONE]"), (end, "")]
    return lines


# ------------------------------------------------------------------ writers


def write_trace(path: Path, source: Source, speed: float) -> None:
    """A shipped text trace, re-timed."""
    from callscope.engine.recordings.trace import TraceWriter

    trace = source.trace
    with TraceWriter(path, trace.header, flush_each=False) as out:
        for step in trace.steps:
            out.write_step(step.ms / speed if step.ms is not None else None, step.data, step.tokens)
        if trace.end is not None:
            out.end(trace.end.cause, trace.end.ms / speed if trace.end.ms is not None else None, trace.end.detail)


def write_capture(path: Path, source: Source, server: Server, speed: float) -> dict[str, Any]:
    """One proxied turn as its capture trace; returns its line of the session's ``turns.jsonl``."""
    from callscope.engine.recordings.trace import TraceHeader, TraceWriter
    from callscope.engine.streams.protocols import DEFAULT_PROTOCOL
    from callscope.engine.streams.sse import EVENTS

    events = served(source.events, server, speed)
    header = TraceHeader(source="capture", unit="chunk", description=f"capture of {server.url}", created=CREATED,
                         tools=source.trace.header.tools, messages=source.trace.header.messages,
                         extra={"url": server.url, "protocol": DEFAULT_PROTOCOL, "sse": EVENTS,
                                "request": {"model": server.model, "stream": True}})
    lines = sse_lines(events)
    with TraceWriter(path, header, flush_each=False) as out:
        for ms, line in lines:
            out.write_line(ms, line)
        out.end("stop", lines[-1][0])
    return {"turn": int(path.stem.split("-")[1]), "method": "POST", "url": server.url, "protocol": DEFAULT_PROTOCOL,
            "model": server.model, "status": 200, "stream": True, "file": path.name}


def write_sse(path: Path, source: Source, server: Server) -> None:
    text = "".join(line + "\n" for _, line in sse_lines(served(source.events, server, 1.0)))
    path.write_text(text, encoding="utf-8")


def write_har(path: Path, picks: list[tuple[Source, Server]]) -> None:
    entries = []
    for source, server in picks:
        events = served(source.events, server, 1.0)
        body = "".join(line + "\n" for _, line in sse_lines(events))
        first = events[1][0] if len(events) > 1 else 0.0
        entries.append({
            "startedDateTime": "2026-01-01T00:00:00.000Z", "time": events[-1][0],
            "request": {"method": "POST", "url": server.url, "headers": [],
                        "postData": {"mimeType": "application/json",
                                     "text": json.dumps({"model": server.model, "stream": True})}},
            "response": {"status": 200, "headers": [{"name": "Content-Type", "value": "text/event-stream"}],
                         "content": {"size": len(body), "mimeType": "text/event-stream", "text": body}},
            "timings": {"send": 0, "wait": round(first, 3), "receive": round(events[-1][0] - first, 3)},
        })
    doc = {"log": {"version": "1.2", "creator": {"name": "callscope-corpus", "version": "1"}, "entries": entries}}
    path.write_text(json.dumps(doc), encoding="utf-8")


# ------------------------------------------------------------------ the corpus


def plan(count: int) -> Counter[str]:
    """How many recordings of each kind ``count`` makes."""
    kinds: Counter[str] = Counter({kind: int(count * share) for kind, share in SHARES.items()})
    kinds["trace"] = count - sum(kinds.values())
    return kinds


def generate(out: str | Path, count: int, seed: int = 0) -> Counter[str]:
    """Write ``count`` recordings under ``out`` (emptied first if it exists); returns the count of each kind."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    rng = random.Random(seed)
    sources, captures, fixtures = load_sources()
    kinds = plan(count)
    (out / "traces").mkdir(parents=True)
    for i in range(kinds["trace"]):
        source = rng.choice(sources)
        write_trace(out / "traces" / f"{i:06d}-{source.name}.jsonl", source, rng.uniform(0.2, 5.0))
    session: Path | None = None
    index: list[dict[str, Any]] = []
    for i in range(kinds["capture"]):
        if i % TURNS_PER_SESSION == 0:
            _write_index(session, index)
            session, index = out / "sessions" / f"session-{i // TURNS_PER_SESSION:04d}", []
            session.mkdir(parents=True)
        path = session / f"turn-{i % TURNS_PER_SESSION + 1:04d}.jsonl"
        if captures and rng.random() < SHIPPED_CAPTURES:
            shipped = rng.choice(captures)
            shutil.copyfile(shipped, path)
            index.append({"turn": i % TURNS_PER_SESSION + 1, "file": path.name, "copied_from": shipped.name})
        else:
            index.append(write_capture(path, rng.choice(sources), rng.choice(SERVERS), rng.uniform(0.2, 5.0)))
    _write_index(session, index)
    (out / "dumps").mkdir()
    for i in range(kinds["sse"]):
        source = rng.choice(sources)
        write_sse(out / "dumps" / f"{i:06d}-{source.name}.sse", source, rng.choice(SERVERS))
    (out / "har").mkdir()
    for i in range(kinds["har"]):
        write_har(out / "har" / f"{i:06d}.har",
                  [(rng.choice(sources), rng.choice(SERVERS)) for _ in range(rng.randint(1, 3))])
    (out / "fixtures").mkdir()
    for i in range(kinds["fixture"]):
        fixture = fixtures[i % len(fixtures)]
        shutil.copyfile(fixture, out / "fixtures" / f"{i:06d}-{fixture.name}")
    return kinds


def _write_index(session: Path | None, index: list[dict[str, Any]]) -> None:
    if session is not None and index:
        (session / "turns.jsonl").write_text("".join(json.dumps(r) + "\n" for r in index), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m callscope.benchmarks.corpus", description=__doc__.split("\n")[0])
    parser.add_argument("out", help="the folder to write (emptied first)")
    parser.add_argument("--count", type=int, default=10_000, help="recordings to write (default 10,000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count must be at least 1")
    kinds = generate(args.out, args.count, args.seed)
    print(f"{args.count:,} recordings in {args.out}: " + ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
