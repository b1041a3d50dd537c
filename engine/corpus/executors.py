"""Where :func:`~.verdict.check_recording` runs: this process, a local process pool, or a Ray cluster.

Every executor maps the same function over batches of paths and yields :class:`Batch` es, each
with its own :class:`~.summary.Summary` (made where the batch ran) and, when asked, every
recording's verdict (``--jsonl``, the window's table). The caller merges the summaries: the
same reduction whatever ran the batches. An executor is one :class:`ExecutorSpec` and one line
in :data:`EXECUTORS`.

The local pool sends batches to worker processes, a few per worker in flight (a bounded
window: ten million paths are never ten million futures). A worker that dies (a crash in a
C extension, the OOM killer) breaks the pool; the batches it held are run again one path per
task, and a path that breaks a fresh pool again is that recording's verdict
("the analysis process died"), so one file never stops the run.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from itertools import islice

from callscope.engine.corpus.summary import Summary
from callscope.engine.corpus.verdict import RecordingVerdict, check_recording

#: Recordings per batch in the local pool: one round trip each (about a millisecond of work per recording).
DEFAULT_BATCH = 32
#: Recordings per Ray task: a task costs the driver far more than a pool round trip (scheduling, object
#: store), so ten million recordings are ~40,000 tasks, not 300,000.
RAY_BATCH = 256
#: Batches in flight per worker: enough that none waits for the next, few enough to stop promptly.
IN_FLIGHT_PER_WORKER = 4
DIED = "the analysis process died while reading this recording"


class ExecutorUnavailable(Exception):
    """An executor whose library is not installed (one line naming the extra to install)."""


@dataclass(frozen=True, slots=True)
class CheckOptions:
    """How to check: the policy generated text is judged with, how many workers, what to send back."""

    policy: str = "incremental"
    jobs: int | None = None  # None: every core (local), every CPU of the cluster (Ray)
    keep: bool = True  # send each recording's verdict back (else only the batch summaries travel)
    batch: int | None = None  # recordings per task; None: the executor's own (DEFAULT_BATCH, RAY_BATCH)
    start_method: str | None = None  # the local pool's: None picks (see pool_context)
    nice: int = 0  # the local pool's workers yield the CPU by this much (the window's keep it responsive)
    address: str | None = None  # Ray: the cluster to join ("auto", "ray://host:10001"); None: RAY_ADDRESS or "local"


@dataclass(slots=True)
class Batch:
    """What one task returns: how many it checked, their summary, and (when kept) each verdict."""

    size: int
    summary: Summary
    verdicts: list[RecordingVerdict] = field(default_factory=list)


def check_paths(paths: list[str], policy: str = "incremental", keep: bool = True) -> Batch:
    """The task every executor runs: check a batch of paths and summarise it where it ran."""
    verdicts = [check_recording(p, policy) for p in paths]
    return Batch(len(verdicts), Summary.of(verdicts), verdicts if keep else [])


def verdict_batch(verdicts: list[RecordingVerdict], keep: bool = True) -> Batch:
    """Verdicts made by the caller (names that matched nothing) as a batch like the others."""
    return Batch(len(verdicts), Summary.of(verdicts), verdicts if keep else [])


def batches(paths: Iterable[str], size: int) -> Iterator[list[str]]:
    it = iter(paths)
    while chunk := list(islice(it, max(size, 1))):
        yield chunk


def default_jobs() -> int:
    """Every core this process may run on."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


# ------------------------------------------------------------------ in this process


def run_inline(paths: Iterable[str], options: CheckOptions) -> Iterator[Batch]:
    """One process, no pool: ``--jobs 1``, and what the pool is measured against."""
    for chunk in batches(paths, options.batch or DEFAULT_BATCH):
        yield check_paths(chunk, options.policy, options.keep)


# ------------------------------------------------------------------ local process pool


