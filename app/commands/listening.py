"""What ``callscope proxy`` and ``callscope serve`` share as commands: bind, run until a signal, say how it went.

Both verbs start a turn server (:class:`~callscope.engine.capture.proxy.listener.TurnListener`), print one
start line, run until Ctrl-C or SIGTERM and print one stop line; written once so that both stop the same way
(the signal handlers in place before the start line, which a supervisor may answer with a signal at once).
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable
from typing import Protocol

from callscope.commands.common import CliError


class TurnServer(Protocol):
    """What the commands use of a proxy or serve server."""

    turn_count: int
    streamed_count: int

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def start_listening(server: TurnServer, host: str, port: int) -> None:
    """Bind the server; an address it cannot have (taken, not this machine's) is one line (exit 2)."""
    try:
        await server.start()
    except OSError as exc:
        raise CliError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


async def run_until_signalled(server: TurnServer, announce: Callable[[], None]) -> None:
    """Catch SIGINT and SIGTERM, ``announce()`` (the start line), wait for a signal, then stop the server
    (its open turns end with their end records)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    handled = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
            handled.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    announce()
    try:
        await stop.wait()
    finally:
        for sig in handled:
            loop.remove_signal_handler(sig)
        await server.stop()


def stopped_line(verb: str, server: TurnServer) -> str:
    """``callscope VERB: stopped after N turns (M streamed)``: the last line both verbs print."""
    count = server.turn_count
    return f"callscope {verb}: stopped after {count} turn{'s' if count != 1 else ''} ({server.streamed_count} streamed)"
