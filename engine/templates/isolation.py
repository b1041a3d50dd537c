"""Rendering untrusted chat templates where they can be stopped: the sandbox process, its limits, the render budget.

Every compile and render of a chat template goes to one worker process
(:mod:`callscope.engine.templates.sandbox`), started on first use and kept
(the template analysis renders dozens of variants, each a round trip of well
under a millisecond). A render gets a time limit; the worker interrupts itself
at it, and the parent kills it if it does not answer shortly after. The worker
has a memory limit and an output limit of its own. Whatever a template does,
its render ends within the limit, and the failure is one line.

The limits (:class:`RenderLimits`) come from ``CALLSCOPE_TEMPLATE_TIMEOUT``
(seconds) and ``CALLSCOPE_TEMPLATE_MEMORY`` (MiB), or from the command line
(``--template-timeout``, :func:`set_render_limits`).

**The render budget.** A render that hits a limit, or that the sandbox refuses
(``SecurityError``), is not one failed variant among others: the template is
hostile, and the whole operation (an analysis, a format choice, a prompt)
stops. Callers catch ``Exception`` per variant (a template that raises for two
calls is fine), so the stop travels as a ``BaseException`` (:class:`_Stopped`)
to the outermost :func:`render_budget` scope, which raises it as a
:class:`~callscope.engine.core.errors.HostileTemplate` there. The scope also
bounds the render time of the whole operation: the seconds of every render in
it add up to one limit, so a template that takes nearly the limit on every one
of thirty variants still ends in time.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, ParamSpec, TypeVar

from callscope.engine.core.errors import HostileTemplate, TemplateError
from callscope.engine.templates.sandbox import (
    ERROR,
    MEMORY,
    OUTPUT,
    RAISED,
    SECURITY,
    SYNTAX,
    TIME,
    encode_message,
)

TIMEOUT_ENV = "CALLSCOPE_TEMPLATE_TIMEOUT"
MEMORY_ENV = "CALLSCOPE_TEMPLATE_MEMORY"
DEFAULT_SECONDS = 5.0
DEFAULT_MEMORY_MIB = 512
DEFAULT_OUTPUT_MIB = 16
#: How long after its own limit the parent waits for the worker's answer before killing it.
_GRACE_SECONDS = 1.0
#: How long the worker may take to start (a loaded machine; not part of the render budget).
_START_SECONDS = 30.0

_MIB = 1 << 20
P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class RenderLimits:
    """What one operation's renders may take: seconds in all, memory of the worker, characters of output."""

    seconds: float = DEFAULT_SECONDS
    memory_mib: int = DEFAULT_MEMORY_MIB
    output_mib: int = DEFAULT_OUTPUT_MIB


def _from_environment() -> RenderLimits:
    limits = RenderLimits()
    seconds = _positive(os.environ.get(TIMEOUT_ENV))
    memory = _positive(os.environ.get(MEMORY_ENV))
    if seconds is not None:
        limits = replace(limits, seconds=seconds)
    if memory is not None:
        limits = replace(limits, memory_mib=max(64, int(memory)))
    return limits


def _positive(text: str | None) -> float | None:
    try:
        value = float(text) if text else None
    except ValueError:
        return None
    return value if value is not None and 0 < value < float("inf") else None


_limits: RenderLimits | None = None


def render_limits() -> RenderLimits:
    """The limits in force (the environment's, unless :func:`set_render_limits` changed them)."""
    global _limits
    if _limits is None:
        _limits = _from_environment()
    return _limits


def set_render_limits(seconds: float | None = None, memory_mib: int | None = None) -> RenderLimits:
    """Change the limits for this process (``--template-timeout``); a changed memory limit restarts the worker."""
    global _limits
    limits = render_limits()
    if seconds is not None:
        limits = replace(limits, seconds=seconds)
    if memory_mib is not None and memory_mib != limits.memory_mib:
        limits = replace(limits, memory_mib=memory_mib)
        _WORKER.stop()
    _limits = limits
    return limits


# ================================================================ the budget


class _Stopped(BaseException):
    """A hostile template stops the whole operation; becomes a HostileTemplate at the outermost budget scope."""

    def __init__(self, error: HostileTemplate) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(slots=True)
class _Budget:
    seconds: float
    spent: float = 0.0

    @property
    def left(self) -> float:
        return self.seconds - self.spent


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("callscope_render_budget", default=None)


