"""The llama.cpp build runs on any x86-64 machine, and a build that cannot run is refused, never fatal.

The machine that found the bug reported AMX and AVX-512 in /proc/cpuinfo; a
native build put ``tileloadd`` into libggml-cpu.so and the first model load
died with SIGILL. These tests read the installed libraries' instructions,
run the real probe, and check that a probe crash (the child raises the
signal itself: a real SIGILL needs such a CPU) becomes one line and a
window that stays open.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from callscope.engine.decode import probe
from tests.support.paths import ROOT

AMX_MNEMONICS = re.compile(r"\b(tileloadd|tileloaddt1|tilestored|tdpbssd|tdpbsud|tdpbusd|tdpbuud|tdpbf16ps|tdpfp16ps|"
                           r"ldtilecfg|sttilecfg|tilezero|tilerelease)\b")
AVX512_REGISTER = re.compile(r"%zmm\d+|%k[1-7]\b")

pytestmark = [pytest.mark.llama,
              pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86-64 instruction checks")]


def _libraries() -> list[Path]:
    build = probe.installed_build()
    if build is None:
        pytest.skip("llama-cpp-python is not installed")
    libs = {p.resolve() for p in Path(build.lib_dir).glob("lib*.so*") if p.is_file()}
    assert libs, f"no shared libraries in {build.lib_dir}"
    return sorted(libs)


def _disassembly(lib: Path) -> str:
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("objdump (binutils) is not installed")
    return subprocess.run([objdump, "-d", "--no-show-raw-insn", str(lib)], capture_output=True, text=True,
                          check=True).stdout


def _amx_granted() -> bool:
    """Would Linux let this process use AMX tile data? (arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA))."""
    libc = ctypes.CDLL(None, use_errno=True)
    sys_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata = 158, 0x1023, 18
    return libc.syscall(sys_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0


def test_ggml_uses_amx_only_where_the_os_grants_it():
    """AMX code in a library that is loaded whole is only safe where the kernel grants AMX to this process."""
    found = {lib.name: len(AMX_MNEMONICS.findall(_disassembly(lib))) for lib in _libraries()}
    with_amx = {name: n for name, n in found.items() if n}
    if with_amx:
        assert _amx_granted(), (
            f"{with_amx}: AMX instructions, but this machine refuses AMX (arch_prctl): the first matrix "
            "multiply dies with SIGILL; rebuild with `make setup` (portable)")


def test_the_default_build_is_portable():
    """`make setup` installs the portable x86-64-v3 build: no AVX-512, no AMX, whatever CPU built it."""
    build = probe.installed_build()
    if build is None:
        pytest.skip("llama-cpp-python is not installed")
    if build.flag_set not in (None, "portable"):
        pytest.skip(f"this venv holds an opt-in {build.flag_set} build")
    for lib in _libraries():
        text = _disassembly(lib)
        assert not AMX_MNEMONICS.search(text), f"{lib.name}: AMX instructions in the portable build"
        hits = AVX512_REGISTER.findall(text)
        assert not hits, f"{lib.name}: {len(hits)} AVX-512 register uses (e.g. {hits[0]}) in the portable build"


def test_probe_decodes_one_token_on_this_machine(tmp_path, monkeypatch):
    build = probe.installed_build()
    if build is None:
        pytest.skip("llama-cpp-python is not installed")
    from callscope.engine.core.gguf import default_model_path

    verdict = probe.run_probe(default_model_path(), build)
    assert verdict.ok, verdict.message
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    probe.forget()
    probe.ensure_backend()
    cached = json.loads((tmp_path / "callscope" / "probe" / f"{build.fingerprint}.json").read_text())
    assert cached["ok"] is True and "llama-cpp-python" in cached["build"]
    assert probe.backend_known()


def _broken(monkeypatch, tmp_path, sig: str = "SIGILL") -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(probe.FAULT_ENV, sig)
    probe.forget()


def test_a_crashing_build_is_named_with_its_signal_and_how_to_rebuild(tmp_path, monkeypatch):
    if probe.installed_build() is None:
        pytest.skip("llama-cpp-python is not installed")
    from callscope.engine.core.errors import BackendBroken

    _broken(monkeypatch, tmp_path)
    with pytest.raises(BackendBroken) as err:
        probe.ensure_backend()
    message = str(err.value)
    assert "crashed with SIGILL" in message and "CPU instructions" in message and "llama-cpp-python" in message
    assert "make setup" in message and "\n" not in message
    # The verdict is cached per build: the next check does not probe again (and still refuses).
    monkeypatch.delenv(probe.FAULT_ENV)
    probe.forget()
    with pytest.raises(BackendBroken):
        probe.ensure_backend()
    # Another build (the fingerprint changes when its libraries are replaced) is probed afresh.
    monkeypatch.setattr(probe, "installed_build", lambda: probe.BuildInfo("x", "/nowhere", "f" * 16, "portable"))
    probe.ensure_backend()


def test_signal_names():
    assert probe.signal_name(-4) == "SIGILL"
    assert probe.signal_name(-11) == "SIGSEGV"


def test_run_with_a_broken_build_says_so_in_one_line_and_lives(tmp_path):
    if probe.installed_build() is None:
        pytest.skip("llama-cpp-python is not installed")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), **{probe.FAULT_ENV: "SIGILL"})
    out = subprocess.run([sys.executable, "-m", "callscope", "run", "--max-tokens", "4"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("callscope run: ") and "SIGILL" in lines[0], out.stderr
    assert "Fatal Python error" not in out.stderr


@pytest.mark.gui
def test_the_window_survives_a_broken_build_and_shows_a_recording(qtbot, tmp_path, monkeypatch):
    if probe.installed_build() is None:
        pytest.skip("llama-cpp-python is not installed")
    from callscope.gui_main import start_default_run
    from tests.support.gui_helpers import make_window

    window = make_window(qtbot, tmp_path, monkeypatch)
    _broken(monkeypatch, tmp_path)
    with qtbot.waitSignal(window.runs.failed, timeout=120000):
        assert start_default_run(window)
    qtbot.waitUntil(lambda: window.session.state is not None, timeout=10000)
    assert window.isVisible()
    title, message = window.shown_errors[-1]
    assert title == "Run failed" and "SIGILL" in message and "make setup" in message
    assert window.session.current.steps, "the start-up demo falls back to a shipped recording"
    probe.forget()


def test_wheel_cache_is_keyed_by_flags(tmp_path):
    """scripts/llama_wheel.py: one folder per flag set; a native key also depends on this CPU."""
    script = ROOT / "scripts" / "llama_wheel.py"
    env = dict(os.environ, CALLSCOPE_WHEEL_CACHE=str(tmp_path))

    def folder(flags: str) -> str:
        return subprocess.run([sys.executable, str(script), "--flags", flags, "--print-dir"], env=env,
                              capture_output=True, text=True, check=True).stdout.strip()

    portable, native = folder("portable"), folder("native")
    assert portable != native and portable.startswith(str(tmp_path)) and "-portable-" in portable
    sys.path.insert(0, str(script.parent))
    try:
        import llama_wheel
    finally:
        sys.path.pop(0)
    key_here, inputs = llama_wheel.build_key("native")
    assert inputs["cpu_flags"], "a native build is tied to the CPU it was built on"
    assert "-DGGML_NATIVE=OFF" in llama_wheel.FLAG_SETS["portable"]
    assert not any("AVX512=ON" in f or "AMX" in f and f.endswith("ON") for f in llama_wheel.FLAG_SETS["portable"])
    assert llama_wheel.build_key("portable")[0] != key_here
