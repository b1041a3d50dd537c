"""Hostile chat templates and GGUFs: each renders or fails with one line, within the time and memory bound.

A chat template is untrusted input (a ``.jinja`` from the web, a ``tokenizer_config.json``, a GGUF's
own): Jinja's sandbox blocks escapes but bounds neither time nor memory. Every case goes through the
real CLI (``callscope.cli.main``, in-process; the renders run in the real worker process) and checks
what a person sees: exit 2, nothing on stdout, one line on stderr, in well under the bound.
"""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest

from callscope.cli import main


def cli(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def refused(capsys, *argv: object) -> str:
    """Run the CLI; assert exit 2, nothing on stdout and exactly one line on stderr; return that line."""
    code, out, err = cli(capsys, *argv)
    assert code == 2, (code, out[:300], err[-1500:])
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err[-1500:]
    assert "Traceback" not in err
    return err


# ------------------------------------------------------------------ GGUF metadata


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _gguf(path: Path, *kvs: bytes) -> Path:
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))
    return path


def test_a_gguf_with_100000_nested_array_headers_is_one_line(tmp_path, capsys):
    # an array of one array of one array ... 100,000 deep: read recursively, it was a RecursionError traceback
    nested = struct.pack("<IQ", 9, 1) * 100_000 + struct.pack("<IQ", 0, 0)
    model = _gguf(tmp_path / "nested.gguf", _string("general.nested") + struct.pack("<I", 9) + nested,
                  _string("tokenizer.chat_template") + struct.pack("<I", 8) + _string("{{ messages }}"))
    began = time.monotonic()
    line = refused(capsys, "template", model)
    assert "nested.gguf" in line and "arrays nested more than 8 deep" in line, line
    assert time.monotonic() - began < 5
    assert "arrays nested" in refused(capsys, "prompt", "--model", model, "--prompt", "hi")


def test_a_gguf_with_millions_of_tiny_array_items_fails_fast(tmp_path, capsys):
    # 5 million empty strings (8 bytes each) were read one by one (2.4 s here), and every key could hold as many
    items = struct.pack("<IQ", 8, 5_000_000) + b"\0" * 8 * 5_000_000
    model = _gguf(tmp_path / "many.gguf", _string("general.many") + struct.pack("<I", 9) + items)
    began = time.monotonic()
    line = refused(capsys, "template", model)
    assert "many.gguf" in line and "array items" in line, line
    assert time.monotonic() - began < 5



# ------------------------------------------------------------------ hostile templates

#: Each hostile template, what it does, and what the one line must say. Every one used to hang, exhaust
#: the memory, loop forever or end in a traceback.
SELF_CONTAINING = "{% set d = {} %}{% set _ = d.update({'me': d}) %}{{ d | tojson }}{{ messages }}"
#: The old walk looked into a container that holds itself for ever when it also held an undefined value.
SELF_CONTAINING_UNDEFINED = "{% set d = {'u': nothing} %}{% set _ = d.update({'me': d}) %}{{ d | tojson }}"
NESTED_LOOPS = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{{ messages }}"
DOUBLING = "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}"
DEEP_IF = "{% if true %}" * 3000 + "x" + "{% endif %}" * 3000
UNSAFE = "{{ messages.__class__.__mro__ }}{% for tool in tools %}{{ tool.function.name }}{% endfor %}"
#: A long computation in C, which no timer interrupts (the parent kills the worker).
IN_C = "{{ (7 ** (10 ** 9)) > 1 }}"
#: Output without end, a megabyte at a time: within the memory limit piece by piece, stopped at the output limit.
FLOOD = "{% for i in range(100000) %}{{ 'x' * 1000000 }}{% endfor %}"

HOSTILE = [
    ("self_containing", SELF_CONTAINING, ":1: ValueError: Circular reference detected"),
    ("self_containing_undefined", SELF_CONTAINING_UNDEFINED, ":1: ValueError: Circular reference detected"),
    ("nested_loops", NESTED_LOOPS, ":1: rendering took longer than 2 s and was stopped"),
    ("doubling", DOUBLING, ":1: rendering needed more than 192 MiB of memory and was stopped"),
    ("deep_if", DEEP_IF, ": syntax error: the template nests too deeply to compile"),
    ("unsafe", UNSAFE, ":1: the sandbox refused it: SecurityError: access to attribute '__class__'"),
    ("in_c", IN_C, ": rendering took longer than 2 s and was stopped"),
    ("flood", FLOOD, ": its output passed 16 MiB and was stopped"),
]


@pytest.fixture
def limits(monkeypatch):
    """A 2 s render budget and a 192 MiB worker for the test; the defaults again after it."""
    from callscope.engine.templates import isolation

    monkeypatch.setenv(isolation.TIMEOUT_ENV, "2")
    monkeypatch.setenv(isolation.MEMORY_ENV, "192")
    isolation.set_render_limits(seconds=2, memory_mib=192)
    yield isolation
    monkeypatch.undo()
    isolation._limits = None
    isolation.set_render_limits(memory_mib=isolation.render_limits().memory_mib + 1)  # restarts the worker...
    isolation._limits = None  # ...and back to the defaults


