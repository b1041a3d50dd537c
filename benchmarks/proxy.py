"""`callscope bench proxy`: what does the recording proxy add? Latency per chunk and throughput, side by side.

A loopback upstream (its own process) streams ``chat.completion.chunk``
events, each carrying the ``time.monotonic()`` at which it was written
(CLOCK_MONOTONIC is system-wide on Linux: every process reads the same
clock). The proxy is ``callscope proxy`` itself, in its own process,
recording every turn to a session folder and judging it, exactly as a user
runs it. In the same run, rounds alternate between a client reading the
upstream directly and the same client reading it through the proxy:

- ``paced``: chunks written every ``--interval-ms`` (a model streaming tokens);
  the latency of a chunk is its receive stamp minus its write time; reported:
  the median per stream, and the proxy's added latency (through minus direct).
  Target: <= 1 ms.
- ``burst``: chunks (still one HTTP chunk each) written as fast as the socket
  takes them, in large writes (so the upstream itself needs next to no CPU);
  reported: received chunks/s, first to last. Target: through the proxy
  >= 0.95x direct, as the median of each round's proxy/direct ratio (the two
  reads of a round are next to each other, so the machine's slow and fast
  spells cancel; the medians of the two routes apart did not, 0.62-1.07x run
  to run). 20,000 chunks take ~0.25 s, long enough to measure the steady
  rate: a 5,000-chunk burst (~60 ms) mostly measured the proxy warming up
  (the same proxy went from 53,000 to 90,000 chunks/s over its first rounds).

The proxy judges each turn when it ends (off its event loop); the client
waits for the proxy's line about a turn before the next round starts, so
one round's judging never overlaps the next round's stream.

The upstream is this module again in a child process: ``python -m
callscope.benchmarks.proxy --serve``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from typing import Any

from callscope.benchmarks import BenchError, child_argv
from callscope.benchmarks.loopback import http_chunk, start_child, start_server, stop_child

WHAT = "the recording proxy's added latency per chunk and its throughput against a direct connection"
DEFAULT_BURST = 20_000
DEFAULT_PACED = 400
DEFAULT_INTERVAL_MS = 2.0
DEFAULT_ROUNDS = 7
LATENCY_TARGET_MS = 1.0
THROUGHPUT_TARGET = 0.95
ROUTES = ("direct", "proxy")
_IDLE_S = 120.0
_BURST_PIECE = 1 << 18


# ====================================================================== the upstream (child process)


def _template() -> bytes:
    body = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "bench",
            "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "@ARG@"}}]},
                         "finish_reason": None}], "t": "@T@"}
    text = json.dumps(body, separators=(",", ":")).replace('"@ARG@"', '"x%d"').replace('"@T@"', "%.9f")
    return ("data: " + text + "\n\n").encode()


_HEADER = {"index": 0, "id": "call_bench", "type": "function",
           "function": {"name": "write_file", "arguments": '{"content": "'}}


def _opening() -> bytes:
    first = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "bench",
             "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [_HEADER]}, "finish_reason": None}]}
    return ("data: " + json.dumps(first, separators=(",", ":")) + "\n\n").encode()


def _closing() -> bytes:
    """The call's closing fragment (its arguments are a JSON object), the finish chunk and ``[DONE]``."""
    end = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "bench",
           "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]},
                        "finish_reason": None}]}
    last = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": "bench",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    return "".join("data: " + json.dumps(c, separators=(",", ":")) + "\n\n" for c in (end, last)).encode() + \
        b"data: [DONE]\n\n"


