"""`callscope bench capture`: does stamping and recording cost throughput? Loopback, side by side.

A loopback server (its own process, so it does not share our GIL) sends
5,000 ``chat.completion.chunk`` lines as fast as it can, each carrying the
``time.monotonic()`` at which it was written (CLOCK_MONOTONIC is system-wide
on Linux, so both processes read the same clock). In the same run, rounds
alternate between:

- ``bare``: an httpx ``aiter_lines()`` loop that stamps each line, nothing else;
- ``callscope``: :class:`~callscope.engine.capture.client.StreamCapture` as the GUI uses it;
- ``callscope+record``: the same, writing a capture trace as ``callscope capture --record`` does.

Reported: received chunks/s (first to last line) and the median stamping lag
(receive stamp minus the server's write time). Target: callscope >= 0.9x bare.

The long-line case: the same kind of server sends one 50 MB ``data:`` line (a
huge tool-call argument, or a hostile server), then ``[DONE]``. Rounds
alternate between ``curl -N -s -o /dev/null`` (the floor: a C reader that keeps
nothing) and callscope's reader, which must stay linear in the line length.
The bare httpx ``aiter_lines()`` reader runs too, to show what the HTTP
library alone costs. Target: callscope <= 2x curl's wall time.

The server is this module again in a child process: ``python -m
callscope.benchmarks.capture --serve CHUNKS REQUESTS LONG_LINE``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from callscope.benchmarks import BenchError, child_argv
from callscope.benchmarks.loopback import http_chunk, start_child, start_server, stop_child

WHAT = "loopback SSE capture throughput against a bare httpx reader"
DEFAULT_CHUNKS = 5000
DEFAULT_ROUNDS = 5
TARGET_RATIO = 0.9
MODES = ("bare", "callscope", "callscope+record")
_SERVER_IDLE_S = 60.0
LONG_LINE_BYTES = 50_000_000
LONG_LINE_ROUNDS = 3
LONG_LINE_TARGET = 2.0  # callscope's wall time / curl's
LONG_MODES = ("curl", "bare", "callscope")
_CURL = "/usr/bin/curl"
_SEND_PIECE = 1 << 20  # the long-line server writes 1 MB HTTP chunks


# ====================================================================== the loopback server (child process)


def _chunk_template() -> bytes:
    """One argument-fragment chunk, as a llama.cpp-like server writes it, with slots for (index, send time)."""
    body = {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "bench",
        "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "@ARG@"}}]},
                     "finish_reason": None}],
        "t": "@T@",
    }
    text = json.dumps(body, separators=(",", ":")).replace('"@ARG@"', '"x%d"').replace('"@T@"', "%.9f")
    return ("data: " + text + "\n\n").encode()


def _long_line(size: int) -> bytes:
    """One ``data:`` line of about ``size`` bytes: a content delta of ``x`` repeated, then the blank line."""
    head = b'data: {"choices":[{"index":0,"delta":{"content":"'
    tail = b'"},"finish_reason":null}]}\n\n'
    return head + b"x" * max(0, size - len(head) - len(tail)) + tail


async def _send_chunks(writer: asyncio.StreamWriter, template: bytes, chunks: int) -> None:
    """The many-small-chunks stream: one HTTP chunk per SSE chunk, as fast as the socket takes them."""
    monotonic = time.monotonic
    for i in range(chunks):
        payload = template % (i, monotonic())
        writer.write(http_chunk(payload))
        if writer.transport.get_write_buffer_size() > 262_144:
            await writer.drain()


async def _send_long(writer: asyncio.StreamWriter, line: bytes) -> None:
    """The long-line stream: one SSE line cut into 1 MB HTTP chunks (the reader sees many reads, no newline)."""
    view = memoryview(line)
    for start in range(0, len(line), _SEND_PIECE):
        piece = view[start : start + _SEND_PIECE]
        writer.write(b"%x\r\n" % len(piece))
        writer.write(piece)
        writer.write(b"\r\n")
        await writer.drain()


async def _serve(chunks: int, requests: int, long_line: int = 0) -> None:
    """Serve ``requests`` streams: ``chunks`` small chunks each, or (``long_line`` > 0) one line that long."""
    template = _chunk_template()
    line = _long_line(long_line) if long_line else b""
    served = 0
    finished = asyncio.Event()

    async def respond(head: bytes, writer: asyncio.StreamWriter) -> None:
        if line:
            await _send_long(writer, line)
        else:
            await _send_chunks(writer, template, chunks)
        writer.write(http_chunk(b"data: [DONE]\n\n"))

    def answered() -> None:
        nonlocal served
        served += 1
        if served >= requests:
            finished.set()

    server = await start_server(respond, answered)
    try:
        await asyncio.wait_for(finished.wait(), _SERVER_IDLE_S * max(1, requests))
    except TimeoutError:
        pass
    server.close()


def _start_server(chunks: int, requests: int, long_line: int = 0) -> tuple[subprocess.Popen[str], int]:
    proc, line = start_child(child_argv("capture", "--serve", str(chunks), str(requests), str(long_line)))
    return proc, int(line)


# ====================================================================== the readers


async def _bare(url: str) -> tuple[list[float], list[str]]:
    import httpx

    stamps: list[float] = []
    lines: list[str] = []
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(30.0)) as client,
        client.stream("POST", url, json={"stream": True}) as response,
    ):
        async for line in response.aiter_lines():
            stamps.append(time.monotonic())
            lines.append(line)
    pairs = [(s, line) for s, line in zip(stamps, lines) if line]
    return [s for s, _ in pairs], [line for _, line in pairs]


async def _callscope(url: str, record: bool) -> tuple[list[float], list[str], float]:
    from callscope.engine.capture.client import StreamCapture
    from callscope.engine.capture.recording import CaptureRecorder
    from callscope.engine.capture.request import CaptureRequest

    request = CaptureRequest(url, {"messages": [], "stream": True}, connect_timeout=30.0, read_timeout=30.0)
    recorder = None
    folder = None
    if record:
        folder = tempfile.TemporaryDirectory()
        recorder = CaptureRecorder(Path(folder.name) / "bench.jsonl", request)
    session = StreamCapture(request, recorder.write if recorder else None)
    finish_ms = 0.0
    try:
        result = await session.run()
        if recorder is not None:
            began = time.perf_counter()
            recorder.finish(result)  # the lines queued during the burst are written now
            finish_ms = (time.perf_counter() - began) * 1000.0
    finally:
        if folder is not None:
            folder.cleanup()
    if result.error is not None:
        raise RuntimeError(f"capture failed: {result.error.message}")
    started = result.started or 0.0
    return [started + ms / 1000.0 for ms, _ in result.lines], [line for _, line in result.lines], finish_ms


def _measure(stamps: list[float], lines: list[str]) -> dict[str, float]:
    data = [(s, line) for s, line in zip(stamps, lines) if line.startswith("data: {")]
    lags = [(s - json.loads(line[6:])["t"]) * 1000.0 for s, line in data]
    span = data[-1][0] - data[0][0] if len(data) > 1 else 0.0
    return {
        "chunks": len(data),
        "chunks_per_s": (len(data) - 1) / span if span > 0 else float("inf"),
        "median_lag_ms": statistics.median(lags) if lags else float("nan"),
    }


# ====================================================================== the benchmark


def measure(chunks: int = DEFAULT_CHUNKS, rounds: int = DEFAULT_ROUNDS) -> dict[str, Any]:
    """Run ``rounds`` rounds of every mode against one loopback server; medians per mode plus the ratios.

    Returns ``{"chunks", "rounds", "modes": {mode: {"chunks_per_s", "median_lag_ms", "record_finish_ms", "runs": [...]}},
    "ratio": callscope/bare, "ratio_record": callscope+record/bare, "target": 0.9, "ok": bool}``.
    """
    proc, port = _start_server(chunks, rounds * len(MODES))
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    try:
        for r in range(rounds):
            order = MODES if r % 2 == 0 else tuple(reversed(MODES))  # no mode always goes first
            for mode in order:
                finish_ms = 0.0
                if mode == "bare":
                    stamps, lines = asyncio.run(_bare(url))
                else:
                    stamps, lines, finish_ms = asyncio.run(_callscope(url, record=mode == "callscope+record"))
                measured = _measure(stamps, lines)
                measured["record_finish_ms"] = finish_ms
                if measured["chunks"] != chunks:
                    raise RuntimeError(f"{mode}: received {measured['chunks']} of {chunks} chunks")
                runs[mode].append(measured)
    finally:
        _stop_server(proc)
    modes = {
        mode: {
            "chunks_per_s": statistics.median(r["chunks_per_s"] for r in results),
            "median_lag_ms": statistics.median(r["median_lag_ms"] for r in results),
            "record_finish_ms": statistics.median(r["record_finish_ms"] for r in results),
            "runs": results,
        }
        for mode, results in runs.items()
    }
    bare = modes["bare"]["chunks_per_s"]
    ratio = modes["callscope"]["chunks_per_s"] / bare
    ratio_record = modes["callscope+record"]["chunks_per_s"] / bare
    return {
        "chunks": chunks,
        "rounds": rounds,
        "modes": modes,
        "ratio": ratio,
        "ratio_record": ratio_record,
        "target": TARGET_RATIO,
        "ok": ratio >= TARGET_RATIO and ratio_record >= TARGET_RATIO,
    }


def _curl_once(curl: str, url: str) -> tuple[float, int]:
    """curl's wall time for one stream (process start included) and the bytes it received."""
    command = [curl, "-N", "-s", "-o", "/dev/null", "-w", "%{size_download}", "--max-time", "300",
               "-X", "POST", "-H", "content-type: application/json", "--data-binary", '{"stream": true}', url]
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"curl failed with exit code {done.returncode}: {done.stderr.strip()}")
    return elapsed, int(done.stdout.strip() or 0)


