"""The loopback upstream the capture and proxy benches share: a bare SSE server in its own process.

A bench runs its server as a child (``python -m callscope.benchmarks.<bench> --serve ...``, so it
does not share the bench's GIL): :func:`start_server` answers every request with a chunked
``text/event-stream`` whose body the bench's own ``respond`` writes, prints its port for the
parent, and the parent talks to it through :func:`start_child` and :func:`stop_child`. The
server ends by itself (the bench says when), so nothing outlives a failed round.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Awaitable, Callable

RESPONSE_HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                 b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n")
LAST_CHUNK = b"0\r\n\r\n"

#: Writes a response's body (HTTP chunks) for the request whose head is given.
Respond = Callable[[bytes, asyncio.StreamWriter], Awaitable[None]]


def http_chunk(payload: bytes) -> bytes:
    """One HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(payload), payload)


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """The request's head; its body is read and dropped."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for header in head.split(b"\r\n"):
        if header.lower().startswith(b"content-length:"):
            length = int(header.split(b":", 1)[1])
    await reader.readexactly(length)
    return head


async def start_server(respond: Respond, answered: Callable[[], None] = lambda: None) -> asyncio.Server:
    """Serve on 127.0.0.1 and a free port, printed on stdout; ``answered`` after each connection is closed."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await read_request(reader)
            writer.write(RESPONSE_HEAD)
            await respond(head, writer)
            writer.write(LAST_CHUNK)
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            try:  # every byte out before the last request lets the process exit
                await writer.wait_closed()
            except (ConnectionError, OSError):
                pass
            answered()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(server.sockets[0].getsockname()[1], flush=True)
    return server


def start_child(argv: list[str], banner_on_stderr: bool = False) -> tuple[subprocess.Popen[str], str]:
    """Start a server process and read its first line (a port, or a banner on stderr)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE if banner_on_stderr else None,
                            text=True)
    stream = proc.stderr if banner_on_stderr else proc.stdout
    assert stream is not None
    line = stream.readline()
    if not line.strip():
        proc.kill()
        proc.wait(5)
        raise RuntimeError(f"{' '.join(argv[:4])}... did not start")
    return proc, line


def stop_child(proc: subprocess.Popen[str], grace: float = 30.0) -> None:
    """End a server process: ask, then wait ``grace`` seconds, then kill."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)