async def _serve() -> None:
    """``POST /burst/N`` or ``/paced/N/MICROSECONDS``: N timestamped argument chunks (one call), then the end."""
    template, opening, closing = _template(), _opening(), _closing()
    last_request = time.monotonic()

    async def respond(head: bytes, writer: asyncio.StreamWriter) -> None:
        nonlocal last_request
        last_request = time.monotonic()
        parts = head.split(b" ", 2)[1].decode().strip("/").split("/")
        count, pause = int(parts[1]), (int(parts[2]) / 1e6 if parts[0] == "paced" else 0.0)
        writer.write(http_chunk(opening))
        monotonic = time.monotonic
        if pause:  # one HTTP chunk per event, each written when its time comes
            for i in range(count):
                await asyncio.sleep(pause)
                writer.write(http_chunk(template % (i, monotonic())))
                await writer.drain()
        else:  # still one HTTP chunk per event, but made up front and written in large pieces: the upstream
            now = monotonic()  # costs next to no CPU, so the two routes compete for the cores the least
            frames = b"".join(http_chunk(template % (i, now)) for i in range(count))
            for start in range(0, len(frames), _BURST_PIECE):
                writer.write(frames[start:start + _BURST_PIECE])
                await writer.drain()
        writer.write(http_chunk(closing))

    server = await start_server(respond)
    while time.monotonic() - last_request < _IDLE_S:  # ends by itself when the bench is gone
        await asyncio.sleep(1.0)
    server.close()


# ====================================================================== the client


async def _read(url: str) -> tuple[list[float], list[str]]:
    """One stream read by a bare httpx client: every data line, stamped when it was read."""
    import httpx

    stamps: list[float] = []
    lines: list[str] = []
    monotonic = time.monotonic
    async with (
        httpx.AsyncClient(timeout=httpx.Timeout(60.0)) as client,
        client.stream("POST", url, json={"model": "bench", "stream": True, "messages": []}) as response,
    ):
        async for line in response.aiter_lines():
            if line.startswith("data: {"):
                stamps.append(monotonic())
                lines.append(line)
    return stamps, lines


def _measure(stamps: list[float], lines: list[str], expected: int) -> dict[str, float]:
    timed = [(s, json.loads(line[6:]).get("t")) for s, line in zip(stamps, lines)]
    timed = [(s, t) for s, t in timed if isinstance(t, float)]
    if len(timed) != expected:
        raise RuntimeError(f"received {len(timed)} of {expected} chunks")
    span = timed[-1][0] - timed[0][0]
    return {"median_latency_ms": statistics.median((s - t) * 1000.0 for s, t in timed),
            "chunks_per_s": (len(timed) - 1) / span if span > 0 else float("inf")}


