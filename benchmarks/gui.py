"""`callscope bench gui`: the inspector under a 20,000-step trace, offscreen.

Measures, side by side in one run:
- window shown: wall time from launching ``callscope gui FILE`` to the window on screen (median of 3);
- replay as fast as possible: the trace's steps pushed through the live path (the decode worker's
  token buffer and cross-thread signal, analysed on the GUI thread, panes redrawn at most once per frame), with a
  1 ms heartbeat timer measuring event-loop stalls (p99 and max) and the redraw count; three rounds, their
  stalls pooled (one round is ~170 event-loop turns, too few for a p99 that is not just the 2nd-worst turn);
- playback at "max" speed over the loaded trace (stalls again);
- cursor jumps: median / p90 / max time to show an arbitrary step (state change, every pane
  redrawn, events processed), and a drag across the whole trace.
Targets: p99 stall <= 16 ms (one frame at 60 Hz), median and p90 jump <= 16 ms, window shown <= 2 s.
Stalls are wall time, so another busy process on the machine shows in them: the same stalls are also
reported as the GUI thread's own CPU time (``cpu_p99_stall_ms``), with the load average, so a loaded
machine can be told from a slow window. The only bench that imports Qt, and only once it runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from callscope.benchmarks import BenchError
from callscope.benchmarks.workload import big_arguments, write_file_text

WHAT = "offscreen window: event-loop stalls during replay, cursor jump time"
STEPS = 20_000
ROUNDS = 3
TARGETS = {"p99_stall_ms": 16, "median_jump_ms": 16, "p90_jump_ms": 16, "window_shown_ms": 2000}


def make_trace(path: Path, steps: int = STEPS, rate: float = 50.0) -> None:
    """A hermes generation: a little content, then one long write_file call, split into ``steps`` tokens."""
    from callscope.engine.recordings.trace import TraceHeader, TraceWriter

    text = write_file_text("hermes", big_arguments(steps * 4), content="I'll write the handler now.").encode()
    size = len(text) // steps
    header = TraceHeader(source="text", format="hermes", unit="token", description=f"bench: {steps} steps")
    with TraceWriter(path, header, flush_each=False) as writer:
        for i in range(steps):
            piece = text[i * size : (i + 1) * size] if i < steps - 1 else text[i * size :]
            writer.write_step((i + 1) * 1000.0 / rate, piece)
        writer.end("stop", steps * 1000.0 / rate)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class StallMeter:
    """A 1 ms repeating timer; the gap between its shots is how long the event loop was busy."""

    def __init__(self) -> None:
        from PySide6.QtCore import QElapsedTimer, Qt, QTimer

        self.gaps: list[float] = []
        self.cpu_gaps: list[float] = []  # the GUI thread's CPU time between two shots (what this process did)
        self._cpu = 0.0
        self._clock = QElapsedTimer()
        self._timer = QTimer()
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(1)
        self._timer.timeout.connect(self._shot)
        self._last = 0

    def start(self, keep: bool = False) -> None:
        """Start measuring; ``keep``: add to the stalls measured so far (another round)."""
        if not keep:
            self.gaps.clear()
            self.cpu_gaps.clear()
        self._clock.start()
        self._last = self._clock.nsecsElapsed()
        self._cpu = time.thread_time()
        self._timer.start()

    def _shot(self) -> None:
        now = self._clock.nsecsElapsed()
        cpu = time.thread_time()
        self.gaps.append((now - self._last) / 1e6)
        self.cpu_gaps.append((cpu - self._cpu) * 1000.0)
        self._last, self._cpu = now, cpu

    def pause(self) -> None:
        self._timer.stop()
        self._shot()

    def stop(self) -> dict[str, float]:
        self.pause()
        return self.summary()

    def summary(self) -> dict[str, float]:
        return {"p99_stall_ms": round(_percentile(self.gaps, 0.99), 2), "max_stall_ms": round(max(self.gaps or [0.0]), 2),
                "cpu_p99_stall_ms": round(_percentile(self.cpu_gaps, 0.99), 2), "turns": len(self.gaps)}


def measure_shown(trace: Path, runs: int = 3) -> float:
    """Median ms from spawning ``python -m callscope gui TRACE`` to the window being shown."""
    from callscope.gui_main import SHOWN_ENV

    times = []
    env = {**os.environ, SHOWN_ENV: "1", "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    for _ in range(runs):
        began = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "callscope", "gui", str(trace)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("shown"):
                times.append((time.perf_counter() - began) * 1000.0)
                break
        proc.wait(timeout=60)
    return statistics.median(times) if times else float("nan")


def _live_replay(app, window, trace_path: Path, rounds: int = ROUNDS) -> dict[str, Any]:
    """Push every step through the worker-signal path as fast as a thread can emit them, ``rounds`` times."""
    from PySide6.QtCore import QObject, QThread, Signal, Slot

    from callscope.engine.analysis.analyzer import SourceInfo
    from callscope.engine.recordings.trace import read_trace
    from callscope.live.run_worker import RunPlan

    trace = read_trace(trace_path)

    controller = window.runs
    buffer = controller.worker.buffer

    class Emitter(QObject):
        """Plays the decode worker: pushes every step through the worker's token buffer at full speed."""

        tokensReady = Signal()

        @Slot()
        def run(self) -> None:
            for i, step in enumerate(trace.steps):
                if buffer.push(step.data, float(step.ms or 0.0), i):
                    self.tokensReady.emit()

    meter = StallMeter()
    frames, elapsed, worst = 0, 0.0, []
    for round_ in range(rounds):
        buffer.clear()
        controller._begin(None)  # what RunController.start does before the worker's first signal
        controller._on_prepared(RunPlan(SourceInfo("trace", str(trace_path), "hermes", "incremental"), "hermes", None,
                                        f"bench-live-{round_}", 0, "bench"))
        app.processEvents()
        redraws_before = window.session.redraws
        thread = QThread()
        emitter = Emitter()
        emitter.moveToThread(thread)
        emitter.tokensReady.connect(controller._on_tokens_ready)
        thread.started.connect(emitter.run)
        turns_before = len(meter.gaps)
        meter.start(keep=True)
        began = time.perf_counter()
        thread.start()
        # until the last growth has reached the panes through the event loop, as in a real run
        while controller.tokens_received < len(trace.steps) or controller._pending or window.session.growth_pending:
            app.processEvents()
        elapsed += time.perf_counter() - began
        meter.pause()
        worst.append(round(max(meter.gaps[turns_before:] or [0.0]), 2))
        thread.quit()
        thread.wait()
        frames += window.session.redraws - redraws_before
        controller._conclude(controller.analyzer.finish("stop"), "bench live run")  # as the worker's finish does
    return {"steps": len(trace.steps), "rounds": rounds, "seconds": round(elapsed / rounds, 2),
            "redraws": round(frames / rounds), "redraws_per_s": round(frames / elapsed, 1), **meter.summary(),
            "max_stall_per_round_ms": worst}


