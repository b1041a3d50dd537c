"""A real HTTP/1.1 server on 127.0.0.1 that plays canned SSE streams, for the capture tests.

It runs asyncio streams in a background thread and plays a named
:class:`Scenario` per request path (``/s/<name>/...``), so each test sees
exactly the bytes it set up, with the pauses, aborts and stalls it asked for.
``{AUTH}`` in a scenario's lines, body, tail or drip is replaced by the
request's Authorization header, as a careless server echoes it back.
All traffic stays on 127.0.0.1 and every wait is bounded (``max_s``).
"""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
from dataclasses import dataclass, field
from typing import Any

STREAM_ID = "chatcmpl-canned"


@dataclass
class Scenario:
    """What the server answers: status, content type, then (pause seconds, line) pairs and how it ends."""

    lines: list[tuple[float, str]] = field(default_factory=list)
    status: int = 200
    content_type: str = "text/event-stream"
    body: bytes = b""  # for non-streaming answers
    end: str = "clean"  # clean | abort (no terminating chunk) | stall (then close)
    stall_s: float = 3.0
    tail: bytes = b""  # raw bytes after the lines, e.g. a last line without its newline
    drip: bytes = b""  # then these bytes, one HTTP chunk of one byte every ``drip_s`` (a trickling server)
    drip_s: float = 0.05
    max_s: float = 10.0  # the answer is cut off after this long, whatever it is doing