class _Proxy:
    """``callscope proxy`` in its own process, recording to a temporary session folder."""

    def __init__(self, upstream: str) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="callscope-bench-proxy-")
        argv = [sys.executable, "-m", "callscope", "proxy", "--listen", "127.0.0.1:0", "--upstream", upstream,
                "--record-dir", self.folder.name, "--json"]
        self.proc, banner = start_child(argv, banner_on_stderr=True)
        if "listening on " not in banner:
            stop_child(self.proc)
            raise RuntimeError(f"callscope proxy did not start: {banner.strip()}")
        self.url = banner.split("listening on ")[1].split(" ")[0]

    def turn_ended(self) -> dict[str, Any]:
        """The proxy's line about the turn just streamed (it has been recorded and judged)."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("callscope proxy exited")
        return json.loads(line)

    def close(self) -> None:
        stop_child(self.proc)
        self.folder.cleanup()


# ====================================================================== the benchmark


def measure(burst: int = DEFAULT_BURST, paced: int = DEFAULT_PACED, interval_ms: float = DEFAULT_INTERVAL_MS,
            rounds: int = DEFAULT_ROUNDS) -> dict[str, Any]:
    """Alternate direct and proxied reads of both streams; medians, the added latency and the throughput ratio."""
    upstream, line = start_child(child_argv("proxy", "--serve"))
    base = f"http://127.0.0.1:{int(line)}"
    proxy = None
    runs: dict[str, dict[str, list[dict[str, float]]]] = {k: {r: [] for r in ROUTES} for k in ("paced", "burst")}
    try:
        proxy = _Proxy(base)
        paths = {"paced": (f"/paced/{paced}/{round(interval_ms * 1000)}", paced), "burst": (f"/burst/{burst}", burst)}
        for url in (proxy.url + paths["burst"][0], base + paths["burst"][0]):  # warm up (not measured): imports,
            asyncio.run(_read(url))  # the judging worker's start, the first connections
            if url.startswith(proxy.url):
                proxy.turn_ended()
        for r in range(rounds):
            for kind, (path, count) in paths.items():
                for route in ROUTES if r % 2 == 0 else tuple(reversed(ROUTES)):  # neither always goes first
                    url = (proxy.url if route == "proxy" else base) + path
                    stamps, lines = asyncio.run(_read(url))
                    if route == "proxy":
                        turn = proxy.turn_ended()
                        if turn.get("calls") != 1 or turn.get("violations"):
                            raise RuntimeError(f"the proxy judged the {kind} stream wrongly: {turn.get('summary')}")
                    runs[kind][route].append(_measure(stamps, lines, count))
    finally:
        if proxy is not None:
            proxy.close()
        stop_child(upstream)
    medians = {kind: {route: {key: statistics.median(m[key] for m in results) for key in results[0]}
                      for route, results in by_route.items()} for kind, by_route in runs.items()}
    added = medians["paced"]["proxy"]["median_latency_ms"] - medians["paced"]["direct"]["median_latency_ms"]
    pairs = zip(runs["burst"]["proxy"], runs["burst"]["direct"], strict=True)
    ratio = statistics.median(proxy["chunks_per_s"] / direct["chunks_per_s"] for proxy, direct in pairs)
    return {
        "burst_chunks": burst, "paced_chunks": paced, "interval_ms": interval_ms, "rounds": rounds,
        "medians": medians, "runs": runs,
        "added_latency_ms": added, "latency_target_ms": LATENCY_TARGET_MS,
        "throughput_ratio": ratio, "throughput_target": THROUGHPUT_TARGET,
        "ok": added <= LATENCY_TARGET_MS and ratio >= THROUGHPUT_TARGET,
    }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--burst", type=int, default=DEFAULT_BURST, help=f"chunks of the burst stream (default {DEFAULT_BURST})")
    parser.add_argument("--paced", type=int, default=DEFAULT_PACED, help=f"chunks of the paced stream (default {DEFAULT_PACED})")
    parser.add_argument("--interval-ms", type=float, default=DEFAULT_INTERVAL_MS,
                        help=f"pause between paced chunks (default {DEFAULT_INTERVAL_MS:g} ms)")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS,
                        help=f"rounds of each stream and route (default {DEFAULT_ROUNDS})")


def run(args: argparse.Namespace) -> int:
    if args.burst < 2 or args.paced < 2 or args.rounds < 1 or not 0.1 <= args.interval_ms <= 1000:
        raise BenchError("--burst and --paced must be at least 2, --rounds positive, --interval-ms 0.1 to 1000")
    result = measure(args.burst, args.paced, args.interval_ms, args.rounds)
    if args.json:
        print(json.dumps({"bench": "proxy", **result}, indent=2))
        return 0 if result["ok"] else 1
    m = result["medians"]
    print(f"proxy bench: loopback upstream, `callscope proxy` recording and judging every turn, "
          f"{result['rounds']} rounds (medians)")
    print(f"  {'route':<8} {'paced latency/chunk':>20} {'burst chunks/s':>16}")
    for route in ROUTES:
        print(f"  {route:<8} {m['paced'][route]['median_latency_ms']:>17.3f} ms {m['burst'][route]['chunks_per_s']:>16,.0f}")
    latency_ok = result["added_latency_ms"] <= LATENCY_TARGET_MS
    throughput_ok = result["throughput_ratio"] >= THROUGHPUT_TARGET
    print(f"  added latency per chunk {result['added_latency_ms']:.3f} ms (target <= {LATENCY_TARGET_MS:g} ms): "
          f"{'OK' if latency_ok else 'ABOVE TARGET'}")
    print(f"  throughput through the proxy {result['throughput_ratio']:.2f}x direct (target >= {THROUGHPUT_TARGET}x): "
          f"{'OK' if throughput_ok else 'BELOW TARGET'}")
    return 0 if result["ok"] else 1


if __name__ == "__main__":  # pragma: no cover - the upstream side of the benchmark
    if sys.argv[1:] != ["--serve"]:
        sys.exit("usage: python -m callscope.benchmarks.proxy --serve")
    asyncio.run(_serve())
