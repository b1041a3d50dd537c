#!/usr/bin/env python3
"""Build llama-cpp-python once per machine and flag set, cache the wheel under a key of its flags, install it.

Why this exists: llama-cpp-python ships no wheel here, so pip compiles it
(about 10 minutes on 2 cores). Left to itself the build is native
(``-march=native``): on a CPU that reports AMX or AVX-512 which the VM does not
enable, the library dies with SIGILL at the first matrix multiply. And pip's
wheel cache is keyed by version, not by build flags, so a broken wheel comes
back on every reinstall. This script builds with explicit flags, never reads
or writes pip's cache for it, and keeps each build in a folder named after
its flag set and a hash of everything that shapes the binary:

    ${CALLSCOPE_WHEEL_CACHE:-~/.cache/callscope/wheels}/llama-cpp-python-<version>-<flag set>-<key>/

Flag sets (``--flags``, or ``NATIVE=1`` in the environment):

``portable`` (default)
    x86-64-v3: AVX, AVX2, FMA, F16C, BMI2; no AVX-512, no AMX, no native
    tuning. Runs on any x86-64 machine with AVX2 whatever CPU built it.
``native``
    ``GGML_NATIVE=ON``: tuned to this CPU (its key includes this CPU's
    feature flags, so it is never reused on another CPU). Opt-in; may die
    with SIGILL in a VM that hides features its CPU reports.

Usage: ``python3 scripts/llama_wheel.py VENV_PYTHON [--flags portable|native] [--rebuild] [--print-dir]``.
The Makefile's ``setup`` runs it before installing callscope, so ``pip install -e``
finds llama-cpp-python already satisfied and never builds its own.
Standard library only: it runs with the system Python before the venv has anything.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

#: The llama-cpp-python release callscope is tested with. One place: the Makefile passes it on.
VERSION = os.environ.get("LLAMA_CPP_VERSION", "0.3.36")

FLAG_SETS: dict[str, list[str]] = {
    "portable": [
        "-DGGML_NATIVE=OFF",
        "-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON", "-DGGML_BMI2=ON",
        "-DGGML_AVX_VNNI=OFF", "-DGGML_AVX512=OFF", "-DGGML_AVX512_VBMI=OFF", "-DGGML_AVX512_VNNI=OFF",
        "-DGGML_AVX512_BF16=OFF", "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF",
    ],
    "native": ["-DGGML_NATIVE=ON"],
}
#: Written into the venv after an install: which build it holds (read by `callscope`'s backend probe).
MARKER = "callscope-llama-build.json"


def cache_root() -> Path:
    env = os.environ.get("CALLSCOPE_WHEEL_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "callscope" / "wheels"


def cpu_flags() -> str:
    """This CPU's feature flags (sorted), which a native build depends on."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor()
    for line in text.splitlines():
        if line.startswith(("flags", "Features")):
            return " ".join(sorted(set(line.split(":", 1)[1].split())))
    return ""


