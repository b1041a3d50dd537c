"""``callscope serve`` running on its own event loop in a background thread, for tests (real sockets, 127.0.0.1).

:class:`ServeThread` starts a :class:`~callscope.engine.serve.ServeServer` on a
free port and collects its turns (the proxy's :class:`Collector`);
:meth:`ServeThread.wait_turns` blocks (bounded) until that many turns have ended.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from callscope.engine.serve import RecordingReplier, ServeConfig, ServeServer, load_source
from tests.support.proxy_helpers import Collector


class ServeThread:
    """``with ServeThread(replier) as serve:`` ... ``serve.url``; stopped (cleanly) on exit."""

    def __init__(self, replier: Any, **options: Any) -> None:
        self.collector = Collector()
        self.server = ServeServer(ServeConfig(port=0, **options), replier, self.collector)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    @classmethod
    def of(cls, source: str, policy: str = "incremental", **options: Any) -> ServeThread:
        """Serving a recording (or a session folder) as ``callscope serve SOURCE`` does."""
        return cls(RecordingReplier(load_source(source, policy), atomic=policy == "atomic"), **options)

    def __enter__(self) -> ServeThread:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.loop.is_running():
            asyncio.run_coroutine_threadsafe(self.server.stop(), self.loop).result(30)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
            self.loop.close()

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def v1(self) -> str:
        return self.server.url + "/v1"

    def wait_turns(self, count: int, timeout: float = 60.0):
        with self.collector.changed:
            if not self.collector.changed.wait_for(lambda: len(self.collector.ended) >= count, timeout):
                raise AssertionError(f"serve never ended {count} turns")
        return sorted(self.collector.ended, key=lambda t: t.number)