@contextlib.contextmanager
def render_budget(seconds: float | None = None) -> Iterator[None]:
    """One operation's renders share ``seconds`` (default: the limit in force); nested scopes join the outer one."""
    if _BUDGET.get() is not None:
        yield
        return
    token = _BUDGET.set(_Budget(seconds if seconds is not None else render_limits().seconds))
    try:
        yield
    except _Stopped as stop:
        raise stop.error from None
    finally:
        _BUDGET.reset(token)


def within_render_budget(function: Callable[P, R]) -> Callable[P, R]:
    """``function``'s renders share one budget (see :func:`render_budget`)."""

    @functools.wraps(function)
    def bounded(*args: P.args, **kwargs: P.kwargs) -> R:
        with render_budget():
            return function(*args, **kwargs)

    return bounded


# ================================================================ compile and render


def compile_source(name: str, source: str) -> frozenset[str]:
    """The variables ``source`` reads from its context; a TemplateError (with its line) if it does not compile."""
    return frozenset(_bounded(name, lambda seconds: _WORKER.compile(source, seconds))["variables"])


def render_source(name: str, source: str, context: dict[str, Any]) -> str:
    """``source`` rendered with ``context`` (JSON-shaped: it travels as JSON) in the sandbox, within the budget."""
    max_output = render_limits().output_mib * _MIB
    return _bounded(name, lambda seconds: _WORKER.render(source, context, seconds, max_output))["text"]


def _bounded(name: str, ask: Callable[[float], dict[str, Any]]) -> dict[str, Any]:
    """``ask(seconds)`` within what is left of the budget (its time counted in it); a failed reply raised."""
    with render_budget():
        budget = _BUDGET.get()
        assert budget is not None
        _WORKER.start()  # a (re)start is not the template's time
        seconds = min(render_limits().seconds, budget.left)
        if seconds <= 0.001:
            raise _Stopped(HostileTemplate(name, None, f"its renders took longer than {_seconds(budget.seconds)} in all "
                                           f"(the limit: ${TIMEOUT_ENV} seconds)"))
        began = time.monotonic()
        try:
            reply = ask(seconds)
        finally:
            budget.spent += time.monotonic() - began
        if "error" in reply:
            _fail(name, reply, budget.seconds)
        return reply


def _fail(name: str, reply: dict[str, Any], seconds: float) -> None:
    """Raise the one-line error a failed reply stands for (hostile kinds stop the whole operation)."""
    kind, line, message = reply["error"], reply.get("line"), reply.get("message") or ""
    limits = render_limits()
    if kind in (SYNTAX, RAISED, ERROR):
        raise TemplateError(name, line, message)
    if kind == SECURITY:
        text = f"the sandbox refused it: {message}"
    elif kind == TIME:
        text = (f"rendering took longer than {_seconds(seconds)} and was stopped "
                f"(the limit: ${TIMEOUT_ENV} seconds)")
    elif kind == MEMORY:
        text = (f"rendering needed more than {limits.memory_mib} MiB of memory and was stopped "
                f"(the limit: ${MEMORY_ENV} MiB)")
    elif kind == OUTPUT:
        text = f"its output passed {limits.output_mib} MiB and was stopped"
    else:
        text = message
    raise _Stopped(HostileTemplate(name, line, text))


def _seconds(value: float) -> str:
    return f"{value:g} s"


# ================================================================ the worker process


class _Crashed(Exception):
    """The worker ended, or did not answer in time, in the middle of a request."""