def _playback(app, window) -> dict[str, Any]:
    state = window.session.state
    state.home()
    window.session.flush()
    window.playback.speed.setCurrentIndex(window.playback.speed.count() - 1)
    redraws_before = window.session.redraws
    meter = StallMeter()
    meter.start()
    began = time.perf_counter()
    window.driver.play()
    while window.driver.playing:
        app.processEvents()
    elapsed = time.perf_counter() - began
    stalls = meter.stop()
    frames = window.session.redraws - redraws_before
    return {"seconds": round(elapsed, 2), "redraws": frames, "redraws_per_s": round(frames / elapsed, 1), **stalls}


def _jumps(app, window, count: int = 200) -> dict[str, Any]:
    state = window.session.state
    rng = random.Random(20)
    times = []
    cpu = []
    for _ in range(count):
        target = rng.randrange(0, state.last + 1)
        began, began_cpu = time.perf_counter(), time.thread_time()
        state.set_cursor(target)
        window.session.flush()
        app.processEvents()
        times.append((time.perf_counter() - began) * 1000.0)
        cpu.append((time.thread_time() - began_cpu) * 1000.0)
    # a drag: the cursor line swept across the trace, one mouse-move's worth of x at a time
    meter = StallMeter()
    meter.start()
    lo, hi = state.timebase.span
    line = window.timeline.cursor_line
    for i in range(301):
        line.setValue(lo + (hi - lo) * i / 300)
        app.processEvents()
    drag = meter.stop()
    return {"median_jump_ms": round(statistics.median(times), 2), "p90_jump_ms": round(_percentile(times, 0.9), 2),
            "max_jump_ms": round(max(times), 2), "cpu_median_jump_ms": round(statistics.median(cpu), 2),
            "cpu_p90_jump_ms": round(_percentile(cpu, 0.9), 2),
            "drag_p99_stall_ms": drag["p99_stall_ms"], "drag_max_stall_ms": drag["max_stall_ms"]}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--steps", type=int, default=STEPS, help=f"steps of the generated trace (default {STEPS:,})")
    parser.add_argument("--rounds", type=int, default=ROUNDS,
                        help=f"live replays whose stalls are pooled (default {ROUNDS}; more gives a steadier p99)")