def _reader_once(url: str, expected: int, bare: bool) -> float:
    """A Python reader's wall time for one stream (event loop start included); checks the line arrived whole."""
    began = time.perf_counter()
    if bare:
        _, lines = asyncio.run(_bare(url))
    else:
        _, lines, _ = asyncio.run(_callscope(url, record=False))
    elapsed = time.perf_counter() - began
    lines = [line for line in lines if line]  # the blank lines that end events (callscope keeps them)
    if len(lines) != 2 or len(lines[0]) != expected:
        got = len(lines[0]) if lines else 0
        raise RuntimeError(f"long line: expected one {expected}-char line then [DONE], got {len(lines)} lines ({got} chars)")
    return elapsed


def measure_long_line(size: int = LONG_LINE_BYTES, rounds: int = LONG_LINE_ROUNDS) -> dict[str, Any]:
    """One ``size``-byte SSE line per stream: callscope's reader against curl, alternating, medians.

    Returns ``{"bytes", "rounds", "modes": {mode: {"seconds", "runs"}}, "ratio": callscope/curl,
    "target": 2.0, "ok"}``, or ``{"skipped": why}`` without curl.
    """
    if not os.access(_CURL, os.X_OK) and shutil.which("curl") is None:
        return {"skipped": "curl is not installed"}
    curl = _CURL if os.access(_CURL, os.X_OK) else str(shutil.which("curl"))
    expected = len(_long_line(size)) - 2  # the line without its blank-line terminator
    proc, port = _start_server(0, rounds * len(LONG_MODES), long_line=size)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    runs: dict[str, list[float]] = {mode: [] for mode in LONG_MODES}
    try:
        for r in range(rounds):
            for mode in LONG_MODES if r % 2 == 0 else tuple(reversed(LONG_MODES)):
                if mode == "curl":
                    seconds, received = _curl_once(curl, url)
                    if received < expected:
                        raise RuntimeError(f"curl received {received} of at least {expected} bytes")
                else:
                    seconds = _reader_once(url, expected, bare=mode == "bare")
                runs[mode].append(seconds)
    finally:
        _stop_server(proc)
    modes = {mode: {"seconds": statistics.median(times), "runs": times} for mode, times in runs.items()}
    ratio = modes["callscope"]["seconds"] / modes["curl"]["seconds"]
    ratio_bare = modes["callscope"]["seconds"] / modes["bare"]["seconds"]
    return {"bytes": size, "rounds": rounds, "modes": modes, "ratio": ratio, "ratio_bare": ratio_bare,
            "target": LONG_LINE_TARGET, "ok": ratio <= LONG_LINE_TARGET}


