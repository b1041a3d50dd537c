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
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import os
import signal
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from callscope.engine.capture.proxy.turn import Turn
from callscope.engine.core.lifetime import die_with_parent


class ThreadJudge:
    """Judges in a worker thread; the turn keeps its analyses."""

    def start(self) -> None:
        pass

    async def judge(self, turn: Turn, atomic_silence_ms: float, clients: tuple[str, ...] | None) -> None:
        await asyncio.to_thread(turn.judge, atomic_silence_ms, clients)

    def close(self) -> None:
        pass


class ProcessJudge:
    """Judges in a low-priority worker process; the turn gets its summary, index record and (``report``) report."""

    def __init__(self, report: bool = False) -> None:
        self.report = report
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    def start(self) -> None:
        """Start the worker now (it imports the stream checker once), so the first turn is not judged late."""
        if self._pool is None:
            self._pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"), initializer=_lowest_priority,
                initargs=(os.getpid(),))
            self._pool.submit(_warm_up)

    async def judge(self, turn: Turn, atomic_silence_ms: float, clients: tuple[str, ...] | None) -> None:
        self.start()
        assert self._pool is not None
        loop = asyncio.get_running_loop()
        try:
            verdict = await loop.run_in_executor(self._pool, _judged, turn, atomic_silence_ms, clients, self.report)
        except (BrokenProcessPool, OSError, RuntimeError):  # the worker died or cannot start: judge here
            await asyncio.to_thread(turn.judge, atomic_silence_ms, clients)
            return
        turn.settle(*verdict)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _lowest_priority(parent_pid: int) -> None:
    """The worker's initializer: the lowest CPU priority, Ctrl-C is the parent's to handle (it stops us), and
    a ``kill -9`` of the parent ends the worker too (and with it the ``resource_tracker``, whose last writer it is)."""
    die_with_parent(parent_pid)
    with contextlib.suppress(AttributeError, OSError):
        os.nice(19)
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _warm_up() -> None:
    from callscope.engine.capture import recording  # noqa: F401 - the stream checker and the client profiles


def _judged(turn: Turn, atomic_silence_ms: float, clients: tuple[str, ...] | None,
            report: bool) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """In the worker: the turn's verdicts, reduced to what the CLI prints."""
    analyses = turn.judge(atomic_silence_ms, clients)
    document = None
    if report and analyses:
        from callscope.engine.analysis.report import report_json

        document = report_json(analyses)
    return turn.summary(), turn.index_record(), document
