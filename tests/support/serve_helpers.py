"""``callscope serve`` running on its own event loop in a background thread, for tests (real sockets, 127.0.0.1).

:class:`ServeThread` starts a :class:`~callscope.engine.serve.ServeServer` on a
free port and collects its turns (the proxy's :class:`ServerThread` and :class:`Collector`);
:meth:`ServeThread.wait_turns` blocks (bounded) until that many turns have ended.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
from typing import Any

from callscope.engine.serve import RecordingReplier, ServeConfig, ServeServer, load_source
from tests.support.proxy_helpers import ServerThread


class ServeThread(ServerThread):
    """``with ServeThread(replier) as serve:`` ... ``serve.url``; stopped (cleanly) on exit."""

    stop_timeout = 30.0
    wait_timeout = 60.0
    name = "serve"

    def __init__(self, replier: Any, **options: Any) -> None:
        super().__init__(lambda collector: ServeServer(ServeConfig(port=0, **options), replier, collector))

    @classmethod
    def of(cls, source: str, policy: str = "incremental", **options: Any) -> ServeThread:
        """Serving a recording (or a session folder) as ``callscope serve SOURCE`` does."""
        return cls(RecordingReplier(load_source(source, policy), atomic=policy == "atomic"), **options)

    @property
    def v1(self) -> str:
        return self.server.url + "/v1"

class ServeProcess:
    """``callscope serve ARGS`` as a real process on a free loopback port; its stderr lines kept; stopped on exit.

    ``with ServeProcess(["headline_701_tokens"]) as serve:`` ... ``serve.v1``; ``serve.lines`` are its stderr lines
    (the start line, one line per turn, the stop line).
    """

    def __init__(self, args: list[str], start_timeout: float = 120.0) -> None:
        self.args = [str(a) for a in args]
        self.start_timeout = start_timeout
        self.lines: list[str] = []
        self.url = ""
        self._proc: subprocess.Popen[str] | None = None
        self._changed = threading.Condition()

    def __enter__(self) -> ServeProcess:
        self._proc = subprocess.Popen([sys.executable, "-m", "callscope", "serve", *self.args,
                                       "--listen", "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      text=True)
        threading.Thread(target=self._read, daemon=True).start()
        if not self.wait_for(lambda: bool(self.url) or self._proc.poll() is not None, self.start_timeout) \
                or not self.url:
            self.__exit__()
            raise AssertionError("callscope serve did not start: " + " | ".join(self.lines))
        return self

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for line in self._proc.stderr:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                found = re.search(r" on (http://127\.0\.0\.1:\d+)/v1", line)
                if found and not self.url:
                    self.url = found.group(1)
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def wait_for(self, predicate: Any, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(predicate, timeout)

    def turn_lines(self) -> list[str]:
        return [line for line in self.lines if line.startswith("#")]

    @property
    def v1(self) -> str:
        return self.url + "/v1"

    def __exit__(self, *exc_info: object) -> None:
        proc = self._proc
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        self.wait_for(lambda: any(line.startswith("callscope serve: stopped") for line in self.lines), 5)
