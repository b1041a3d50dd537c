"""The terminal status line: on a terminal's stderr only, never on a pipe or with ``--json``, erased at the end.

Unit tests drive :class:`~callscope.commands.status.StatusLine` with a fake terminal; the end-to-end tests
run real ``callscope`` processes with stderr on a pseudo-terminal (:mod:`pty`), and again on a pipe.
"""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import threading
import time
from argparse import Namespace
from pathlib import Path

import pytest

from callscope.benchmarks.replay import generate_trace
from callscope.commands.status import LARGE_INPUT_BYTES, StatusLine, large_input, wants_status
from tests.support.paths import ROOT

CALLSCOPE = [sys.executable, "-m", "callscope"]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_enabled_only_on_a_terminal_and_without_json():
    assert wants_status(Namespace(json=False), FakeTerminal())
    assert not wants_status(Namespace(json=True), FakeTerminal())
    assert not wants_status(Namespace(json=False), io.StringIO())  # a pipe or a file
    closed = open(os.devnull, "w")
    closed.close()
    assert not wants_status(Namespace(), closed)  # isatty() raises on a closed stream


def test_disabled_status_writes_nothing():
    out = io.StringIO()
    with StatusLine(False, out) as status:
        status.show("loading...", elapsed=True)
        status.update("decoding")
        assert not status.due()
    assert out.getvalue() == ""


def test_show_rewrites_in_place_and_clear_erases():
    out = FakeTerminal()
    with StatusLine(True, out, interval=60) as status:
        status.show("loading a model...")
        status.show("decoding")
    assert out.getvalue() == "\rloading a model...\rdecoding          " + "\r" + " " * 8 + "\r"


def test_updates_are_throttled_but_steps_are_not():
    out = FakeTerminal()
    status = StatusLine(True, out, interval=60)
    status.show("step one")
    status.update("progress 1")  # within the interval: dropped
    assert not status.due()
    status.show("step two")  # a new step always shows
    status.clear()
    text = out.getvalue()
    assert "progress 1" not in text and "step one" in text and "step two" in text


def test_update_draws_once_the_interval_has_passed():
    out = FakeTerminal()
    status = StatusLine(True, out, interval=0.01)
    status.show("a")
    time.sleep(0.02)
    assert status.due()
    status.update("b")
    assert out.getvalue().endswith("\rb")


def test_elapsed_time_ticks_in_the_background_and_stops_when_cleared():
    out = FakeTerminal()
    status = StatusLine(True, out, interval=0.01)
    status.show("evaluating the prompt...", elapsed=True)
    deadline = time.monotonic() + 5
    while " s" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.01)
    status.clear()
    assert "evaluating the prompt... 0." in out.getvalue()
    after = out.getvalue()
    time.sleep(0.05)
    assert out.getvalue() == after and after.endswith("\r")


def test_the_line_never_wraps(monkeypatch):
    import callscope.commands.status as status_module

    monkeypatch.setattr(status_module, "_columns", lambda stream: 20)
    out = FakeTerminal()
    StatusLine(True, out).show("x" * 100)
    assert out.getvalue() == "\r" + "x" * 19


def test_large_input_threshold(tmp_path):
    small = tmp_path / "small"
    small.write_bytes(b"x" * 10)
    assert large_input(str(small)) is None
    assert large_input(str(small), threshold=10) == 10
    assert large_input(str(tmp_path / "missing")) is None


# ---------------------------------------------------------------- real processes, stderr on a terminal


