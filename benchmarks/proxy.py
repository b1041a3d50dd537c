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

The proxy judges each turn in its verdict worker (nice 19), reading the lines
as they stream; the client waits for the proxy's line about a turn before the
next read, so one turn's judging never overlaps the next stream. Reported
with each burst through the proxy:

- time to verdict: from the client's last chunk to the proxy's line about the
  turn (target <= 0.5 s for a 20,000-chunk turn);
- CPU per chunk: the proxy process's own (relaying and recording) and its
  verdict worker's (target <= 20 µs), from ``/proc`` before and after the turn.

``--neighbour`` (``--load``): each round also reads the burst directly and
through the proxy while a CPU-bound process runs beside them, at normal
priority: the throughput ratio on a busy machine, where forwarding must come
first. ``--vs mitmdump``: mitmproxy's ``mitmdump`` as a reverse proxy to the
same upstream (``stream_large_bodies`` set, so that it streams) is a third
route of every round: target >= 2x its throughput, and less added latency.

The upstream is this module again in a child process: ``python -m
callscope.benchmarks.proxy --serve``.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
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
#: The proxy's verdict line after a 20,000-chunk turn, and the verdict's CPU per chunk (the corpora issue).
VERDICT_TARGET_S = 0.5
VERDICT_CPU_TARGET_US = 20.0
#: Throughput through callscope's proxy against mitmdump's, streaming both.
VS_MITMDUMP_TARGET = 2.0
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