def _worker_start(nice: int = 0) -> None:
    """A worker leaves Ctrl+C to the caller (which stops the pool): no traceback per worker; with ``nice``
    it gives way to the caller (a window's event loop) on a busy machine."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if nice:
        try:
            os.nice(nice)
        except OSError:  # pragma: no cover - not allowed here: run at the usual priority
            pass


def pool_context(method: str | None = None):
    """``method``, else ``fork`` while this process has one thread (cheapest: the engine is already
    imported), else ``forkserver`` (forking a process with threads, such as the window, can copy a held lock)."""
    import multiprocessing

    if method is not None:
        return multiprocessing.get_context(method)
    if threading.active_count() == 1 and "fork" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("fork")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["callscope.engine.corpus.executors"])
    return context


def run_pool(paths: Iterable[str], options: CheckOptions) -> Iterator[Batch]:
    """A local process pool of ``options.jobs`` workers (``1``: :func:`run_inline`)."""
    jobs = options.jobs or default_jobs()
    if jobs <= 1:
        yield from run_inline(paths, options)
        return
    window = jobs * IN_FLIGHT_PER_WORKER
    failed: list[str] = []  # paths of batches a dying worker took down
    running: dict[Future[Batch], list[str]] = {}

    def collect(every: bool) -> Iterator[Batch]:
        done, _ = wait(running, return_when=ALL_COMPLETED if every else FIRST_COMPLETED)
        for future in done:
            chunk = running.pop(future)
            try:
                yield future.result()
            except BrokenProcessPool:
                failed.extend(chunk)

    pool = _new_pool(jobs, options)
    try:
        for chunk in batches(paths, options.batch or DEFAULT_BATCH):
            try:
                running[pool.submit(check_paths, chunk, options.policy, options.keep)] = chunk
            except BrokenProcessPool:
                failed.extend(chunk)
            if len(running) >= window:
                yield from collect(every=False)
            if failed:  # the pool is broken: let its futures fail, judge their paths alone, start afresh
                yield from collect(every=True)
                _stop(pool)
                yield from _one_by_one(failed, options)
                failed.clear()
                pool = _new_pool(jobs, options)
        yield from collect(every=True)
        if failed:
            yield from _one_by_one(failed, options)
    finally:
        _stop(pool)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Shut the pool down and wait for it; stopped early (Ctrl+C, the window's Stop), the batches already
    submitted (a few per worker) finish first, well under a second for recordings of ordinary size.

    Never by cancelling them (``cancel_futures``) nor by ending the workers: on Python 3.11 a pool shut
    down either way can leave its manager thread waiting forever (a worker ended while it writes its
    result; a future cancelled as it is handed out), and the process's exit with it.
    """
    pool.shutdown(wait=True)


def _new_pool(jobs: int, options: CheckOptions) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=jobs, mp_context=pool_context(options.start_method),
                               initializer=_worker_start, initargs=(options.nice,))


def _one_by_one(paths: list[str], options: CheckOptions) -> Iterator[Batch]:
    """Paths whose batch broke the pool: each alone in a fresh one-worker pool, so the one that kills
    its worker is found and judged, and the others get their real verdicts."""
    for path in paths:
        pool = _new_pool(1, options)
        try:
            done = pool.submit(check_paths, [path], options.policy, options.keep).result()
        except BrokenProcessPool:
            done = verdict_batch([RecordingVerdict(path, None, error=DIED)], options.keep)
        finally:
            _stop(pool)
        yield done


# ------------------------------------------------------------------ Ray


def run_ray(paths: Iterable[str], options: CheckOptions) -> Iterator[Batch]:
    """Ray tasks over batches of paths on a shared file system (``pip install 'callscope[ray]'``).

    Joins the cluster at ``options.address`` (``auto``: the one this machine belongs to; else
    ``RAY_ADDRESS`` when set), or starts a Ray instance here, on loopback only, with
    ``options.jobs`` CPUs. Leaves a cluster it joined as it was: only an instance it started is
    shut down.
    """
    address = options.address or os.environ.get("RAY_ADDRESS") or LOCAL
    if address == LOCAL:
        # before Ray is imported: a single-node instance binds its servers to 127.0.0.1, not every interface
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    try:
        import ray
    except ImportError:
        raise ExecutorUnavailable("the ray executor needs Ray: pip install 'callscope[ray]'") from None
    started = not ray.is_initialized()
    if started:
        _ray_init(ray, address, options.jobs)
    try:
        task = ray.remote(num_cpus=1)(check_paths)
        window = max(int(ray.cluster_resources().get("CPU", 1)), 1) * IN_FLIGHT_PER_WORKER
        running: list = []
        for chunk in batches(paths, options.batch or RAY_BATCH):
            running.append(task.remote(chunk, options.policy, options.keep))
            if len(running) >= window:
                done, running = ray.wait(running, num_returns=1)
                yield from ray.get(done)
        while running:
            done, running = ray.wait(running, num_returns=1)
            yield from ray.get(done)
    finally:
        if started:
            ray.shutdown()


#: ``--ray-address`` of a Ray instance started here for the run.
LOCAL = "local"


def _ray_init(ray, address: str, jobs: int | None) -> None:
    import logging

    # ERROR: Ray's start-up notices (token file, local instance) are not the command's output
    kwargs: dict = {"logging_level": logging.ERROR, "log_to_driver": False}
    if address == LOCAL:
        kwargs["include_dashboard"] = False
        if jobs:
            kwargs["num_cpus"] = jobs
    try:
        ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ExecutorUnavailable(f"cannot join the Ray cluster at {address}: {' '.join(str(exc).split())}") from None


# ------------------------------------------------------------------ the registry


@dataclass(frozen=True, slots=True)
class ExecutorSpec:
    """One way to run a corpus: its name (``--executor NAME``), one line of help, and the runner."""

    name: str
    help: str
    run: Callable[[Iterable[str], CheckOptions], Iterator[Batch]]


EXECUTORS: dict[str, ExecutorSpec] = {
    spec.name: spec
    for spec in (
        ExecutorSpec("local", "a process pool on this machine (--jobs N; 1: no pool)", run_pool),
        ExecutorSpec("ray", "Ray tasks on a cluster over a shared file system (callscope[ray])", run_ray),
    )
}
