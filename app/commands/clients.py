"""`callscope clients SOURCE...`: what each client library ends with, stream by stream: ok, wrong or raises.

SOURCE is anything ``callscope replay`` reads that holds captured streams (a capture trace, a proxy
session's turn, a HAR, an SSE dump, a shipped fixture by name), or ``quirks`` for the whole quirks
library. Every client profile reads each stream (``--client`` chooses; default: all of them) and the
matrix says, per stream and client, ``ok``, ``wrong`` (what it got) or ``raises`` (what). ``--json``
prints it as one document; ``--strict`` exits 1 when a client does not end with the calls the stream meant.
"""

from __future__ import annotations

import argparse
import json

from callscope.commands.common import CliError

QUIRKS = "quirks"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "clients", help="what each client library (openai, AI SDK, LangChain, anthropic...) ends with, per stream",
        description="For captured streams (or the quirks library: SOURCE 'quirks'), what every client profile "
        "ends with: ok, wrong (what it got) or raises (what). Each profile emulates one client library at the "
        "version it names, checked against the real library by the differential test.")
    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="a capture trace, HAR, SSE dump or shipped fixture name; 'quirks' for the quirks library")
    p.add_argument("--client", default="all", metavar="LIST",
                   help="client profiles, comma-separated, or 'all' (default)")
    p.add_argument("--json", action="store_true", help="print the matrix as JSON")
    p.add_argument("--strict", action="store_true", help="exit 1 if any client is wrong or raises")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from callscope.engine.core.shipped import resolve_recording
    from callscope.engine.recordings.capture_trace import analyze_capture_traces
    from callscope.engine.recordings.quirks import OK, client_matrix, library
    from callscope.engine.recordings.replay import load_recording
    from callscope.engine.recordings.trace import TraceError
    from callscope.engine.streams.clients import parse_profiles

    try:
        profiles = parse_profiles(args.client)
    except ValueError as exc:
        raise CliError(f"--client: {exc}") from None
    analyses = []
    for source in args.sources:
        if source == QUIRKS:
            analyses += [(q.id, analyze_capture_traces(q.trace, clients=profiles)[0]) for q in library()]
            continue
        try:
            recording = load_recording(resolve_recording(source))
        except (TraceError, OSError) as exc:
            raise CliError(str(exc)) from None
        if not recording.holds_captures:
            raise CliError(f"{source}: holds no captured stream (a client reads what a server sent: a capture "
                           "trace, a HAR, an SSE dump)")
        captures = recording.captures if recording.captures is not None else [(recording.names()[0],
                                                                                 recording.trace)]
        for name, trace in captures:
            analyses.append((name, analyze_capture_traces(trace, clients=profiles)[0]))
    columns, rows = client_matrix(analyses)
    if args.json:
        print(json.dumps({"schema": "callscope.clients/1", "profiles": columns, "streams": [
            {"name": name, "protocol": protocol, "clients": {p: cell.to_json() for p, cell in cells.items()}}
            for name, protocol, cells in rows]}, indent=2, ensure_ascii=False))
    else:
        _print_matrix(columns, rows)
    broken = any(cell.kind != OK for _, _, cells in rows for cell in cells.values())
    return 1 if args.strict and broken else 0


def _print_matrix(columns: list[str], rows: list) -> None:
    """One line per stream with a mark per client, then what each wrong or raising client ended with."""
    marks = {"ok": "ok", "wrong": "WRONG", "raises": "RAISES"}
    width = max([len(name) for name, _, _ in rows] + [6])
    print(f"{'stream':{width}}  " + "  ".join(f"{c:>16}" for c in columns))
    for name, _, cells in rows:
        print(f"{name:{width}}  " + "  ".join(f"{marks[cells[c].kind] if c in cells else '-':>16}" for c in columns))
    details = [(name, client, cell) for name, _, cells in rows for client, cell in cells.items() if cell.detail]
    if details:
        print()
    for name, client, cell in details:
        print(f"{name}: {client} {cell.kind}: {cell.detail}")