def _cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` so far (0 once it is gone); Linux ``/proc``."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    """The processes ``pid`` started (the proxy's verdict worker and multiprocessing's resource tracker)."""
    found = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(task, encoding="ascii") as listing:
                found += [int(child) for child in listing.read().split()]
        except OSError:
            continue
    return found


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

    def cpu(self) -> tuple[float, float]:
        """(the proxy's own CPU seconds, its worker processes' CPU seconds) so far."""
        return _cpu_seconds(self.proc.pid), sum(_cpu_seconds(child) for child in _children(self.proc.pid))

    def close(self) -> None:
        stop_child(self.proc)
        self.folder.cleanup()


class _Mitmdump:
    """mitmproxy's ``mitmdump`` as a reverse proxy to the same upstream, streaming (``stream_large_bodies``)."""

    def __init__(self, executable: str, upstream: str) -> None:
        with socket.socket() as probe:  # a free port: mitmdump takes a port number, not 0
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.confdir = tempfile.TemporaryDirectory(prefix="callscope-bench-mitmdump-")
        self.proc = subprocess.Popen(
            [executable, "--mode", f"reverse:{upstream}", "--listen-host", "127.0.0.1", "--listen-port", str(port),
             "--set", "stream_large_bodies=1", "--set", f"confdir={self.confdir.name}", "--set", "flow_detail=0",
             "-q"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30.0
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                error = (self.proc.stderr.read() if self.proc.stderr else "").strip().splitlines()
                raise BenchError(f"mitmdump did not start: {error[-1] if error else 'it exited'}")
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    return
            time.sleep(0.1)
        self.close()
        raise BenchError("mitmdump did not start listening within 30 s")

    def cpu(self) -> float:
        return _cpu_seconds(self.proc.pid)

    def close(self) -> None:
        stop_child(self.proc)
        self.confdir.cleanup()


class _Neighbour:
    """A CPU-bound process at normal priority, as any other work on the machine: it wants a whole core."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


def mitmdump_path(given: str | None = None) -> str | None:
    """The ``mitmdump`` to compare with: ``given``, the one beside this Python, or the one on PATH."""
    if given:
        return given if os.path.isfile(given) and os.access(given, os.X_OK) else None
    beside = os.path.join(os.path.dirname(sys.executable), "mitmdump")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return shutil.which("mitmdump")


# ====================================================================== the benchmark


@dataclass
class _Run:
    """Everything measured, by stream kind and route: per-stream results, per-turn verdict times and CPU."""

    streams: dict[str, dict[str, list[dict[str, float]]]] = field(default_factory=dict)
    verdict_s: list[float] = field(default_factory=list)  # burst: the client's last chunk to the proxy's line
    proxy_cpu_us: list[float] = field(default_factory=list)  # burst: the proxy's own CPU per chunk
    verdict_cpu_us: list[float] = field(default_factory=list)  # burst: the verdict worker's CPU per chunk
    mitm_cpu_us: list[float] = field(default_factory=list)

    def add(self, kind: str, route: str, result: dict[str, float]) -> None:
        self.streams.setdefault(kind, {}).setdefault(route, []).append(result)


def _read_through(run: _Run, kind: str, route: str, url: str, count: int, proxy: _Proxy | None,
                  mitm: _Mitmdump | None) -> None:
    """One stream read by the client; through the proxy, its turn line awaited and its CPU counted."""
    before = proxy.cpu() if route.startswith("proxy") and proxy is not None else None
    mitm_before = mitm.cpu() if route == "mitmdump" and mitm is not None else None
    try:
        stamps, lines = asyncio.run(_read(url))
    except Exception as exc:  # noqa: BLE001 - which route failed, in one line
        raise RuntimeError(f"reading the {kind} stream through {route} failed: {type(exc).__name__}: {exc}") from None
    done = time.monotonic()
    if before is not None and proxy is not None:
        turn = proxy.turn_ended()
        ended = time.monotonic()
        if turn.get("calls") != 1 or turn.get("violations"):
            raise RuntimeError(f"the proxy judged the {kind} stream wrongly: {turn.get('summary')}")
        after = proxy.cpu()
        if kind == "burst" and route == "proxy":
            run.verdict_s.append(ended - done)
            run.proxy_cpu_us.append((after[0] - before[0]) / count * 1e6)
            run.verdict_cpu_us.append((after[1] - before[1]) / count * 1e6)
    if mitm_before is not None and mitm is not None and kind == "burst":
        run.mitm_cpu_us.append((mitm.cpu() - mitm_before) / count * 1e6)
    run.add(kind, route, _measure(stamps, lines, count))


def measure(burst: int = DEFAULT_BURST, paced: int = DEFAULT_PACED, interval_ms: float = DEFAULT_INTERVAL_MS,
            rounds: int = DEFAULT_ROUNDS, neighbour: bool = False, mitmdump: str | None = None) -> dict[str, Any]:
    """Alternate direct and proxied reads of both streams; medians, the added latency and the throughput ratio.

    ``neighbour``: each round also reads the burst directly and through the proxy (and mitmdump) while a
    CPU-bound process runs beside them (started before those reads, stopped after). ``mitmdump``: the path of
    a ``mitmdump`` read as a third route in every round.
    """
    upstream, line = start_child(child_argv("proxy", "--serve"))
    base = f"http://127.0.0.1:{int(line)}"
    proxy: _Proxy | None = None
    mitm: _Mitmdump | None = None
    run = _Run()
    try:
        proxy = _Proxy(base)
        mitm = _Mitmdump(mitmdump, base) if mitmdump else None
        urls = {"direct": base, "proxy": proxy.url, **({"mitmdump": mitm.url} if mitm else {})}
        routes = tuple(urls)
        paths = {"paced": (f"/paced/{paced}/{round(interval_ms * 1000)}", paced), "burst": (f"/burst/{burst}", burst)}
        for route in routes:  # warm up (not measured): imports, the judging worker's start, the first connections
            stamps, lines = asyncio.run(_read(urls[route] + paths["burst"][0]))
            if route == "proxy":
                proxy.turn_ended()
        for r in range(rounds):
            order = routes if r % 2 == 0 else tuple(reversed(routes))  # no route always goes first
            for kind, (path, count) in paths.items():
                for route in order:
                    _read_through(run, kind, route, urls[route] + path, count, proxy, mitm)
            if neighbour:
                busy = _Neighbour()
                try:
                    time.sleep(0.2)  # let it get going: the scheduler has to be sharing the cores already
                    loaded = ("direct", "proxy", *(("mitmdump",) if mitm else ()))
                    for route in loaded if r % 2 == 0 else tuple(reversed(loaded)):
                        _read_through(run, "burst", f"{route} + neighbour", urls[route] + paths["burst"][0], burst,
                                      proxy, None)
                finally:
                    busy.close()
    finally:
        if mitm is not None:
            mitm.close()
        if proxy is not None:
            proxy.close()
        stop_child(upstream)
    return _summary(run, burst, paced, interval_ms, rounds, neighbour, mitmdump)


def _paired(run: _Run, kind: str, top: str, bottom: str) -> float:
    """The median of each round's ``top``/``bottom`` throughput (the two reads of a round are side by side)."""
    pairs = zip(run.streams[kind][top], run.streams[kind][bottom], strict=True)
    return statistics.median(a["chunks_per_s"] / b["chunks_per_s"] for a, b in pairs)


def _summary(run: _Run, burst: int, paced: int, interval_ms: float, rounds: int, neighbour: bool,
             mitmdump: str | None) -> dict[str, Any]:
    medians = {kind: {route: {key: statistics.median(m[key] for m in results) for key in results[0]}
                      for route, results in by_route.items()} for kind, by_route in run.streams.items()}
    paced_latency = {route: m["median_latency_ms"] for route, m in medians["paced"].items()}
    added = paced_latency["proxy"] - paced_latency["direct"]
    ratio = _paired(run, "burst", "proxy", "direct")
    verdict_s = statistics.median(run.verdict_s)
    verdict_cpu = statistics.median(run.verdict_cpu_us)
    result: dict[str, Any] = {
        "burst_chunks": burst, "paced_chunks": paced, "interval_ms": interval_ms, "rounds": rounds,
        "medians": medians, "runs": run.streams,
        "added_latency_ms": added, "latency_target_ms": LATENCY_TARGET_MS,
        "throughput_ratio": ratio, "throughput_target": THROUGHPUT_TARGET,
        "time_to_verdict_s": verdict_s, "time_to_verdict_runs_s": run.verdict_s,
        "time_to_verdict_target_s": VERDICT_TARGET_S,
        "proxy_cpu_us_per_chunk": statistics.median(run.proxy_cpu_us),
        "verdict_cpu_us_per_chunk": verdict_cpu, "verdict_cpu_target_us": VERDICT_CPU_TARGET_US,
        "load_average": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
    }
    ok = (added <= LATENCY_TARGET_MS and ratio >= THROUGHPUT_TARGET and verdict_s <= VERDICT_TARGET_S
          and verdict_cpu <= VERDICT_CPU_TARGET_US)
    if neighbour:
        result["throughput_ratio_with_neighbour"] = _paired(run, "burst", "proxy + neighbour", "direct + neighbour")
    if mitmdump:
        mitm_added = paced_latency["mitmdump"] - paced_latency["direct"]
        versus = _paired(run, "burst", "proxy", "mitmdump")
        result.update({"mitmdump": mitmdump, "mitmdump_added_latency_ms": mitm_added,
                       "throughput_vs_mitmdump": versus, "vs_mitmdump_target": VS_MITMDUMP_TARGET,
                       "mitmdump_cpu_us_per_chunk": statistics.median(run.mitm_cpu_us)})
        ok = ok and versus >= VS_MITMDUMP_TARGET and added < mitm_added
        if neighbour:
            result["throughput_vs_mitmdump_with_neighbour"] = _paired(run, "burst", "proxy + neighbour",
                                                                      "mitmdump + neighbour")
    result["ok"] = ok
    return result


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--burst", type=int, default=DEFAULT_BURST, help=f"chunks of the burst stream (default {DEFAULT_BURST})")
    parser.add_argument("--paced", type=int, default=DEFAULT_PACED, help=f"chunks of the paced stream (default {DEFAULT_PACED})")
    parser.add_argument("--interval-ms", type=float, default=DEFAULT_INTERVAL_MS,
                        help=f"pause between paced chunks (default {DEFAULT_INTERVAL_MS:g} ms)")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS,
                        help=f"rounds of each stream and route (default {DEFAULT_ROUNDS})")
    parser.add_argument("--neighbour", "--load", dest="neighbour", action="store_true",
                        help="each round also reads the burst with a CPU-bound process running beside it "
                             "(the throughput ratio on a busy machine)")
    parser.add_argument("--vs", choices=("mitmdump",), help="also read every stream through mitmproxy's mitmdump "
                                                            "(pip install 'callscope[mitmproxy]')")
    parser.add_argument("--mitmdump", metavar="PATH", help="the mitmdump to run with --vs mitmdump (default: the one "
                                                           "beside this Python, else on PATH)")


def run(args: argparse.Namespace) -> int:
    if args.burst < 2 or args.paced < 2 or args.rounds < 1 or not 0.1 <= args.interval_ms <= 1000:
        raise BenchError("--burst and --paced must be at least 2, --rounds positive, --interval-ms 0.1 to 1000")
    mitmdump = None
    if args.vs == "mitmdump" or args.mitmdump:
        mitmdump = mitmdump_path(args.mitmdump)
        if mitmdump is None:
            raise BenchError(f"no mitmdump {'at ' + args.mitmdump if args.mitmdump else 'installed'}: "
                             "pip install 'callscope[mitmproxy]' (or pass --mitmdump PATH)")
    try:
        result = measure(args.burst, args.paced, args.interval_ms, args.rounds, args.neighbour, mitmdump)
    except RuntimeError as exc:  # a route that failed to stream, a proxy that did not start: one line
        raise BenchError(str(exc)) from None
    if args.json:
        print(json.dumps({"bench": "proxy", **result}, indent=2))
        return 0 if result["ok"] else 1
    _print(result)
    return 0 if result["ok"] else 1


def _print(result: dict[str, Any]) -> None:
    m = result["medians"]
    verdict_cpu, proxy_cpu = result["verdict_cpu_us_per_chunk"], result["proxy_cpu_us_per_chunk"]
    print(f"proxy bench: loopback upstream, `callscope proxy` recording and judging every turn, "
          f"{result['rounds']} rounds (medians; load average {result['load_average']} on {result['cpus']} CPUs)")
    print(f"  {'route':<20} {'paced latency/chunk':>20} {'burst chunks/s':>16}   CPU per burst chunk")
    for route, burst in m["burst"].items():
        paced = m["paced"].get(route)
        latency = f"{paced['median_latency_ms']:>17.3f} ms" if paced else f"{'':>20}"
        cpu = ""
        if route == "proxy":
            cpu = f"{proxy_cpu:.1f} µs relaying and recording + {verdict_cpu:.1f} µs verdict (worker, nice 19)"
        elif route == "mitmdump":
            cpu = f"{result['mitmdump_cpu_us_per_chunk']:.1f} µs"
        print(f"  {route:<20} {latency} {burst['chunks_per_s']:>16,.0f}   {cpu}")
    latency_ok = result["added_latency_ms"] <= LATENCY_TARGET_MS
    throughput_ok = result["throughput_ratio"] >= THROUGHPUT_TARGET
    print(f"  added latency per chunk {result['added_latency_ms']:.3f} ms (target <= {LATENCY_TARGET_MS:g} ms): "
          f"{'OK' if latency_ok else 'ABOVE TARGET'}")
    print(f"  throughput through the proxy {result['throughput_ratio']:.2f}x direct (target >= {THROUGHPUT_TARGET}x): "
          f"{'OK' if throughput_ok else 'BELOW TARGET'}")
    if "throughput_ratio_with_neighbour" in result:
        print(f"  with a CPU-bound neighbour process: {result['throughput_ratio_with_neighbour']:.2f}x direct "
              f"(the same neighbour beside both routes; the verdict worker runs at nice 19)")
    if "throughput_vs_mitmdump" in result:
        versus, mitm_added = result["throughput_vs_mitmdump"], result["mitmdump_added_latency_ms"]
        print(f"  against mitmdump: {versus:.2f}x its throughput (target >= {VS_MITMDUMP_TARGET:g}x): "
              f"{'OK' if versus >= VS_MITMDUMP_TARGET else 'BELOW TARGET'}; it adds {mitm_added:.3f} ms per chunk "
              f"({'more' if mitm_added > result['added_latency_ms'] else 'LESS'} than the proxy)")
    if "throughput_vs_mitmdump_with_neighbour" in result:
        print(f"  against mitmdump with the same neighbour: {result['throughput_vs_mitmdump_with_neighbour']:.2f}x "
              "its throughput")
    ttv = result["time_to_verdict_s"]
    print(f"  time to verdict after a {result['burst_chunks']:,}-chunk turn: {ttv:.2f} s, the client's last chunk to "
          f"the proxy's line (target <= {VERDICT_TARGET_S:g} s): {'OK' if ttv <= VERDICT_TARGET_S else 'ABOVE TARGET'}")
    print(f"  verdict CPU {verdict_cpu:.1f} µs per chunk (target <= {VERDICT_CPU_TARGET_US:g} µs): "
          f"{'OK' if verdict_cpu <= VERDICT_CPU_TARGET_US else 'ABOVE TARGET'}")


if __name__ == "__main__":  # pragma: no cover - the upstream side of the benchmark
    if sys.argv[1:] != ["--serve"]:
        sys.exit("usage: python -m callscope.benchmarks.proxy --serve")
    asyncio.run(_serve())
