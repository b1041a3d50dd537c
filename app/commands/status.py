"""One status line on a terminal's stderr for the steps that take seconds (like pip and cargo).

``callscope run`` used to sit silent for the 10-15 s before its first token,
and a large trace loads for seconds. On a terminal a single line on stderr
says what is happening, rewritten in place with ``\\r`` (never more than
:data:`MAX_RATE` times a second) and erased before the report is printed, so
the report reads exactly as without it. Anywhere else (stderr a pipe or a
file, or ``--json`` asked for) every call is a no-op: scripts and logs never
see a status line. Qt-free, and imports nothing of the engine.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from types import TracebackType
from typing import Any, TextIO

#: Most redraws per second (per-token updates are dropped in between).
MAX_RATE = 10
#: From this size on, reading and analysing a file shows a status line (smaller ones take well under a second).
LARGE_INPUT_BYTES = 1 << 20


def wants_status(args: Any, stream: TextIO) -> bool:
    """Whether a status line belongs on ``stream``: a terminal, and the verb was not asked for ``--json``."""
    if getattr(args, "json", False):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class StatusLine:
    """A line on stderr rewritten in place; every method is a no-op when it is disabled.

    :meth:`show` redraws now (a new step); :meth:`update` redraws at most
    :data:`MAX_RATE` times a second (progress within a step; check :meth:`due`
    first to skip formatting text nobody sees); ``elapsed=True`` makes a
    background thread append the seconds spent in the step, so a single long
    call (a prompt evaluation, a parse) still shows signs of life. Used as a
    context manager it erases itself at the end, even on an error.
    """

    def __init__(self, enabled: bool, stream: TextIO | None = None, interval: float = 1.0 / MAX_RATE) -> None:
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self._width = _columns(self.stream) if enabled else 0
        self._lock = threading.Lock()
        self._shown = 0  # characters of the line on screen
        self._last = float("-inf")  # when it was last drawn (time.monotonic)
        self._text = ""
        self._since: float | None = None  # start of the current step while elapsed time is shown
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    @classmethod
    def for_args(cls, args: Any, stream: TextIO | None = None) -> StatusLine:
        """The status line of a verb: enabled on a terminal's stderr unless ``--json``."""
        stream = stream if stream is not None else sys.stderr
        return cls(wants_status(args, stream), stream)

    # ------------------------------------------------------------ drawing

    def show(self, text: str, elapsed: bool = False) -> None:
        """Start a step: draw ``text`` now; with ``elapsed`` keep adding the seconds spent in it."""
        if not self.enabled:
            return
        with self._lock:
            self._text = text
            self._since = time.monotonic() if elapsed else None
            self._draw(text)
        if elapsed:
            self._start_ticker()

    def due(self) -> bool:
        """Whether an :meth:`update` now would be drawn (enabled and the throttle interval has passed)."""
        return self.enabled and time.monotonic() - self._last >= self.interval

    def update(self, text: str) -> None:
        """Progress within a step: redraw unless the line was drawn less than ``interval`` ago."""
        if not self.due():
            return
        with self._lock:
            self._text, self._since = text, None
            self._draw(text)

    def clear(self) -> None:
        """Erase the line (before the report, or anything else, is printed)."""
        if not self.enabled:
            return
        self._stop_ticker()
        with self._lock:
            self._since = None
            if self._shown:
                self._write("\r" + " " * self._shown + "\r")
                self._shown = 0

    def __enter__(self) -> StatusLine:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.clear()

    # ------------------------------------------------------------ internals

    def _draw(self, text: str) -> None:
        """Overwrite the line with ``text`` (cut to the terminal width, so it never wraps); lock held."""
        text = text[: max(self._width - 1, 10)]
        pad = " " * max(self._shown - len(text), 0)
        self._write("\r" + text + pad)
        self._shown = len(text)
        self._last = time.monotonic()

    def _write(self, data: str) -> None:
        try:
            self.stream.write(data)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: the status is not worth an error
            self.enabled = False

    def _start_ticker(self) -> None:
        if self._ticker is not None:
            return
        self._stop.clear()
        self._ticker = threading.Thread(target=self._tick, name="callscope-status", daemon=True)
        self._ticker.start()

    def _stop_ticker(self) -> None:
        if self._ticker is None:
            return
        self._stop.set()
        self._ticker.join()
        self._ticker = None

    def _tick(self) -> None:
        """Background: redraw the current step with its elapsed seconds until cleared."""
        while not self._stop.wait(self.interval):
            with self._lock:
                if self._since is not None and self.enabled:
                    self._draw(f"{self._text} {time.monotonic() - self._since:.1f} s")


def _columns(stream: TextIO) -> int:
    """The terminal's width (80 when it does not say: a fresh pseudo-terminal reports 0)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


def large_input(path: str, threshold: int = LARGE_INPUT_BYTES) -> int | None:
    """The size of ``path`` when it is large enough to deserve a status line, else None (also when unreadable)."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return None
    return size if size >= threshold else None


def megabytes(size: int) -> str:
    """``12.3 MB`` (binary megabytes, as callscope prints model sizes)."""
    return f"{size / (1 << 20):.1f} MB"