def _stop_server(proc: subprocess.Popen[str]) -> None:
    """The server exits by itself after its requests; end it if a round failed early."""
    if proc.stdout is not None:
        proc.stdout.close()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        stop_child(proc, grace=5)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--chunks", type=int, default=DEFAULT_CHUNKS, help=f"chunks per stream (default {DEFAULT_CHUNKS})")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help=f"rounds of every reader (default {DEFAULT_ROUNDS})")
    parser.add_argument("--long-line-bytes", type=int, default=LONG_LINE_BYTES,
                        help=f"size of the one long SSE line (default {LONG_LINE_BYTES:,}; 0 skips that case)")
    parser.add_argument("--long-line-rounds", type=int, default=LONG_LINE_ROUNDS,
                        help=f"rounds of the long-line case (default {LONG_LINE_ROUNDS})")


def run(args: argparse.Namespace) -> int:
    """Measure both cases and print a table (or the JSON document); 0 when both targets are met."""
    if args.chunks < 2 or args.rounds < 1 or args.long_line_bytes < 0 or args.long_line_rounds < 1:
        raise BenchError("--chunks must be at least 2, --rounds and --long-line-rounds positive")
    result = measure(args.chunks, args.rounds)
    if args.long_line_bytes:
        long_line = measure_long_line(args.long_line_bytes, args.long_line_rounds)
    else:
        long_line = {"skipped": "--long-line-bytes 0"}
    result["long_line"] = long_line
    result["ok"] = result["ok"] and long_line.get("ok", True)
    if args.json:
        print(json.dumps({"bench": "capture", **result}, indent=2))
    else:
        _print_chunks(result)
        _print_long_line(long_line)
    return 0 if result["ok"] else 1