def run_on_terminal(argv: list[str], timeout: float = 300) -> tuple[int, str, str]:
    """``callscope ARGV`` with stderr on a pseudo-terminal: (exit code, stdout, what the terminal received)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [*CALLSCOPE, *argv], cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave
    )
    os.close(slave)
    received = bytearray()

    def read() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: the child closed the terminal
                return
            if not data:
                return
            received.extend(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        out, _ = proc.communicate(timeout=timeout)
    finally:
        reader.join(10)
        os.close(master)
    return proc.returncode, out.decode(), received.decode(errors="replace")


def run_on_pipe(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CALLSCOPE, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300)


def assert_erased(terminal: str) -> None:
    """The last thing on the terminal is the erase: ``\\r``, blanks, ``\\r``."""
    assert terminal.endswith("\r")
    last_line = terminal.rstrip("\r").rsplit("\r", 1)[-1]
    assert last_line.strip() == ""


@pytest.fixture(scope="module")
def big_trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("status") / "big.jsonl"
    steps = 25_000
    size = generate_trace(path, steps)
    assert size >= LARGE_INPUT_BYTES
    return str(path), steps


def test_replay_of_a_large_trace_shows_its_steps_on_a_terminal(big_trace):
    path, steps = big_trace
    code, out, terminal = run_on_terminal(["replay", path])
    assert code == 0
    assert f"reading {path} (" in terminal
    assert f"analysing {steps:,} steps of {path}..." in terminal
    assert_erased(terminal)
    piped = run_on_pipe(["replay", path])
    assert piped.returncode == 0 and piped.stderr == ""  # nothing on a pipe
    assert out == piped.stdout  # the report is the same either way


def test_replay_json_on_a_terminal_shows_no_status(big_trace):
    path, _ = big_trace
    code, out, terminal = run_on_terminal(["replay", path, "--json"])
    assert code == 0 and out.startswith("{")
    assert terminal == ""


def test_replay_of_a_small_trace_shows_no_status():
    code, _, terminal = run_on_terminal(["replay", "headline_701_tokens"])
    assert code == 0 and terminal == ""


def test_an_error_line_is_not_mixed_with_the_status(tmp_path, big_trace):
    path, _ = big_trace
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(Path(path).read_bytes()[:LARGE_INPUT_BYTES] + b"\n{not json\n" + b"x" * 100)
    code, _, terminal = run_on_terminal(["replay", str(broken)])
    assert code == 2
    status, _, error = terminal.replace("\r\n", "\n").rpartition("\r")  # the terminal turns \n into \r\n
    assert "reading" in status
    assert error.startswith("callscope replay: ")  # printed after the erase, at the start of the line


@pytest.mark.model
def test_run_says_what_it_is_doing_on_a_terminal_and_nothing_on_a_pipe():
    argv = ["run", "--max-tokens", "8", "--format", "hermes"]
    code, out, terminal = run_on_terminal(argv)
    assert code == 0, terminal
    assert "loading " in terminal and " MB)..." in terminal
    assert "evaluating the prompt (" in terminal and " tokens)..." in terminal
    assert "decoding: 1/8 tokens" in terminal
    assert_erased(terminal)
    assert "generation: " in out
    piped = run_on_pipe(argv)
    assert piped.returncode == 0
    assert piped.stderr == ""
    assert "loading" not in piped.stdout and "\r" not in piped.stdout


@pytest.mark.model
def test_run_json_on_a_terminal_shows_no_status():
    code, out, terminal = run_on_terminal(["run", "--max-tokens", "4", "--format", "hermes", "--json"])
    assert code == 0 and out.startswith("{")
    assert terminal == ""


# ---------------------------------------------------------------- the engine's progress hooks


@pytest.mark.model
def test_decode_progress_hooks_arrive_in_order(tmp_path):
    from callscope.engine.decode.loop import SamplerSettings
    from callscope.engine.decode.model import load_model
    from callscope.engine.decode.progress import DecodeProgress
    from callscope.engine.decode.session import LiveRun, RunSettings

    class Recorder(DecodeProgress):
        def __init__(self) -> None:
            self.events: list[tuple] = []

        def loading_model(self, info) -> None:
            self.events.append(("loading", info.file_name))

        def model_loaded(self, info, load_ms) -> None:
            self.events.append(("loaded", load_ms >= 0))

        def hashing_model(self, info) -> None:
            self.events.append(("hashing", info.file_name))

        def evaluating_prompt(self, prompt_tokens) -> None:
            self.events.append(("prompt", prompt_tokens))

        def token(self, tokens, ms) -> None:
            self.events.append(("token", tokens))

    progress = Recorder()
    model = load_model(progress=progress)
    settings = RunSettings(
        messages=[{"role": "user", "content": "Weather in Paris?"}],
        format_id="hermes",
        force_tool="off",
        max_tokens=5,
        sampler=SamplerSettings(seed=1),
        record=str(tmp_path / "run.jsonl"),
    )
    live = LiveRun(model, settings)
    result = live.run(progress=progress)
    name = model.info.file_name
    tokens = result.stats.tokens
    assert tokens >= 1
    assert progress.events == [
        ("loading", name),
        ("loaded", True),
        ("hashing", name),
        ("prompt", len(live.prompt_tokens)),
        *[("token", n) for n in range(1, tokens + 1)],
    ]
