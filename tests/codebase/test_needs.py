"""A test that needs what this machine lacks skips and says why; in CI (``CI=true``) it fails instead.

The needs come from markers set by folder or fixture (tests/support/requirements.py). Here a
real model test and a real GUI test module run in a child pytest with llama-cpp-python or Qt
taken away (``CALLSCOPE_TEST_HIDE``), once as a developer runs them and once as CI does.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.paths import ROOT
from tests.support.requirements import markers_for

MODEL_TEST = "tests/system/test_prefill_cancel.py"
GUI_MODULE = "tests/app/gui/test_turn_queue.py"


def _pytest(paths: list[str], hide: str, ci: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "CALLSCOPE_CHECK_QT_FREE", "PYTEST_ADDOPTS")}
    env["CALLSCOPE_TEST_HIDE"] = hide
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rsf", "-p", "no:cacheprovider", *paths],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # a child pytest each
@pytest.mark.parametrize("hide, path, reason", [
    ("llama_cpp", MODEL_TEST, "needs the packaged model"),
    ("PySide6", GUI_MODULE, "needs Qt"),
])
def test_a_missing_dependency_is_a_skip_with_its_reason(hide, path, reason):
    out = _pytest([path], hide, ci=False)
    assert out.returncode in (0, 5), out.stdout[-2000:]  # 5: a skipped module leaves nothing collected
    assert "skipped" in out.stdout and reason in out.stdout and "passed" not in out.stdout.splitlines()[-1]


@pytest.mark.slow
@pytest.mark.parametrize("hide, path", [("llama_cpp", MODEL_TEST), ("PySide6", GUI_MODULE)])
def test_in_ci_a_missing_dependency_fails(hide, path):
    out = _pytest([path], hide, ci=True)
    assert out.returncode != 0 and "CI=true: a required dependency may not skip" in out.stdout, out.stdout[-2000:]


def test_needs_come_from_folders_and_fixtures():
    assert markers_for("app/gui/test_window.py", []) == {"gui"}
    assert markers_for("engine/capture/test_proxy.py", ["tmp_path"]) == set()
    assert markers_for("system/test_llama_server_proxy.py", ["llama_server"]) == {"model", "llama"}
    assert markers_for("system/test_backend_build.py", ["qtbot"]) == {"gui"}
    assert markers_for("system/test_packaging.py", ["wheel", "tmp_path"]) == {"slow"}
