"""The Serve source: ``callscope serve`` started from the window, its turns live, like the proxy's.

:class:`ServeController` is the proxy's controller (:class:`~callscope.live.proxy.ProxyController`:
the turns listed as they happen, the newest followed in the panes, growing
while it streams, then its verdict) around a :class:`~callscope.engine.serve.ServeServer`
instead of a proxy: each answer the server sends is a turn. The server runs
on the Qt event loop through qasync; a model to serve is loaded in a worker
thread first, so the window never waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from PySide6.QtCore import QObject

from callscope.engine.capture.proxy.judge import ThreadJudge
from callscope.engine.serve import ServeConfig, ServeServer
from callscope.live.proxy import ProxyController
from callscope.models.session import InspectorSession


class ServeController(ProxyController):
    """One server at a time; its answers listed as turns, one of them in the panes."""

    kind = "served turn"
    noun = "server"

    def __init__(self, session: InspectorSession, parent: QObject | None = None,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(session, parent, loop)
        self.replier: Any = None

    def start(self, config: ServeConfig, replier: Any = None) -> bool:  # type: ignore[override]
        """Serve what ``replier`` answers with (False if a server runs); ``listening`` or ``failed`` follows."""
        if self.active:
            return False
        self._reset()
        self.replier = replier
        self.server = ServeServer(config, replier, self, ThreadJudge())  # type: ignore[assignment]
        self._listen_soon()
        return True

    def attach(self, folder: Any) -> bool:
        raise ValueError("a server is started, not attached to: open its recording folder with File > Proxy")

    async def _listen(self, server: Any) -> None:
        start = getattr(self.replier, "start", None)
        if start is not None:  # a model: loaded in a worker thread, the window goes on
            self.status = f"loading {self.replier.label}…"
            self.listening.emit(self.status)
            try:
                await asyncio.to_thread(start)
            except Exception as exc:  # noqa: BLE001 - any load failure is one line
                self.server = None
                self._close_replier()
                self.failed.emit(f"cannot load {self.replier.label}: {exc}")
                self.stopped.emit()
                return
        await super()._listen(server)
        if self.server is None:
            self._close_replier()

    def _status_text(self, server: Any) -> str:
        return f"serving {self.replier.label} on {server.url}/v1"

    async def _stop(self, server: Any) -> None:
        await super()._stop(server)
        self._close_replier()

    def _close_replier(self) -> None:
        close = getattr(self.replier, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()