class _WorkerProcess:
    """The one sandbox process: started on first use, restarted after it hit a limit; requests one at a time.

    A worker found dead before a request (it ended after a limit, or with the thread that started it)
    is simply started again; one that dies or goes silent *during* a request was killed by that request.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._known: set[str] = set()  # the sources it has compiled (by key)

    def start(self) -> None:
        """Have the worker running (started, and its start awaited, if it is not)."""
        with self._lock:
            self._running()

    def compile(self, source: str, seconds: float) -> dict[str, Any]:
        key = _key(source)
        with self._lock:
            return self._compile(key, source, seconds)

    def render(self, source: str, context: dict[str, Any], seconds: float, max_output: int) -> dict[str, Any]:
        key = _key(source)
        request = {"op": "render", "key": key, "context": context, "seconds": seconds, "max_output": max_output}
        with self._lock:
            began = time.monotonic()
            for _ in range(2):
                if key not in self._known:
                    compiled = self._compile(key, source, seconds)
                    if "error" in compiled:
                        return compiled
                left = seconds - (time.monotonic() - began)
                reply = self._ask({**request, "seconds": max(left, 0.001)}, left)
                if reply.get("error") != "unknown":
                    return reply
                self._known.discard(key)
            return {"error": ERROR, "line": None, "message": "the template renderer lost the template"}

    def _compile(self, key: str, source: str, seconds: float) -> dict[str, Any]:
        reply = self._ask({"op": "compile", "key": key, "source": source, "seconds": seconds}, seconds)
        if "error" not in reply:
            self._known.add(key)
        return reply

    def _ask(self, request: dict[str, Any], seconds: float) -> dict[str, Any]:
        """Send ``request`` and wait for the reply: the worker's own limit is ``seconds``, ours a little more."""
        try:
            data = encode_message(request)
        except (TypeError, ValueError) as exc:  # a request that is not JSON (a caller's bug, said in one line)
            return {"error": ERROR, "line": None, "message": f"the request cannot be passed to the template: {exc}"}
        process = self._running()
        deadline = time.monotonic() + seconds + _GRACE_SECONDS
        try:
            _write(process, data)
            reply = _read(process, deadline)
        except _Crashed:
            silent = process.poll() is None
            self._kill()
            code = process.returncode
            if silent or code in (-signal.SIGXCPU, -signal.SIGKILL):
                return {"error": TIME, "line": None, "message": _seconds(request["seconds"])}
            if code == -signal.SIGSEGV or code == -signal.SIGABRT:
                return {"error": "crashed", "line": None, "message": f"it crashed the template renderer (signal {-code})"}
            return {"error": "crashed", "line": None, "message": f"the template renderer ended (exit code {code})"}
        if reply.get("error") in (TIME, MEMORY):
            self._kill()  # it ends itself after those; start clean next time
        return reply

    def _running(self) -> subprocess.Popen[bytes]:
        """The worker, started (and its start awaited, outside any budget) if it is not running."""
        if self._process is not None and self._process.poll() is None:
            return self._process
        self._kill()
        memory = render_limits().memory_mib * _MIB
        process = subprocess.Popen(
            [sys.executable, "-m", "callscope.engine.templates.sandbox", str(os.getpid()), str(memory)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True,
        )
        self._process = process
        try:
            _read(process, time.monotonic() + _START_SECONDS)  # its "ready"
        except _Crashed:
            self._kill()
            raise TemplateError("the template renderer", None, "its process did not start") from None
        return process

    def _kill(self) -> None:
        process, self._process = self._process, None
        self._known.clear()
        if process is None:
            return
        with contextlib.suppress(OSError):
            process.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            process.wait(5)
        for pipe in (process.stdin, process.stdout):
            with contextlib.suppress(OSError):
                if pipe is not None:
                    pipe.close()

    def stop(self) -> None:
        with self._lock:
            self._kill()

    def abort(self) -> None:
        """Kill the worker now, even mid-render (from another thread): the render in progress fails at once."""
        process = self._process
        if process is not None:
            with contextlib.suppress(OSError):
                process.kill()

    @property
    def pid(self) -> int | None:
        """The worker's pid while it runs (tests watch it)."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None


def _key(source: str) -> str:
    import hashlib

    return hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _write(process: subprocess.Popen[bytes], data: bytes) -> None:
    assert process.stdin is not None
    try:
        process.stdin.write(data)
        process.stdin.flush()
    except (BrokenPipeError, OSError, ValueError):
        raise _Crashed from None


def _read(process: subprocess.Popen[bytes], deadline: float) -> dict[str, Any]:
    import json
    import struct

    assert process.stdout is not None
    fd = process.stdout.fileno()
    head = _read_exact(fd, 4, deadline)
    (size,) = struct.unpack("<I", head)
    return json.loads(_read_exact(fd, size, deadline).decode("utf-8", "surrogatepass"))


def _read_exact(fd: int, size: int, deadline: float) -> bytes:
    data = bytearray()
    while len(data) < size:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise _Crashed
        part = os.read(fd, min(size - len(data), 1 << 20))
        if not part:
            raise _Crashed
        data += part
    return bytes(data)


_WORKER = _WorkerProcess()


def worker_pid() -> int | None:
    return _WORKER.pid


def abort_renders() -> None:
    """Stop any render in progress (the window is closing: its analysis thread must not wait out a hostile one)."""
    _WORKER.abort()


__all__ = [
    "MEMORY_ENV",
    "TIMEOUT_ENV",
    "RenderLimits",
    "abort_renders",
    "compile_source",
    "render_budget",
    "render_limits",
    "render_source",
    "set_render_limits",
    "within_render_budget",
    "worker_pid",
]
