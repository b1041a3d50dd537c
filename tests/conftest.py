import os
import sys
import tempfile
from pathlib import Path

import pytest

from tests.support import requirements

requirements.hide_from_env()  # before anything imports what a test of the skip rules takes away
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# pytest-qt imports Qt when it starts: loaded only where Qt is installed (else the gui tests skip, saying why),
# and not by `make check`, whose tests must run without Qt.
if os.environ.get("CALLSCOPE_CHECK_QT_FREE") != "1" and requirements.REQUIREMENTS["gui"].present():
    os.environ.setdefault("PYTEST_QT_API", "pyside6")
    pytest_plugins = ("pytestqt.plugin",)
# Every QSettings a test (or a `callscope gui` subprocess) opens lives in a throw-away directory:
# a test run must never touch the user's ~/.config/callscope (recent files pointing into /tmp).
_SETTINGS_HOME = tempfile.mkdtemp(prefix="callscope-test-config-")
os.environ["XDG_CONFIG_HOME"] = _SETTINGS_HOME


# -------------------------------------------- needs: markers by folder and fixture; a missing one skips (CI: fails)

TESTS = Path(__file__).resolve().parent


def _relative(path) -> str:
    return Path(path).resolve().relative_to(TESTS).as_posix()


def pytest_collection_modifyitems(config, items):
    for item in items:
        for name in sorted(requirements.markers_for(_relative(item.path), item.fixturenames)):
            item.add_marker(name)


def _lacking(reasons: list[str], what: str = "") -> None:
    """Skip (or, in CI, fail) for what is missing."""
    message = f"{what}needs " + "; ".join(reasons)
    if requirements.in_ci():
        pytest.fail(f"{message} (CI=true: a required dependency may not skip)", pytrace=False)
    raise pytest.skip.Exception(message, _use_item_location=True)  # the report names the test, not this file


def pytest_runtest_setup(item):
    reasons = requirements.missing({mark.name for mark in item.iter_markers()})
    if reasons:
        _lacking(reasons)


QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph", "qasync", "pytestqt")


def pytest_sessionfinish(session, exitstatus):
    """``make check`` runs the Qt-free tests: any of them that loaded Qt fails the run (they must not need it)."""
    if os.environ.get("CALLSCOPE_CHECK_QT_FREE") != "1" or session.testscollected == 0:
        return
    loaded = sorted({name.split(".")[0] for name in sys.modules} & set(QT_MODULES) - {"pytestqt"})
    if loaded:
        session.config.get_terminal_writer().line(f"Qt-free tests loaded Qt: {', '.join(loaded)}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


class _LackingModule(pytest.Module):
    """A test module of a folder whose need is missing: not imported (it would fail on its imports), skipped."""

    reasons: list[str] = []

    def collect(self):
        _lacking(self.reasons, f"{_relative(self.path)}: every test here ")
        return []


def pytest_ignore_collect(collection_path, config):
    """``make check`` (no Qt) does not even import the modules of a folder whose tests all need Qt."""
    if os.environ.get("CALLSCOPE_CHECK_QT_FREE") == "1" and collection_path.is_dir() and collection_path != TESTS:
        if "gui" in requirements.markers_for(_relative(collection_path) + "/x", []):
            return True
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    reasons = requirements.missing(requirements.markers_for(_relative(module_path), []))
    if reasons:
        module = _LackingModule.from_parent(parent, path=module_path)
        module.reasons = reasons
        return module
    return None


@pytest.fixture(autouse=True)
def _close_stray_windows():
    """A window or dialog one GUI test leaves open must not sit over the next test's window
    (it would swallow that test's mouse events). Non-GUI tests never import Qt for this."""
    yield
    if "PySide6.QtWidgets" not in sys.modules:
        return
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        return
    for widget in app.topLevelWidgets():
        if widget.isVisible():
            widget.close()
    app.processEvents()


# -------------------------------------------- capture fixtures (Qt and the server imported only when used)


@pytest.fixture(scope="module")
def server():
    """A canned SSE server on 127.0.0.1 (tests/support/sse_server.py), one per test module."""
    from tests.support.sse_server import CannedServer

    srv = CannedServer().start()
    yield srv
    srv.stop()


@pytest.fixture
def qloop(qapp):
    """The app's asyncio loop is Qt's own (qasync), as `callscope gui` runs it; pytest-qt drives Qt.

    qasync's stop() would also call QApplication.exit(), which breaks every later nested event loop
    (pytest-qt's waits); retire_qasync_loop stops, unregisters and closes it and kills its Qt timers.
    """
    import asyncio

    import qasync

    from tests.support.gui_helpers import retire_qasync_loop

    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    yield loop
    assert loop.is_running()
    retire_qasync_loop(loop)


@pytest.fixture
def forget_derived():
    """Formats derived from templates during a test are unregistered after it (other tests list every format)."""
    yield
    from callscope.engine.formats import FORMAT_IDS, unregister_format
    from callscope.engine.formats.derived import PREFIX

    for format_id in list(FORMAT_IDS):
        if format_id.startswith(PREFIX):
            unregister_format(format_id)


@pytest.fixture
def legacy_profiles(monkeypatch):
    """The client profiles the rule-by-rule capture tests were written for (openai-python and naive): they pin
    exactly which rules a stream raises. Every default profile is judged against the real libraries in
    tests/system/test_differential.py, and the quirks library states what each of them makes of the streams real servers send."""
    from callscope.engine.streams import conformance

    monkeypatch.setattr(conformance, "default_profiles", lambda: ("openai-python", "naive"))
