"""Where a finished turn is judged: never on the proxy's event loop, and (for the CLI) never at the traffic's expense.

Judging a stream runs the client profiles on it (the official openai SDK
replaying every event), which costs far more CPU than relaying it did: a
5,000-chunk turn is relayed in milliseconds and judged in a second. A client
reading that turn is often still busy with it when the proxy is done, so on
a machine with few cores a judgment that competes for the CPU slows the very
traffic the proxy must not touch.

- :class:`ThreadJudge` judges in a worker thread of this process and leaves
  the analyses on the turn (the window shows them; tests read them).
- :class:`ProcessJudge` judges in one worker process at the lowest CPU
  priority (``nice 19``), started with the proxy, so the client and the relay
  always come first; only the turn's summary line, index record and report
  come back (a stream's analyses are megabytes to pickle). The command line
  uses it. If the worker cannot run, the turn is judged in a thread instead.

  The worker is handed a streamed turn's body while it streams, a batch of
  network reads at a time (:meth:`ProcessJudge.feeder`: bytes as they were
  read, cheap to send; the worker splits and stamps the lines as the proxy
  does), and reads them at once: the stream checker is
  incremental, so at the turn's end only its last lines and the verdicts are
  left to do, and the verdict line comes right after the stream instead of a
  whole stream's checking later. At nice 19 that reading takes only CPU the
  relay and its client leave idle; on a busy machine it waits, and forwarding
  is never slowed for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import multiprocessing
import os
import signal
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from callscope.engine.capture.client import stamped
from callscope.engine.capture.proxy.lines import LineStamper
from callscope.engine.capture.proxy.turn import Turn
from callscope.engine.capture.redact import Redactor
from callscope.engine.core.bulk import FullCollectionHold
from callscope.engine.core.lifetime import die_with_parent
from callscope.engine.streams.protocols import expected_choices

#: A streamed turn's reads go to the worker when this many bytes are waiting, or when the oldest is this old.
FEED_BYTES = 1 << 20
FEED_AFTER_S = 0.05


class ThreadJudge:
    """Judges in a worker thread; the turn keeps its analyses."""

    def start(self) -> None:
        pass

    def feeder(self, turn: Turn, atomic_silence_ms: float, clients: tuple[str, ...] | None,
               redactor: Redactor) -> Callable[[float, bytes], None] | None:
        """Nothing to feed: the thread judges a turn whole, at its end."""
        return None

    async def judge(self, turn: Turn, atomic_silence_ms: float, clients: tuple[str, ...] | None) -> None:
        await asyncio.to_thread(turn.judge, atomic_silence_ms, clients)

    def close(self) -> None:
        pass


class ProcessJudge:
    """Judges in a low-priority worker process; the turn gets its summary, index record and (``report``) report."""

    def __init__(self, report: bool = False) -> None:
        self.report = report
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._feeds: dict[int, _Feed] = {}  # streamed turns the worker is reading, by number

    def start(self) -> None:
        """Start the worker now (it imports the stream checker once), so the first turn is not judged late."""
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_lowest_priority,
                initargs=(os.getpid(),))
            self._pool.submit(_warm_up)

    def feeder(self, turn: Turn, atomic_silence_ms: float, clients: tuple[str, ...] | None,
               redactor: Redactor) -> Callable[[float, bytes], None] | None:
        """Start reading a streamed turn in the worker now; the returned callable takes each read of its body.

        Called on the proxy's event loop when the turn's answer turns out to be a stream; then called
        with ``(ms, decoded bytes)`` for every read the proxy splits into lines, in order. The worker
        splits them the same way (a :class:`~.lines.LineStamper` masking the same secrets). The turn's
        own lines stay with it: if the worker fails, the turn is judged whole in a thread at its end.
        """
        self.start()
        assert self._pool is not None
        name = turn.record_path.stem if turn.record_path is not None else f"turn-{turn.number}"
        options = {"url": turn.url, "atomic_silence_ms": atomic_silence_ms, "protocol": turn.protocol,
                   "clients": clients, "expected_choices": expected_choices(turn.body or {})}
        try:
            self._pool.submit(_begin, turn.number, name, turn.url, options, redactor.secrets)
        except (BrokenProcessPool, RuntimeError):
            return None
        feed = self._feeds[turn.number] = _Feed(self._pool, turn.number, asyncio.get_running_loop())
        return feed.take

    async def judge(self, turn: Turn, atomic_silence_ms: float, clients: tuple[str, ...] | None) -> None:
        self.start()
        assert self._pool is not None
        loop = asyncio.get_running_loop()
        feed = self._feeds.pop(turn.number, None)
        try:
            if feed is not None and feed.send() and turn.result is not None:
                result = turn.result
                shell = dataclasses.replace(turn, result=None)  # its lines are in the worker already
                verdict = await loop.run_in_executor(self._pool, _finished, turn.number, shell, result.ended_ms,
                                                     result.error_message, result.cancelled, self.report)
            else:
                verdict = await loop.run_in_executor(self._pool, _judged, turn, atomic_silence_ms, clients,
                                                     self.report)
        except (BrokenProcessPool, OSError, RuntimeError, KeyError):  # the worker died or cannot start: judge here
            await asyncio.to_thread(turn.judge, atomic_silence_ms, clients)
            return
        turn.settle(*verdict)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class _Feed:
    """A streamed turn's reads on their way to the worker: gathered, and sent a batch at a time.

    Sending is a pickle and a pipe write per batch of reads (bytes: a copy each), not per line; a
    batch goes when it is big or its oldest read has waited :data:`FEED_AFTER_S` (the worker then
    reads while the stream goes on).
    """

    __slots__ = ("pool", "key", "loop", "pending", "size", "timer", "broken")

    def __init__(self, pool: concurrent.futures.ProcessPoolExecutor, key: int, loop: asyncio.AbstractEventLoop
                 ) -> None:
        self.pool = pool
        self.key = key
        self.loop = loop
        self.pending: list[tuple[float, bytes]] = []
        self.size = 0
        self.timer: asyncio.TimerHandle | None = None
        self.broken = False

    def take(self, ms: float, data: bytes) -> None:
        if self.broken:
            return
        self.pending.append((ms, data))
        self.size += len(data)
        if self.size >= FEED_BYTES:
            self.send()
        elif self.timer is None:
            self.timer = self.loop.call_later(FEED_AFTER_S, self.send)

    def send(self) -> bool:
        """Hand what is waiting to the worker; False once that has failed (the turn is then judged whole)."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.pending and not self.broken:
            batch, self.pending, self.size = self.pending, [], 0
            try:
                self.pool.submit(_feed, self.key, batch)
            except (BrokenProcessPool, RuntimeError):
                self.broken = True
        return not self.broken


