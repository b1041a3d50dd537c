"""A worker process that ends with the process that started it, however that one ends.

callscope starts helper processes (the proxy's verdict worker, the chat
template renderer). A parent that exits cleanly stops them; one killed with
``kill -9`` cannot, and a worker blocked on a queue whose write end it holds
itself never notices. :func:`die_with_parent` makes the kernel send the worker
``SIGKILL`` when its parent dies (Linux ``PR_SET_PDEATHSIG``), and elsewhere
starts a daemon thread that watches the parent's pid.

``PR_SET_PDEATHSIG`` fires when the parent *thread* that started the worker
ends: a worker started from a thread that may end before the process does
(the window's analysis thread) asks for ``any_thread`` and is watched by the
thread instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1
_POLL_SECONDS = 0.5


def die_with_parent(parent_pid: int, *, any_thread: bool = False) -> None:
    """Call first thing in the worker, with the parent's pid (taken before the worker started)."""
    if any_thread or not _kernel_kills_orphan():
        threading.Thread(target=_watch, args=(parent_pid,), name="callscope-parent-watch", daemon=True).start()
    if os.getppid() != parent_pid:  # the parent died before the request above was in place
        os._exit(1)


def _kernel_kills_orphan() -> bool:
    """Ask Linux to SIGKILL this process when its parent exits; False where that cannot be asked."""
    if not sys.platform.startswith("linux"):
        return False
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    return False


def _watch(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_POLL_SECONDS)
    os._exit(1)


__all__ = ["die_with_parent"]
