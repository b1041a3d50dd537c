"""`callscope bench clients`: CPU per chunk of every client profile, and of the whole verdict, side by side.

The proxy and ``callscope check`` run every default client profile on every chunk of
every turn, so a profile must cost a few microseconds per chunk, and the whole verdict
(SSE framing, the protocol reader, every default profile, the report's calls) at most
20 µs. One stream per protocol is generated (content, then two calls whose arguments
arrive in small fragments, as a model streams them: 4,000 chunks for Chat Completions),
and in each round, in turn:

- ``decode``: ``json.loads`` of every event (the reader does it once; profiles share it);
- each profile alone, on the decoded events (``run_profiles``);
- ``reader only``: the capture analysis with no profile (``--client none``);
- ``whole verdict``: the capture analysis with the default profiles, as ``capture``/``check`` run it.

Reported: CPU µs per chunk (``time.process_time``), the median over rounds.
Targets: every profile <= 5 µs/chunk; the whole default verdict <= 20 µs/chunk (Chat Completions).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from callscope.benchmarks import BenchError

WHAT = "CPU per chunk of every client profile and of the whole verdict with the default profiles"
DEFAULT_CHUNKS = 4000
DEFAULT_ROUNDS = 5
PROFILE_TARGET_US = 5.0
VERDICT_TARGET_US = 20.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chunks", type=int, default=DEFAULT_CHUNKS, help="chunks in the Chat Completions stream")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help="rounds (the median is reported)")


# ====================================================================== the streams


def _fragments(count: int) -> list[str]:
    """Argument fragments of one long call, a few characters each, as a model streams them."""
    body = json.dumps({"path": "/tmp/notes.md", "content": "lorem ipsum dolor sit amet " * (count // 4 + 1)})
    size = max(1, len(body) // count)
    return [body[i:i + size] for i in range(0, len(body), size)]


def chat_lines(chunks: int) -> list[str]:
    def event(delta: dict[str, Any], finish: str | None = None) -> str:
        return "data: " + json.dumps({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1,
                                      "model": "bench", "choices": [{"index": 0, "delta": delta,
                                                                     "finish_reason": finish}]})
    calls = max(2, chunks - 40) // 2
    events = [event({"role": "assistant", "content": None})]
    events += [event({"content": f"word{i} "}) for i in range(30)]
    for index, (cid, name) in enumerate((("call_a", "write_file"), ("call_b", "write_note"))):
        events.append(event({"tool_calls": [{"index": index, "id": cid, "type": "function",
                                             "function": {"name": name, "arguments": ""}}]}))
        events += [event({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                   for piece in _fragments(calls)]
    events += [event({}, "tool_calls"), "data: [DONE]"]
    return events


def responses_lines(chunks: int) -> list[str]:
    def event(kind: str, **fields: Any) -> str:
        return f"event: {kind}\ndata: " + json.dumps({"type": kind, **fields})
    response = {"id": "resp_bench", "object": "response", "status": "in_progress", "model": "bench", "output": []}
    pieces = _fragments(chunks)
    final = {"type": "function_call", "id": "fc_1", "call_id": "call_a", "name": "write_file",
             "arguments": "".join(pieces), "status": "completed"}
    return [event("response.created", response=response),
            event("response.output_item.added", output_index=0, item={**final, "arguments": "",
                                                                       "status": "in_progress"}),
            *[event("response.function_call_arguments.delta", item_id="fc_1", output_index=0, delta=p)
              for p in pieces],
            event("response.function_call_arguments.done", item_id="fc_1", output_index=0,
                  arguments=final["arguments"]),
            event("response.output_item.done", output_index=0, item=final),
            event("response.completed", response={**response, "status": "completed", "output": [final]})]


def anthropic_lines(chunks: int) -> list[str]:
    def event(kind: str, **fields: Any) -> str:
        return f"event: {kind}\ndata: " + json.dumps({"type": kind, **fields})
    message = {"id": "msg_bench", "type": "message", "role": "assistant", "content": [], "model": "bench",
               "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    return [event("message_start", message=message),
            event("content_block_start", index=0, content_block={"type": "tool_use", "id": "toolu_a",
                                                                  "name": "write_file", "input": {}}),
            *[event("content_block_delta", index=0, delta={"type": "input_json_delta", "partial_json": p})
              for p in _fragments(chunks)],
            event("content_block_stop", index=0),
            event("message_delta", delta={"stop_reason": "tool_use"}, usage={"output_tokens": 9}),
            event("message_stop")]


def received(events: list[str]) -> list[tuple[float, str]]:
    """The events as received lines, a blank line after each."""
    return [(float(i), part) for i, e in enumerate(events) for part in (*e.split("\n"), "")]


# ====================================================================== measuring


def _cpu_us(work: Callable[[], Any], chunks: int) -> float:
    gc.collect()  # every measurement starts without the garbage of the one before
    start = time.process_time()
    work()
    return (time.process_time() - start) * 1e6 / chunks


def measure(protocol: str, lines: list[tuple[float, str]], rounds: int) -> dict[str, float]:
    from callscope.engine.core.json_text import loads
    from callscope.engine.streams.clients import NOT_JSON, PROFILES, default_profiles, run_profiles
    from callscope.engine.streams.conformance import analyze_capture_lines
    from callscope.engine.streams.sse import EVENTS, read_events

    events = [e for e in read_events(lines, EVENTS) if e.data]
    decoded = []
    for step, event in enumerate(events, 1):
        try:
            decoded.append((step, event, None if event.data.startswith("[DONE]") else loads(event.data)))
        except ValueError:
            decoded.append((step, event, NOT_JSON))
    chunks = len(events)
    profiles = [p for p in PROFILES if PROFILES[p].reads(protocol)]
    defaults = tuple(p for p in default_profiles() if PROFILES[p].reads(protocol))
    work: dict[str, Callable[[], Any]] = {"decode": lambda: [loads(e.data) for e in events
                                                             if not e.data.startswith("[DONE]")]}
    for profile in profiles:
        work[profile] = lambda p=profile: run_profiles(protocol, decoded, (p,))
    work["reader only"] = lambda: analyze_capture_lines(lines, protocol=protocol, clients=())
    work["whole verdict"] = lambda: analyze_capture_lines(lines, protocol=protocol, clients=defaults)
    samples: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(rounds):
        for name, job in work.items():  # side by side: every measurement once per round, in turn
            samples[name].append(_cpu_us(job, chunks))
    return {"chunks": chunks, **{name: statistics.median(values) for name, values in samples.items()}}


def run(args: argparse.Namespace) -> int:
    if args.chunks < 50 or args.rounds < 1:
        raise BenchError("--chunks must be at least 50 and --rounds at least 1")
    from callscope.engine.streams import anthropic, chat, responses
    from callscope.engine.streams.clients import PROFILES

    streams = ((chat.SPEC.id, chat_lines(args.chunks)), (responses.SPEC.id, responses_lines(args.chunks // 4)),
               (anthropic.SPEC.id, anthropic_lines(args.chunks // 4)))
    results = {protocol: measure(protocol, received(lines), args.rounds) for protocol, lines in streams}
    failures = []
    for protocol, found in results.items():
        for name, value in found.items():
            if name in PROFILES and value > PROFILE_TARGET_US:
                failures.append(f"{name} on {protocol}: {value:.2f} µs/chunk > {PROFILE_TARGET_US}")
    whole = results[chat.SPEC.id]["whole verdict"]
    if whole > VERDICT_TARGET_US:
        failures.append(f"whole verdict: {whole:.2f} µs/chunk > {VERDICT_TARGET_US}")
    if getattr(args, "json", False):
        print(json.dumps({"bench": "clients", "results": results, "targets": {
            "profile_us_per_chunk": PROFILE_TARGET_US, "verdict_us_per_chunk": VERDICT_TARGET_US},
            "failures": failures}, indent=2))
    else:
        _print_table(results, args.rounds)
        print("all targets met" if not failures else "missed: " + "; ".join(failures))
    return 1 if failures else 0


def _print_table(results: dict[str, dict[str, float]], rounds: int) -> None:
    names = list(dict.fromkeys(n for found in results.values() for n in found if n != "chunks"))
    print(f"CPU µs per chunk (median of {rounds} rounds, measured side by side)")
    print(f"{'':18}" + "".join(f"{p:>12}" for p in results))
    print(f"{'chunks':18}" + "".join(f"{int(found['chunks']):>12}" for found in results.values()))
    for name in names:
        print(f"{name:18}" + "".join(f"{found[name]:>12.2f}" if name in found else f"{'-':>12}"
                                     for found in results.values()))
