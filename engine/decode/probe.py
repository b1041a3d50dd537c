"""Does this llama.cpp build run on this machine? Asked once per build, in a subprocess.

A llama-cpp-python wheel compiled with ``-march=native`` on a CPU that
reports AMX or AVX-512 dies with SIGILL the first time it multiplies a matrix
on a VM that does not enable those instructions, and the crash takes the
whole process with it: the CLI prints ``Fatal Python error: Illegal
instruction``, the window vanishes. So before the first in-process load of a
given build, :func:`ensure_backend` runs a child process that loads the
packaged model and decodes one token. A crash there becomes a
:class:`~callscope.engine.core.errors.BackendBroken` with one line saying
what happened (the signal) and how to rebuild; the caller (``callscope run``,
the GUI's worker) shows it and lives on.

The verdict is cached per build (a fingerprint of the installed shared
libraries) under ``~/.cache/callscope/probe/``: a probe costs a second or
two, once. Nothing here imports ``llama_cpp`` in this process.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import asdict, dataclass
from pathlib import Path

from callscope.engine.core.errors import BackendBroken

#: Set in the child's environment by tests: the child raises this signal after loading llama.cpp,
#: standing in for a build that uses instructions the CPU refuses (a real SIGILL needs such a CPU).
FAULT_ENV = "CALLSCOPE_PROBE_FAULT"
#: Written into the venv by scripts/llama_wheel.py: which flag set the installed build has.
BUILD_MARKER = "callscope-llama-build.json"
PROBE_TIMEOUT_S = 180.0
REBUILD_HINT = (
    "rebuild it for any x86-64 CPU: `make setup` in the callscope checkout (without make: "
    "CMAKE_ARGS='-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON' "
    "pip install --force-reinstall --no-cache-dir llama-cpp-python)"
)

_checked: set[str] = set()
_lock = threading.Lock()


@dataclass(slots=True)
class BuildInfo:
    """The installed llama-cpp-python build, identified without importing it."""

    version: str
    lib_dir: str
    fingerprint: str  # changes whenever any of its shared libraries is replaced
    flag_set: str | None  # "portable", "native", ... when scripts/llama_wheel.py installed it

    def describe(self) -> str:
        kind = f" ({self.flag_set} build)" if self.flag_set else ""
        return f"llama-cpp-python {self.version}{kind}"


@dataclass(slots=True)
class Verdict:
    ok: bool
    message: str  # "" when ok; else one line: what happened
    signal: str | None = None


def installed_build() -> BuildInfo | None:
    """The llama-cpp-python build this interpreter would load, or None when none is installed."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        return None
    package = Path(next(iter(spec.submodule_search_locations)))
    lib_dir = package / "lib"
    libs = sorted(lib_dir.glob("lib*.so*")) if lib_dir.is_dir() else []
    try:
        version = importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    h = hashlib.sha256(f"{version}\0{package}".encode())
    for lib in libs:
        st = lib.stat()
        h.update(f"\0{lib.name}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}".encode())
    return BuildInfo(version, str(lib_dir), h.hexdigest()[:16], _flag_set())


def _flag_set() -> str | None:
    try:
        data = json.loads((Path(sys.prefix) / BUILD_MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("flag_set") if isinstance(data, dict) else None


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "callscope" / "probe"


def _cached(build: BuildInfo) -> Verdict | None:
    try:
        data = json.loads((cache_dir() / f"{build.fingerprint}.json").read_text(encoding="utf-8"))
        return Verdict(bool(data["ok"]), str(data.get("message", "")), data.get("signal"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _remember(build: BuildInfo, verdict: Verdict) -> None:
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{build.fingerprint}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps({**asdict(verdict), "build": build.describe()}) + "\n", encoding="utf-8")
        tmp.replace(folder / f"{build.fingerprint}.json")
    except OSError:
        pass  # an unwritable cache only means probing again next time


def signal_name(returncode: int) -> str:
    """``-4`` -> ``SIGILL``; a positive code is an exit status, not a signal."""
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _signal_words(name: str) -> str:
    if name == "SIGILL":
        return ("uses CPU instructions this machine does not run (built natively on a CPU whose AMX or AVX-512 "
                "this machine or VM does not enable)")
    if name == "SIGSEGV":
        return "is broken or mismatched"
    if name == "SIGBUS":
        return "or the model file could not be mapped"
    if name == "SIGKILL":
        return "was killed (out of memory?)"
    return "crashed"


def run_probe(model_path: str, build: BuildInfo, timeout: float = PROBE_TIMEOUT_S) -> Verdict:
    """Load ``model_path`` and decode one token in a child process; the child's fate is the verdict."""
    cmd = [sys.executable, "-m", "callscope.engine.decode.probe", "--child", model_path]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Verdict(False, f"{build.describe()} did not decode one token within {timeout:.0f} s in a test process")
    if proc.returncode == 0 and proc.stdout.strip().startswith("ok"):
        return Verdict(True, "")
    if proc.returncode < 0:
        name = signal_name(proc.returncode)
        return Verdict(False, f"llama.cpp crashed with {name} decoding one test token: {build.describe()} "
                              f"{_signal_words(name)}", name)
    last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return Verdict(False, f"{build.describe()} failed to decode one token in a test process "
                          f"(exit {proc.returncode}: {last[:300]})")


def ensure_backend(model_path: str | None = None) -> None:
    """Raise :class:`BackendBroken` unless this llama.cpp build is known to decode on this machine.

    Probes once per build (cached on disk) with the packaged model, or with
    ``model_path`` when the packaged model is not installed. Thread-safe: the
    GUI calls it on its worker thread, never on the GUI thread.
    """
    build = installed_build()
    if build is None:
        return  # the import below reports the missing package with its own message
    with _lock:
        if build.fingerprint in _checked:
            return
        verdict = _cached(build)
        if verdict is None:
            probe_model = _probe_model(model_path)
            if probe_model is None:
                return
            verdict = run_probe(probe_model, build)
            if verdict.ok or verdict.signal is not None:  # a timeout or odd exit may be the machine's load: ask again
                _remember(build, verdict)
        if verdict.ok:
            _checked.add(build.fingerprint)
            return
    raise BackendBroken(f"{verdict.message}; {REBUILD_HINT}")


def _probe_model(fallback: str | None) -> str | None:
    from callscope.engine.core.errors import ModelNotFound
    from callscope.engine.core.gguf import default_model_path

    try:
        return default_model_path()
    except ModelNotFound:
        return fallback


def backend_known() -> bool:
    """Has this build's verdict been settled (in this process or on disk)? Then no probe will run."""
    build = installed_build()
    return build is None or build.fingerprint in _checked or _cached(build) is not None


def forget() -> None:
    """Drop this process's memory of probed builds (tests re-probe after swapping the cache)."""
    with _lock:
        _checked.clear()


# ------------------------------------------------------------------ the child


def _child(model_path: str) -> int:
    """Load the model quietly, evaluate a short prompt, sample one token."""
    from llama_cpp import Llama

    fault = os.environ.get(FAULT_ENV)
    if fault:
        signal.raise_signal(getattr(signal, fault))
    llama = Llama(model_path=model_path, n_ctx=64, n_batch=64, n_threads=1, verbose=False)
    tokens = llama.tokenize(b"The quick brown fox jumps over the lazy dog.")
    for token in llama.generate(tokens, top_k=1):
        print(f"ok {token}", flush=True)
        return 0
    return 3


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        sys.exit(_child(sys.argv[2]))
    print("usage: python -m callscope.engine.decode.probe --child MODEL.gguf", file=sys.stderr)
    sys.exit(2)
