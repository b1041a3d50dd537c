"""`callscope check PATH...`: judge many recordings at once, in a process pool (or on a Ray cluster).

PATH is a file of any kind ``callscope replay`` reads, a folder (walked), a proxy session folder,
a glob or a shipped fixture's name. Each recording is judged by the engine's pure per-file
function (:func:`callscope.engine.corpus.verdict.check_recording`); at the end comes the aggregate
(:mod:`callscope.engine.corpus.summary`). A file that cannot be read is listed with its one-line
reason and never stops the run. On a terminal a progress bar (tqdm) shows on stderr; on a pipe,
nothing but the output.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time

from callscope.commands.common import CliError, check_policy

HELP = "check many recordings at once (files, folders, proxy sessions, globs): verdicts, violations by rule, " \
       "model, server and client, TTFD percentiles"


def register(sub: argparse._SubParsersAction) -> None:
    from callscope.engine.corpus.executors import EXECUTORS

    p = sub.add_parser(
        "check",
        help=HELP,
        description="Judge every recording PATH names (any kind `callscope replay` reads; folders and proxy session "
        "folders are walked; globs are expanded), each in a worker process, and print the aggregate: verdicts, "
        "violations by rule, by model, by server and by client profile, TTFD percentiles (incremental vs atomic) "
        "and the worst recordings. A recording that cannot be read is listed with its reason.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="recordings: files, folders, proxy session folders, globs "
                   "(quote them: 'runs/**/*.jsonl') or shipped fixture names")
    p.add_argument("-j", "--jobs", type=int, metavar="N",
                   help="worker processes (default: every core; 1: no pool); with --executor ray, the CPUs of a Ray "
                   "instance it starts")
    p.add_argument("--executor", choices=sorted(EXECUTORS), default="local",
                   help="; ".join(f"{s.name}: {s.help}" for s in EXECUTORS.values()) + " (default local)")
    p.add_argument("--ray-address", metavar="ADDR",
                   help="the Ray cluster to join ('auto': the one this machine is part of; ray://HOST:10001; default: "
                   "RAY_ADDRESS, else 'local': a Ray instance started on this machine for the run, on 127.0.0.1)")
    p.add_argument("--policy", default="incremental",
                   help="the streaming policy generated text is judged with (traces and fixtures; captured streams "
                   "are judged as the server sent them; default %(default)s)")
    p.add_argument("--jsonl", action="store_true",
                   help="one JSON object per recording on stdout as each is checked, then the summary object")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 if any recording has a violation or cannot be read")
    p.add_argument("--summary-json", metavar="FILE", help="write the summary (callscope.check/1) as JSON")
    p.add_argument("--summary-csv", metavar="FILE",
                   help="write the summary as a table (section, key, metric, value) in CSV; FILE.parquet writes "
                   "Parquet (needs pyarrow: callscope[parquet])")
    p.add_argument("--table", metavar="FILE",
                   help="write one row per recording (path, model, server, violations, rules, TTFD...) as CSV, or "
                   "Parquet when FILE ends in .parquet")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from callscope.engine.corpus.paths import Missing, expand

    check_policy(args.policy)
    if args.jobs is not None and args.jobs < 1:
        raise CliError(f"--jobs must be at least 1, got {args.jobs}")
    if args.ray_address is not None and args.executor != "ray":
        raise CliError("--ray-address applies to --executor ray")
    for name in ("summary_json", "summary_csv", "table"):
        _check_writable(getattr(args, name), "--" + name.replace("_", "-"))
    found = list(expand(args.paths))
    missing = [m for m in found if isinstance(m, Missing)]
    paths = [p for p in found if isinstance(p, str)]
    if not paths:
        reasons = "; ".join(f"{m.path}: {m.reason}" for m in missing) or "no recordings in " + ", ".join(args.paths)
        raise CliError(f"nothing to check ({reasons})")
    with _Interrupt() as interrupt:
        return _check(args, paths, missing, interrupt)


def _check(args: argparse.Namespace, paths: list[str], missing: list, interrupt: _Interrupt) -> int:
    from callscope.engine.corpus.executors import EXECUTORS, CheckOptions, ExecutorUnavailable, default_jobs
    from callscope.engine.corpus.report import ExportError
    from callscope.engine.corpus.summary import Summary

    keep = bool(args.jsonl or args.table)
    options = CheckOptions(policy=args.policy, jobs=args.jobs, keep=keep, address=args.ray_address)
    summary = Summary()
    rows: list[dict] = []
    started = time.perf_counter()
    batches = EXECUTORS[args.executor].run(paths, options)
    try:
        with _progress(len(paths) + len(missing)) as bar:
            _consume(_missing_batch(missing, keep), summary, rows, args, bar)
            for batch in batches:
                _consume(batch, summary, rows, args, bar)
                if interrupt.requested:
                    break
    except ExecutorUnavailable as exc:
        raise CliError(str(exc)) from None
    finally:
        batches.close()  # stops the pool (or the Ray instance it started) cleanly, between batches
    if interrupt.requested:
        interrupt.finished()
        raise KeyboardInterrupt
    seconds = time.perf_counter() - started
    try:
        _write_outputs(summary, rows, args)
    except ExportError as exc:
        raise CliError(str(exc)) from None
    if args.jsonl:
        _line({**summary.to_json(), "seconds": round(seconds, 3)})
    else:
        from callscope.engine.corpus.report import summary_text

        workers = _workers(args, options.jobs or default_jobs())
        print(summary_text(summary, seconds, workers))
    failed = summary.with_violations or summary.unreadable
    return 1 if args.strict and failed else 0


class _Interrupt:
    """Ctrl+C as a request, not an exception thrown into the pool's machinery.

    The first Ctrl+C asks the run to stop: it stops after the batch in hand, the pool finishes the
    few batches its workers hold and shuts down, and the command exits 130 with one line. (An
    exception raised at a random point inside concurrent.futures can leave its manager thread
    waiting forever, and the exit with it.) A second Ctrl+C while that happens exits at once.
    Off the main thread (tests calling the handler) it does nothing.
    """

    def __init__(self) -> None:
        self.requested = False
        self._previous = None

    def __enter__(self) -> _Interrupt:
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._first)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._previous is not None and not self.requested:
            signal.signal(signal.SIGINT, self._previous)  # not interrupted: the caller's handler again

    def _first(self, _signum, _frame) -> None:
        self.requested = True
        signal.signal(signal.SIGINT, self._again)

    @staticmethod
    def _again(_signum, _frame) -> None:
        """Exit now, and take the pool's workers along (they hold this command's output open)."""
        import multiprocessing

        for child in multiprocessing.active_children():
            child.kill()
        sys.stderr.write("callscope: interrupted\n")
        sys.stderr.flush()
        os._exit(130)

    def finished(self) -> None:
        """The stop is done: the exit that follows prints the one line; later presses change nothing."""
        if self._previous is not None:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def _workers(args: argparse.Namespace, jobs: int) -> str:
    if args.executor == "ray":
        return "on Ray"
    return "1 process" if jobs == 1 else f"{jobs} worker processes"


def _missing_batch(missing: list, keep: bool):
    from callscope.engine.corpus.executors import verdict_batch
    from callscope.engine.corpus.verdict import RecordingVerdict

    return verdict_batch([RecordingVerdict(m.path, None, error=m.reason) for m in missing], keep)


def _consume(batch, summary, rows: list[dict], args: argparse.Namespace, bar) -> None:
    """One batch's summary merged, its verdicts streamed (``--jsonl``) and kept as rows (``--table``)."""
    summary.merge(batch.summary)
    if batch.verdicts:
        if args.jsonl:
            for verdict in batch.verdicts:
                _line(verdict.to_json())
            sys.stdout.flush()
        if args.table:
            from callscope.engine.corpus.report import recording_row

            rows.extend(recording_row(v) for v in batch.verdicts)
    if batch.size:
        bar.update(batch.size)