@pytest.mark.parametrize("name, source, wanted", HOSTILE, ids=[case[0] for case in HOSTILE])
def test_a_hostile_template_fails_in_one_line_within_the_bound_in_every_verb(tmp_path, capsys, limits, name, source,
                                                                            wanted):
    path = tmp_path / f"{name}.jinja"
    path.write_text(source)
    generation = tmp_path / "generation.txt"
    generation.write_text("hello")
    for argv in (["prompt", "--template", path, "--prompt", "hi"],
                 ["replay-text", generation, "--format", "auto", "--template", path]):
        began = time.monotonic()
        if name.startswith("self_") and argv[0] == "replay-text":
            # an ordinary render error (in every variant): the template renders nothing, so it is read as one
            # without tool support, as any template that raises is; what matters is that it ends
            code, _, err = cli(capsys, *argv)
            assert code == 0 and "format: emulated (the template has no tool support" in capsys.readouterr().out + _
        else:
            line = refused(capsys, *argv)
            assert f"chat template {path}{wanted}" in line, line
        elapsed = time.monotonic() - began
        assert elapsed < 10, f"{name}: {elapsed:.1f} s"  # 2 s of rendering, 1 s of grace, a worker started on a busy machine


@pytest.mark.parametrize("name, source, wanted", [case for case in HOSTILE if not case[0].startswith("self_")],
                         ids=[case[0] for case in HOSTILE if not case[0].startswith("self_")])
def test_the_template_verb_stops_the_whole_analysis_in_one_line(tmp_path, capsys, limits, name, source, wanted):
    # the analysis renders dozens of variants, each catching its own failure: a hostile one must stop them all
    path = tmp_path / f"{name}.jinja"
    path.write_text(source)
    began = time.monotonic()
    line = refused(capsys, "template", path)
    assert f"chat template {path}{wanted}" in line, line
    assert time.monotonic() - began < 10


def test_a_template_blocked_by_the_sandbox_is_not_a_template_without_tool_support(tmp_path, capsys):
    # it was reported as "the template has no tool support" (every probe failed quietly)
    path = tmp_path / "unsafe.jinja"
    path.write_text(UNSAFE)
    line = refused(capsys, "template", path)
    assert "the sandbox refused it: SecurityError" in line and "no tool support" not in line


def test_a_ggufs_hostile_template_is_stopped_the_same_way(tmp_path, capsys, limits):
    model = _gguf(tmp_path / "hostile.gguf", _string("general.architecture") + struct.pack("<I", 8) + _string("llama"),
                  _string("tokenizer.chat_template") + struct.pack("<I", 8) + _string(NESTED_LOOPS))
    line = refused(capsys, "template", model)
    assert "gguf:tokenizer.chat_template of hostile.gguf:1: rendering took longer than 2 s" in line, line
    line = refused(capsys, "prompt", "--model", model, "--prompt", "hi")
    assert "rendering took longer than 2 s" in line, line


def test_the_time_limit_is_an_option_and_checked(tmp_path, capsys):
    path = tmp_path / "loops.jinja"
    path.write_text(NESTED_LOOPS)
    try:
        began = time.monotonic()
        line = refused(capsys, "template", path, "--template-timeout", "0.5")
        assert "rendering took longer than 0.5 s" in line and time.monotonic() - began < 5, line
        for bad in ("0", "nan", "-1"):
            assert "--template-timeout must be a finite number of seconds > 0" in refused(
                capsys, "prompt", "--template", path, "--template-timeout", bad)
    finally:
        from callscope.engine.templates import isolation

        isolation._limits = None


def test_good_templates_still_render_after_a_hostile_one(tmp_path, capsys, limits):
    path = tmp_path / "loops.jinja"
    path.write_text(NESTED_LOOPS)
    refused(capsys, "prompt", "--template", path)
    code, out, err = cli(capsys, "prompt", "--format", "hermes", "--prompt", "hi")
    assert code == 0 and "<|im_start|>user\nhi<|im_end|>" in out, err


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_the_sandbox_worker_ends_with_a_parent_killed_mid_render(tmp_path):
    # the parent starts a render that would run for a minute, then is killed with -9: the worker, busy in the
    # render (not reading its pipe), must end by itself
    import os
    import signal
    import subprocess
    import sys

    script = (
        "import sys, threading\n"
        "from callscope.engine.templates import isolation\n"
        "isolation.set_render_limits(seconds=60)\n"
        "threading.Timer(30, lambda: None).start()\n"
        "def report():\n"
        "    import time\n"
        "    while isolation.worker_pid() is None: time.sleep(0.01)\n"
        "    print(isolation.worker_pid(), flush=True)\n"
        "threading.Thread(target=report, daemon=True).start()\n"
        f"isolation.render_source('t', {NESTED_LOOPS!r}, {{'messages': []}})\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        worker = int(parent.stdout.readline())
        time.sleep(0.5)  # the render is under way
        assert _alive(worker)
    finally:
        parent.kill()
        parent.wait(10)
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(worker)
    if alive:
        os.kill(worker, signal.SIGKILL)
    assert not alive, "the sandbox worker outlived its parent"