def _lowest_priority(parent_pid: int) -> None:
    """The worker's initializer: the lowest CPU priority, Ctrl-C is the parent's to handle (it stops us), and
    a ``kill -9`` of the parent ends the worker too (and with it the ``resource_tracker``, whose last writer it is)."""
    die_with_parent(parent_pid)
    with contextlib.suppress(AttributeError, OSError):
        os.nice(19)
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _warm_up() -> None:
    """Import the stream checker and the client profiles, then freeze what is alive (modules, tables): the
    cyclic collector never rescans it. Measured on ``bench proxy``'s 20,000-chunk turn: about 3 µs a chunk."""
    import gc

    from callscope.engine.capture import recording  # noqa: F401 - the stream checker and the client profiles

    gc.collect()
    gc.freeze()


#: In the worker: no full collection while a turn is being read (it would rescan the whole turn so far, again and
#: again: the verdict's CPU grew with the turn's length, 24 µs a chunk at 60,000 chunks against 11 without).
_GC_HOLD = FullCollectionHold()


#: In the worker: each streamed turn being read, by turn number: its line splitter and its stream checker.
_READING: dict[int, tuple[LineStamper, Any]] = {}


def _begin(key: int, name: str, url: str, options: dict[str, Any], secrets: tuple[str, ...]) -> None:
    """In the worker: a streamed turn started; its checker is made as the turn's end would make it."""
    from callscope.engine.streams.conformance import CaptureAnalyzer

    _READING[key] = (LineStamper(Redactor(secrets)), CaptureAnalyzer(name, url, **options))
    _GC_HOLD.hold()


def _feed(key: int, reads: list[tuple[float, bytes]]) -> None:
    """In the worker: more reads of a turn's body, split into lines and stamped as the proxy split them
    (to the microsecond, as its recording keeps them)."""
    reading = _READING.get(key)
    if reading is None:
        return
    stamper, analyzer = reading
    for ms, data in reads:
        analyzer.feed_lines(stamped(stamper.feed(ms, data)))


def _finished(key: int, turn: Turn, ended_ms: float | None, error: str | None, cancelled: bool,
              report: bool) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """In the worker: the turn read as it streamed has ended; its verdicts, as :func:`_judged` gives them."""
    stamper, analyzer = _READING.pop(key)  # a KeyError (a new worker) has the proxy judge the whole turn itself
    try:
        if ended_ms is not None:
            analyzer.feed_lines(stamped(stamper.rest(ended_ms)))  # a last line without its end, as the proxy kept it
        turn.analyses = analyzer.analyses(error=error, cancelled=cancelled)
        return _verdict(turn, report)
    finally:
        if not _READING:
            _GC_HOLD.release()  # the deferred full collection runs later, after this verdict has gone


def _judged(turn: Turn, atomic_silence_ms: float, clients: tuple[str, ...] | None,
            report: bool) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """In the worker: the turn's verdicts, reduced to what the CLI prints."""
    turn.judge(atomic_silence_ms, clients)
    return _verdict(turn, report)


def _verdict(turn: Turn, report: bool) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    analyses = turn.analyses
    document = None
    if report and analyses:
        from callscope.engine.analysis.report import report_json

        document = report_json(analyses)
    return turn.summary(), turn.index_record(), document