def _print_chunks(result: dict[str, Any]) -> None:
    print(f"capture bench: loopback server, {result['chunks']} chunks per stream, {result['rounds']} rounds (medians)")
    print(f"  {'reader':<18} {'chunks/s':>10} {'median stamping lag':>21}")
    for mode, values in result["modes"].items():
        print(f"  {mode:<18} {values['chunks_per_s']:>10,.0f} {values['median_lag_ms']:>18.2f} ms")
    print(f"  writing the trace lines queued during the burst took {result['modes']['callscope+record']['record_finish_ms']:.1f} ms "
          "after the stream ended")
    chunks_ok = result["ratio"] >= TARGET_RATIO and result["ratio_record"] >= TARGET_RATIO
    verdict = "OK" if chunks_ok else "BELOW TARGET"
    print(
        f"  callscope / bare = {result['ratio']:.2f}x, with recording {result['ratio_record']:.2f}x "
        f"(target >= {TARGET_RATIO}x): {verdict}"
    )


def _print_long_line(long_line: dict[str, Any]) -> None:
    if "skipped" in long_line:
        print(f"long line: skipped ({long_line['skipped']})")
        return
    print(f"long line: one {long_line['bytes'] / 1e6:g} MB SSE line per stream, {long_line['rounds']} rounds (medians)")
    for mode, values in long_line["modes"].items():
        print(f"  {mode:<18} {values['seconds'] * 1000:>8.0f} ms")
    verdict = "OK" if long_line["ok"] else "ABOVE TARGET"
    print(f"  callscope / curl = {long_line['ratio']:.2f}x (target <= {long_line['target']:g}x): {verdict}; "
          f"callscope / bare httpx = {long_line['ratio_bare']:.2f}x")


if __name__ == "__main__":  # pragma: no cover - the server side of the benchmark
    if len(sys.argv) != 5 or sys.argv[1] != "--serve":
        sys.exit("usage: python -m callscope.benchmarks.capture --serve CHUNKS REQUESTS LONG_LINE_BYTES")
    asyncio.run(_serve(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])))