def compiler_version() -> str:
    try:
        out = subprocess.run(["cc", "--version"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return "none"
    return out.splitlines()[0] if out else "unknown"


def build_key(flag_set: str) -> tuple[str, dict[str, object]]:
    """A short hash of everything that shapes the binary, and those inputs (kept next to the wheel)."""
    inputs: dict[str, object] = {
        "package": "llama-cpp-python",
        "version": VERSION,
        "flag_set": flag_set,
        "cmake_args": FLAG_SETS[flag_set],
        "machine": platform.machine(),
        "compiler": compiler_version(),
    }
    if flag_set == "native":
        inputs["cpu_flags"] = cpu_flags()
    digest = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:12]
    return digest, inputs


def wheel_dir(flag_set: str) -> Path:
    key, _ = build_key(flag_set)
    return cache_root() / f"llama-cpp-python-{VERSION}-{flag_set}-{key}"


def cached_wheel(folder: Path) -> Path | None:
    wheels = sorted(folder.glob("llama_cpp_python-*.whl"))
    return wheels[-1] if wheels else None


def build(python: str, flag_set: str) -> Path:
    """Compile the wheel into its cache folder (atomically: a cancelled build leaves nothing behind)."""
    folder = wheel_dir(flag_set)
    key, inputs = build_key(flag_set)
    folder.parent.mkdir(parents=True, exist_ok=True)
    cmake_args = " ".join(FLAG_SETS[flag_set])
    print(f"Building llama-cpp-python {VERSION} ({flag_set}: {cmake_args}); about 10 minutes on 2 cores, once per "
          f"machine and flag set", flush=True)
    with tempfile.TemporaryDirectory(prefix=".build-", dir=folder.parent) as tmp:
        env = dict(os.environ, CMAKE_ARGS=cmake_args, FORCE_CMAKE="1", PIP_NO_CACHE_DIR="1")
        cmd = [python, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "--no-binary", "llama-cpp-python",
               f"llama-cpp-python=={VERSION}", "-w", tmp]
        subprocess.run(cmd, env=env, check=True)
        staged = Path(tmp) / "out"
        staged.mkdir()
        for whl in Path(tmp).glob("llama_cpp_python-*.whl"):
            whl.rename(staged / whl.name)
        (staged / "build.json").write_text(json.dumps({"key": key, **inputs}, indent=2) + "\n", encoding="utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        staged.rename(folder)
    found = cached_wheel(folder)
    if found is None:
        raise SystemExit(f"llama_wheel: the build left no wheel in {folder}")
    return found


def venv_root(python: str) -> Path:
    out = subprocess.run([python, "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def installed_key(python: str) -> str | None:
    """The key of the build this venv holds, when this script installed it and it is still there."""
    marker = venv_root(python) / MARKER
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    probe = subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('llama-cpp-python'))"],
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0 or probe.stdout.strip() != data.get("version"):
        return None
    return data.get("key")


def install(python: str, wheel: Path, flag_set: str) -> None:
    key, inputs = build_key(flag_set)
    # --force-reinstall --no-deps swaps the binary whatever build was there; the second call adds its
    # dependencies (numpy, diskcache, ...) and is a no-op otherwise. Neither touches pip's cache.
    subprocess.run([python, "-m", "pip", "install", "--no-cache-dir", "--force-reinstall", "--no-deps", str(wheel)],
                   check=True)
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-cache-dir", str(wheel)], check=True)
    marker = venv_root(python) / MARKER
    marker.write_text(json.dumps({"key": key, "wheel": str(wheel), **inputs}, indent=2) + "\n", encoding="utf-8")
    print(f"Installed llama-cpp-python {VERSION} ({flag_set} build {key}) from {wheel.parent}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("python", nargs="?", default=sys.executable, help="the venv's python to install into")
    default_set = "native" if os.environ.get("NATIVE", "0") not in ("", "0") else "portable"
    parser.add_argument("--flags", choices=sorted(FLAG_SETS), default=default_set)
    parser.add_argument("--rebuild", action="store_true", help="compile again even if a cached wheel exists")
    parser.add_argument("--print-dir", action="store_true", help="print the cache folder of this flag set and exit")
    parser.add_argument("--build-only", action="store_true", help="build (or find) the wheel, do not install it")
    args = parser.parse_args(argv)
    if args.print_dir:
        print(wheel_dir(args.flags))
        return 0
    key, _ = build_key(args.flags)
    if not args.rebuild and not args.build_only and installed_key(args.python) == key:
        print(f"llama-cpp-python {VERSION} ({args.flags} build {key}) is installed")
        return 0
    wheel = None if args.rebuild else cached_wheel(wheel_dir(args.flags))
    if wheel is None:
        wheel = build(args.python, args.flags)
    else:
        print(f"Using the cached {args.flags} wheel {wheel}", flush=True)
    if not args.build_only:
        install(args.python, wheel, args.flags)
    return 0


if __name__ == "__main__":
    sys.exit(main())
