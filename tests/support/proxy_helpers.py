"""A recording proxy running on its own event loop in a background thread, for tests (real sockets, 127.0.0.1).

:class:`ProxyThread` starts a :class:`~callscope.engine.capture.proxy.ProxyServer`
and collects its turns; :meth:`ProxyThread.wait_turns` blocks (bounded) until
that many turns have ended, so a test never sleeps and never times anything.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self

from callscope.engine.analysis.report import report_json
from callscope.engine.capture.proxy import ProxyConfig, ProxyServer, Turn
from callscope.engine.recordings.replay import load_analyses


class Collector:
    """The observer: every started and ended turn, and the lines each streamed turn received, in order."""

    def __init__(self) -> None:
        self.started: list[Turn] = []
        self.ended: list[Turn] = []
        self.lines: dict[int, list[tuple[float, str]]] = {}
        self.changed = threading.Condition()

    def turn_started(self, turn: Turn) -> None:
        with self.changed:
            self.started.append(turn)
            self.changed.notify_all()

    def turn_lines(self, turn: Turn, lines) -> None:
        with self.changed:
            self.lines.setdefault(turn.number, []).extend(lines)
            self.changed.notify_all()

    def turn_ended(self, turn: Turn) -> None:
        with self.changed:
            self.ended.append(turn)
            self.changed.notify_all()


class ServerThread:
    """A turn server (the proxy, ``serve``) on its own event loop in a daemon thread, its turns collected.

    ``with`` starts it (bounded) and stops it cleanly (bounded) on exit. The proxy's and serve's test
    threads differ only in the server they make and how long they wait, so this is written once.
    """

    #: How long ``stop()`` may take, and how long :meth:`wait` waits by default, in seconds.
    stop_timeout = 20.0
    wait_timeout = 30.0
    #: What a failed :meth:`wait` calls the server.
    name = "the server"

    def __init__(self, make_server: Callable[[Collector], Any]) -> None:
        self.collector = Collector()
        self.server = make_server(self.collector)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def stop(self) -> None:
        if not self.loop.is_running():
            return
        asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(self.stop_timeout)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()

    @property
    def url(self) -> str:
        return self.server.url

    def wait(self, predicate: Callable[[Collector], Any], what: str, timeout: float | None = None) -> None:
        """Block until ``predicate(collector)`` holds (bounded: a broken server fails the test, never hangs it)."""
        timeout = self.wait_timeout if timeout is None else timeout
        with self.collector.changed:
            if not self.collector.changed.wait_for(lambda: predicate(self.collector), timeout):
                raise AssertionError(f"{self.name} never got there: {what}")

    def wait_turns(self, count: int, timeout: float | None = None) -> list[Turn]:
        self.wait(lambda c: len(c.ended) >= count, f"{count} ended turns", timeout)
        return sorted(self.collector.ended, key=lambda t: t.number)


class ProxyThread(ServerThread):
    """``with ProxyThread(upstream, record_dir) as proxy:`` ... ``proxy.url``; stopped (cleanly) on exit."""

    name = "the proxy"

    def __init__(self, upstream: str, record_dir: Path | None = None, judge=None, **options) -> None:
        super().__init__(lambda collector: ProxyServer(
            ProxyConfig(upstream, port=0, record_dir=record_dir, **options), collector, judge))

def replayed(turn) -> dict:
    """The report of the turn's recording read back, minus the one field that differs (the source path)."""
    report = report_json(load_analyses(turn.record_path))
    for run in report["runs"]:
        run["source"].pop("path")
    return report


def live(turn) -> dict:
    report = report_json(turn.analyses)
    for run in report["runs"]:
        run["source"].pop("path")
    return report
