"""What the proxy and ``callscope serve`` share: a loopback listener whose exchanges are turns.

Both servers (:class:`~callscope.engine.capture.proxy.server.ProxyServer` and
:class:`~callscope.engine.serve.server.ServeServer`) bind a socket, keep one task
per client connection, hand every turn to an observer as it starts, streams and
ends, judge each ended turn off the event loop and list it in the session
folder. Written once here so that a fix to how a turn is stopped, judged or
listed reaches both; each server keeps only how it answers a request.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from callscope.engine.capture.client import Line
from callscope.engine.capture.proxy.judge import ProcessJudge, ThreadJudge
from callscope.engine.capture.proxy.session import SessionFolder
from callscope.engine.capture.proxy.turn import Turn

#: asyncio's own default stream limit: what ``start_server`` uses when a server does not ask for more.
DEFAULT_READ_LIMIT = 2**16


class ProxyObserver(Protocol):
    """Who watches the turns (the CLI's printer, the window's Proxy source). Called on the proxy's event loop."""

    def turn_started(self, turn: Turn) -> None: ...

    def turn_lines(self, turn: Turn, lines: list[Line]) -> None: ...

    def turn_ended(self, turn: Turn) -> None: ...


class ListenerConfig(Protocol):
    """The settings a turn listener reads (both :class:`ProxyConfig` and :class:`ServeConfig` have them)."""

    @property
    def host(self) -> str: ...

    @property
    def port(self) -> int: ...

    @property
    def record_dir(self) -> Path | None: ...

    @property
    def atomic_silence_ms(self) -> float: ...

    @property
    def clients(self) -> tuple[str, ...] | None: ...


TurnT = TypeVar("TurnT", bound=Turn)


class TurnListener(Generic[TurnT]):
    """``await start()``; turns come and go; ``await stop()`` ends it. One instance per listening socket.

    A subclass answers a connection in :meth:`_accept` (between :meth:`_admit` and
    :meth:`_release`) and hands every finished turn to :meth:`_judge_later`.
    """

    #: The stream reader's buffer limit for each client connection.
    read_limit = DEFAULT_READ_LIMIT

    def __init__(self, config: ListenerConfig, observer: ProxyObserver | None = None,
                 judge: ThreadJudge | ProcessJudge | None = None) -> None:
        self.config = config
        self.observer = observer
        #: Where finished turns are judged (:mod:`.judge`): a worker thread unless told otherwise.
        self.judge = judge if judge is not None else ThreadJudge()
        self.session: SessionFolder | None = None
        #: Turns not yet ended, by number. Ended turns are the observer's to keep (or not): a server that
        #: ran for a day holds none of them, and the collector never walks a day's streams.
        self.open: dict[int, TurnT] = {}
        self.turn_count = 0
        self.streamed_count = 0
        self.host = config.host
        self.port = config.port
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()
        self._judging: set[asyncio.Task[Any]] = set()
        self._stopping = False

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    # ------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Bind (an OSError says why not: the port is taken, the address is not this machine's), start the judge,
        make the session folder."""
        config = self.config
        self._server = await asyncio.start_server(self._accept, config.host, config.port, limit=self.read_limit)
        self.port = self._server.sockets[0].getsockname()[1]
        self.judge.start()
        if config.record_dir is not None:
            self.session = SessionFolder(config.record_dir)

    async def stop(self) -> None:
        """Stop listening, end every open turn (recorded as ``cancelled``), finish judging, then close the judge."""
        self._stopping = True
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        if self._connections:
            await asyncio.gather(*self._connections, return_exceptions=True)
        if self._judging:
            await asyncio.gather(*self._judging, return_exceptions=True)
        self._close_resources()
        await asyncio.to_thread(self.judge.close)

    def _close_resources(self) -> None:
        """What a subclass holds beyond its connections (the proxy's upstream pool), closed before the judge."""

    # ------------------------------------------------------------ one connection

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    def _admit(self, writer: asyncio.StreamWriter) -> asyncio.Task[Any] | None:
        """Count a new connection in (None, and it is closed, once stopping), with Nagle off for prompt pieces."""
        task = asyncio.current_task()
        assert task is not None
        if self._stopping:
            writer.close()
            return None
        self._connections.add(task)
        _no_delay(writer)
        return task

    def _release(self, task: asyncio.Task[Any], writer: asyncio.StreamWriter) -> None:
        """The connection is over: no longer counted, and closed."""
        self._connections.discard(task)
        writer.close()

    # ------------------------------------------------------------ judging

    def _judge_later(self, turn: TurnT) -> None:
        """Judge and list the ended turn in a task of its own (kept until done, so ``stop()`` waits for it)."""
        task = asyncio.get_running_loop().create_task(self._judge(turn))
        self._judging.add(task)
        task.add_done_callback(self._judging.discard)

    async def _judge(self, turn: TurnT) -> None:
        self.open.pop(turn.number, None)
        if turn.streaming:
            self.streamed_count += 1
        if turn.streaming and turn.result is not None:
            await self.judge.judge(turn, self.config.atomic_silence_ms, self.config.clients)
        if self.session is not None:
            with contextlib.suppress(OSError):
                self.session.add(turn.index_record())
        self._notify("turn_ended", turn)

    def _notify(self, what: str, turn: TurnT) -> None:
        if self.observer is not None:
            getattr(self.observer, what)(turn)


def _no_delay(writer: asyncio.StreamWriter) -> None:
    """TCP_NODELAY on a TCP socket: each streamed piece leaves when written, not when Nagle lets it."""
    sock = writer.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