def _line(record: dict) -> None:
    from callscope.engine.core.json_text import dumps

    sys.stdout.write(dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")


def _write_outputs(summary, rows: list[dict], args: argparse.Namespace) -> None:
    from callscope.engine.corpus.report import RECORDING_COLUMNS, SUMMARY_COLUMNS, ExportError, write_table

    if args.summary_json:
        from callscope.engine.core.json_text import dumps

        try:
            with open(args.summary_json, "w", encoding="utf-8") as out:
                out.write(dumps(summary.to_json(), ensure_ascii=False, indent=2) + "\n")
        except OSError as exc:
            raise ExportError(f"cannot write {args.summary_json}: {exc.strerror or exc}") from None
    if args.summary_csv:
        write_table(args.summary_csv, summary.table(), SUMMARY_COLUMNS)
    if args.table:
        write_table(args.table, rows, RECORDING_COLUMNS)


def _check_writable(path: str | None, option: str) -> None:
    """Refuse an output file in a folder that does not exist before checking anything (not after an hour)."""
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CliError(f"{option} {path}: no such folder {folder}")
    if os.path.isdir(path):
        raise CliError(f"{option} {path}: is a folder")


class _NoBar:
    def update(self, _n: int) -> None:
        pass

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *_exc: object) -> None:
        pass


def _progress(total: int):
    """A tqdm bar on a terminal's stderr; on a pipe or a file, nothing at all."""
    try:
        interactive = sys.stderr.isatty()
    except (AttributeError, ValueError):
        interactive = False
    if not interactive:
        return _NoBar()
    from tqdm import tqdm

    tqdm.monitor_interval = 0  # no monitor thread: the pool forks a single-threaded process
    try:
        known = os.get_terminal_size(sys.stderr.fileno()).columns > 0
    except (OSError, ValueError):
        known = False
    # a fresh pseudo-terminal reports 0x0: tqdm would hide its bar below row 0, so 80x24 then (as StatusLine does)
    return tqdm(total=total, unit="rec", desc="checking", file=sys.stderr, leave=False, dynamic_ncols=known,
                ncols=None if known else 80, nrows=None if known else 24, smoothing=0.1)
