"""`callscope bench longline`: a recording with one 1 MiB line, opened in the window against `replay`.

A tool call is often one line; one of 1 MiB with no word boundary (base64, a
minified file, one token repeated) once hung the window for minutes while Qt
looked for a place to wrap it. Measured side by side in one run, each in a
fresh interpreter: ``callscope replay FILE`` and opening FILE in a shown window
until every pane has painted, for two shapes of the same megabyte: 16 steps of
64 KiB, and 37,449 token-sized steps. Target: the window opens each in 2 s or less.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from callscope.benchmarks import BenchError, child_argv

WHAT = "one 1 MiB line (no word boundary): time to open it in the window, against replay"
TARGETS = {"open_ms": 2000}
LINE_BYTES = 1 << 20
#: (name, bytes per step): the same megabyte in a few big steps and in token-sized ones.
SHAPES = (("16 steps of 64 KiB", 64 * 1024), ("37,449 steps of 28 bytes", 28))
_PIECE = b"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo"  # base64-like: not one space or word boundary


def make_trace(path: Path, step_bytes: int) -> None:
    """A hermes call to write_file whose ``content`` is one line of :data:`LINE_BYTES` bytes."""
    from callscope.engine.recordings.trace import TraceHeader, TraceWriter

    line = (_PIECE * (LINE_BYTES // len(_PIECE) + 1))[:LINE_BYTES]
    header = TraceHeader(source="text", format="hermes", unit="token", description="bench: one 1 MiB line")
    with TraceWriter(path, header, flush_each=False) as writer:
        writer.write_step(10.0, b'<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "')
        ms = 10.0
        for at in range(0, LINE_BYTES, step_bytes):
            ms += 1.0
            writer.write_step(ms, line[at : at + step_bytes])
        writer.write_step(ms + 1.0, b'"}}\n</tool_call>')
        writer.end("stop", ms + 1.0)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=int, default=3, help="child processes per measurement; the median is kept")
    parser.add_argument("--child-open", metavar="FILE", help=argparse.SUPPRESS)  # one measurement, in a child


def run(args: argparse.Namespace) -> int:
    if args.child_open:
        print(json.dumps({"open_ms": _open_in_window(args.child_open)}))
        return 0
    if not 1 <= args.runs <= 20:
        raise BenchError("--runs must be 1 to 20")
    result = measure(args.runs)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for row in result["shapes"]:
            print(f"{row['shape']:>26}: window open {row['open_ms']:,.0f} ms · replay {row['replay_ms']:,.0f} ms")
        print(f"target: open <= {TARGETS['open_ms']:,} ms · load average {result['load_average']}")
    return 0 if all(r["open_ms"] <= TARGETS["open_ms"] for r in result["shapes"]) else 1


def measure(runs: int = 3) -> dict[str, Any]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="callscope-bench-longline-") as tmp:
        for name, step_bytes in SHAPES:
            trace = Path(tmp) / f"line_{step_bytes}.jsonl"
            make_trace(trace, step_bytes)
            replay = [_timed([sys.executable, "-m", "callscope", "replay", str(trace)]) for _ in range(runs)]
            opened = [_child_open(trace) for _ in range(runs)]
            rows.append({"shape": name, "open_ms": round(statistics.median(opened), 0),
                         "replay_ms": round(statistics.median(replay), 0)})
    return {"shapes": rows, "load_average": round(os.getloadavg()[0], 2), "targets": TARGETS}


def _timed(argv: list[str]) -> float:
    began = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    return (time.perf_counter() - began) * 1000.0


def _child_open(trace: Path) -> float:
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    done = subprocess.run(child_argv("longline", "--child-open", str(trace)), env=env, capture_output=True,
                          text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise BenchError(f"the window could not open the trace: {done.stderr.strip()[-300:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["open_ms"])


def _open_in_window(path: str) -> float:
    """Ms from asking a shown window to open ``path`` to every pane painted once (this process only)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings

    from callscope.gui_main import make_app

    app = make_app()
    from callscope.main_window import MainWindow

    with tempfile.TemporaryDirectory(prefix="callscope-bench-longline-") as tmp:
        window = MainWindow(QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat))
        window.resize(1400, 900)
        window.show()
        app.processEvents()
        began = time.perf_counter()
        if not window.open_path(path):
            raise BenchError(f"{path}: did not open")
        window.session.flush()
        app.processEvents()
        window.grab()  # every pane painted, as on screen
        return (time.perf_counter() - began) * 1000.0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    parser.add_argument("--json", action="store_true")
    sys.exit(run(parser.parse_args()))