class CannedServer:
    """HTTP/1.1 on 127.0.0.1:<free port>; ``/s/<name>/...`` plays scenario ``name``."""

    def __init__(self) -> None:
        self.scenarios: dict[str, Scenario] = {}
        self.requests: list[dict[str, Any]] = []
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self.ssl_context: ssl.SSLContext | None = None

    def start(self, ssl_context: ssl.SSLContext | None = None) -> CannedServer:
        self.ssl_context = ssl_context
        self._thread.start()
        assert self._ready.wait(10), "canned server did not start"
        return self

    def url(self, name: str, scheme: str = "http") -> str:
        return f"{scheme}://127.0.0.1:{self.port}/s/{name}"

    def play(self, name: str, scenario: Scenario) -> str:
        self.scenarios[name] = scenario
        return self.url(name)

    def stop(self) -> None:
        async def close() -> None:
            assert self._server is not None
            self._server.close()
            others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in others:
                task.cancel()
            await asyncio.gather(*others, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)

        async def boot() -> None:
            self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self.ssl_context)
            self.port = self._server.sockets[0].getsockname()[1]
            self._ready.set()

        self.loop.run_until_complete(boot())
        self.loop.run_forever()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await asyncio.wait_for(self._serve(reader, writer), self._longest())
        except (TimeoutError, ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        first = await reader.read(1)
        if first == b"\x16":  # a TLS ClientHello sent to this plain-HTTP server: answer like uvicorn does
            writer.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
            return
        head = first + await reader.readuntil(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in header_lines:
            if ":" in line:
                key, value = line.split(":", 1)
                headers[key.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        path = request_line.split(" ")[1]
        self.requests.append({"path": path, "headers": headers, "body": json.loads(body or b"null")})
        parts = path.split("/")
        scenario = self.scenarios.get(parts[2] if len(parts) > 2 and parts[1] == "s" else "")
        if scenario is None:
            scenario = Scenario(status=404, content_type="application/json", body=b'{"error": "no such scenario"}')
        auth = headers.get("authorization", "")
        echo = auth.encode("latin-1")
        reason = {200: "OK", 401: "Unauthorized", 404: "Not Found", 503: "Service Unavailable"}.get(
            scenario.status, "Status")
        if scenario.status != 200 or not scenario.content_type.startswith("text/event-stream"):
            answer = scenario.body.replace(b"{AUTH}", echo)
            drip = scenario.drip.replace(b"{AUTH}", echo)
            writer.write(
                f"HTTP/1.1 {scenario.status} {reason}\r\ncontent-type: {scenario.content_type}\r\n"
                f"content-length: {len(answer) + len(drip)}\r\nconnection: close\r\n\r\n".encode() + answer
            )
            await writer.drain()
            for byte in drip:  # a body that trickles in
                await asyncio.sleep(scenario.drip_s)
                writer.write(bytes([byte]))
                await writer.drain()
            return
        writer.write(
            f"HTTP/1.1 200 OK\r\ncontent-type: {scenario.content_type}\r\n"
            "transfer-encoding: chunked\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n".encode()
        )
        # lines as received (lines_of: blank lines end events) are sent line by line; a list without any blank
        # line is a list of events, each sent with its blank line
        raw_lines = any(not line for _, line in scenario.lines)
        for pause, line in scenario.lines:
            if pause:
                await asyncio.sleep(pause)
            payload = (line.replace("{AUTH}", auth) + ("\n" if raw_lines else "\n\n")).encode()
            writer.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            await writer.drain()
        if scenario.tail:
            tail = scenario.tail.replace(b"{AUTH}", echo)
            writer.write(b"%x\r\n%s\r\n" % (len(tail), tail))
            await writer.drain()
        for byte in scenario.drip.replace(b"{AUTH}", echo):
            await asyncio.sleep(scenario.drip_s)
            writer.write(b"1\r\n%c\r\n" % byte)
            await writer.drain()
        if scenario.end == "clean":
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        elif scenario.end == "stall":
            await asyncio.sleep(scenario.stall_s)
        # "abort": close without the terminating zero-length chunk

    def _longest(self) -> float:
        """The handler's bound: the longest any scenario may run (10 s unless one asks for more)."""
        return max([10.0, *(s.max_s for s in self.scenarios.values())])


# ====================================================================== canned chunks


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None) -> str:
    return "data: " + json.dumps(
        {
            "id": STREAM_ID,
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "canned",
            "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}],
        }
    )


def tool(index: int | None = 0, id: str | None = None, name: str | None = None, args: str | None = None) -> dict:
    entry: dict[str, Any] = {}
    if index is not None:
        entry["index"] = index
    if id is not None:
        entry["id"] = id
        entry["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    entry["function"] = function
    return {"tool_calls": [entry]}


ROLE = chunk({"role": "assistant", "content": None})
DONE = "data: [DONE]"
FINISH_TOOLS = chunk(finish="tool_calls")
ARGS = ['{"city": ', '"Paris", ', '"days": 3}']


def clean_call(index: int = 0, cid: str = "call_a", name: str = "get_weather", args: list[str] = ARGS) -> list[str]:
    return [chunk(tool(index, cid, name, args[0]))] + [chunk(tool(index, args=a)) for a in args[1:]]


def lines_of(*lines: str) -> list[tuple[float, str]]:
    """Each line an event, as received: its field lines (a line may hold several, ``event:`` then ``data:``),
    then the blank line that ends it."""
    return [(0.0, part) for line in lines for part in (*line.split("\n"), "")]


def timed(*pairs: tuple[float, str]) -> list[tuple[float, str]]:
    """``(ms, line)`` pairs, each line an event (a blank line after it, at the same time)."""
    return [(ms, part) for ms, line in pairs for part in (line, "")]


#: One stream per rule; each must produce exactly that rule (and nothing else).
RULE_STREAMS: dict[str, list[tuple[float, str]]] = {
    "id-repeated": lines_of(
        ROLE, chunk(tool(0, "call_a", "get_weather", ARGS[0])), chunk(tool(0, "call_a", args=ARGS[1])),
        chunk(tool(0, "call_a", args=ARGS[2])), FINISH_TOOLS, DONE,
    ),
    "id-changed": lines_of(
        ROLE, chunk(tool(0, "call_a", "get_weather", ARGS[0])), chunk(tool(0, "call_b", args=ARGS[1])),
        chunk(tool(0, args=ARGS[2])), FINISH_TOOLS, DONE,
    ),
    "name-repeated": lines_of(
        ROLE, chunk(tool(0, "call_a", "get_weather", ARGS[0])), chunk(tool(0, name="get_weather", args=ARGS[1])),
        chunk(tool(0, args=ARGS[2])), FINISH_TOOLS, DONE,
    ),
    "index-missing": lines_of(
        ROLE, chunk(tool(None, "call_a", "get_weather", ARGS[0])), chunk(tool(None, args=ARGS[1])),
        chunk(tool(None, args=ARGS[2])), FINISH_TOOLS, DONE,
    ),
    "index-reused": lines_of(
        ROLE, *clean_call(), chunk(tool(0, "call_b", "get_time", '{"tz": "UTC"}')), FINISH_TOOLS, DONE,
    ),
    "invalid-json-arguments": lines_of(
        ROLE, *clean_call(args=['{"city": ', '"Paris", "days": 3']), FINISH_TOOLS, DONE,
    ),
    "duplicated-arguments": lines_of(
        ROLE, *clean_call(), chunk(tool(0, args="".join(ARGS))), FINISH_TOOLS, DONE,
    ),
    "marker-in-content": lines_of(
        ROLE, chunk({"content": "Sure. <tool"}), chunk({"content": '_call>{"name": "x"}'}), chunk(finish="stop"), DONE,
    ),
    "atomic-tool-call": timed(
        (0.0, ROLE), (0.35, chunk(tool(0, "call_a", "get_weather", "".join(ARGS)))), (0.0, FINISH_TOOLS), (0.0, DONE),
    ),
    "finish-reason-mismatch": lines_of(ROLE, chunk({"content": "No tool needed."}), FINISH_TOOLS, DONE),
    "stream-truncated": lines_of(ROLE, *clean_call()),
    "invalid-chunk-json": lines_of(ROLE, *clean_call()[:2], "data: {not json", *clean_call()[2:], FINISH_TOOLS, DONE),
}