def run(args: argparse.Namespace) -> int:
    """Run the GUI benchmark offscreen; print a summary (or JSON); 0 when every target is met."""
    if args.steps < 100:
        raise BenchError("--steps must be at least 100")
    if not 1 <= args.rounds <= 50:
        raise BenchError("--rounds must be 1 to 50")
    result = measure(args.steps, args.rounds)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0 if _meets_targets(result) else 1


def measure(steps: int = STEPS, rounds: int = ROUNDS) -> dict[str, Any]:
    """Every measurement of the module docstring, on one window, in one process (offscreen unless told)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings

    from callscope.gui_main import make_app

    with tempfile.TemporaryDirectory(prefix="callscope-bench-gui-") as tmp:
        trace = Path(tmp) / f"bench_{steps}.jsonl"
        make_trace(trace, steps)
        shown_ms = measure_shown(trace)
        app = make_app()
        from callscope.main_window import MainWindow
        from callscope.ui.errors import ErrorReporter

        ErrorReporter.show_error = lambda self, title, message: print(f"error: {title}: {message}", file=sys.stderr)  # type: ignore[method-assign]
        window = MainWindow(QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat))
        window.resize(1400, 900)
        window.show()
        app.processEvents()
        from callscope.gui_main import freeze_startup_heap

        freeze_startup_heap()  # as `callscope gui` does after building its window
        live = _live_replay(app, window, trace, rounds)
        began = time.perf_counter()
        assert window.open_path(str(trace))
        window.session.flush()
        app.processEvents()
        load_s = time.perf_counter() - began
        playback = _playback(app, window)
        jumps = _jumps(app, window)
        window.close()
    return {
        "steps": steps,
        "window_shown_ms": round(shown_ms, 0),
        "open_trace_s": round(load_s, 3),
        "live_replay": live,
        "playback_max_speed": playback,
        "cursor": jumps,
        "load_average": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
        "targets": TARGETS,
    }


def _meets_targets(r: dict[str, Any]) -> bool:
    stalls = (r["live_replay"]["p99_stall_ms"], r["playback_max_speed"]["p99_stall_ms"])
    return (max(stalls) <= TARGETS["p99_stall_ms"] and r["cursor"]["median_jump_ms"] <= TARGETS["median_jump_ms"]
            and r["cursor"]["p90_jump_ms"] <= TARGETS["p90_jump_ms"] and r["window_shown_ms"] <= TARGETS["window_shown_ms"])


def _print(r: dict[str, Any]) -> None:
    from callscope.engine.analysis.report import plural

    live, playback, jumps = r["live_replay"], r["playback_max_speed"], r["cursor"]
    print(f"callscope bench gui: {r['steps']:,}-step trace, offscreen, 1400x900 "
          f"(load average {r['load_average']} on {r['cpus']} CPUs: wall stalls include other processes)")
    print(f"  window shown after launch      {r['window_shown_ms']:8.0f} ms   (target <= 2000)")
    print(f"  open + analyse the trace       {r['open_trace_s'] * 1000:8.0f} ms")
    print(f"  live replay, max speed         {live['seconds']:8.2f} s    p99 stall {live['p99_stall_ms']:6.1f} ms, "
          f"max {live['max_stall_ms']:6.1f} ms, CPU p99 {live['cpu_p99_stall_ms']:6.1f} ms   "
          f"({live['redraws']} redraws, {live['redraws_per_s']}/s; {plural(live['rounds'], 'round')}, {live['turns']} turns; "
          f"target p99 <= 16)")
    print(f"  playback, max speed            {playback['seconds']:8.2f} s    p99 stall {playback['p99_stall_ms']:6.1f} ms, "
          f"max {playback['max_stall_ms']:6.1f} ms, CPU p99 {playback['cpu_p99_stall_ms']:6.1f} ms   "
          f"({playback['redraws']} redraws, {playback['redraws_per_s']}/s)")
    print(f"  show an arbitrary step         median {jumps['median_jump_ms']:6.2f} ms, p90 {jumps['p90_jump_ms']:6.2f} ms, "
          f"max {jumps['max_jump_ms']:6.2f} ms, CPU median {jumps['cpu_median_jump_ms']:6.2f} ms "
          f"(target median and p90 <= 16)")
    print(f"  drag the cursor across         p99 stall {jumps['drag_p99_stall_ms']:6.1f} ms, max {jumps['drag_max_stall_ms']:6.1f} ms")
