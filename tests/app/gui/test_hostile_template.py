"""A hostile chat template in the window's Template pane: the window keeps running, the render is killed at its
limit, and the pane says why in one line (a real window offscreen, the real sandbox process)."""

from __future__ import annotations

import time

import pytest
from PySide6.QtCore import QTimer

from tests.support.gui_helpers import PARALLEL, make_window

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("forget_derived")]
NESTED_LOOPS = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}{{ messages }}"
UNSAFE = "{{ messages.__class__.__mro__ }}"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    from callscope.engine.templates import isolation

    monkeypatch.setenv(isolation.TIMEOUT_ENV, "2")  # the window's setting: the environment
    isolation._limits = None
    yield make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    isolation._limits = None


def _fails(window, qtbot, path) -> tuple[str, float, int]:
    """Open ``path`` in the Template pane; (the one-line failure, seconds to it, GUI ticks meanwhile)."""
    view = window.template_view
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(50)
    began = time.monotonic()
    with qtbot.waitSignal(view.failed, timeout=30000) as failed:
        window.templates.open_path(str(path))
    elapsed = time.monotonic() - began
    timer.stop()
    return failed.args[0], elapsed, len(ticks)


def test_a_template_that_never_ends_is_stopped_and_the_pane_says_why(window, qtbot, tmp_path):
    path = tmp_path / "loops.jinja"
    path.write_text(NESTED_LOOPS)
    message, elapsed, ticks = _fails(window, qtbot, path)
    assert "loops.jinja:1: rendering took longer than 2 s and was stopped" in message and "\n" not in message
    assert elapsed < 10
    assert ticks >= elapsed / 0.05 / 4  # the GUI thread kept running its timers all along
    view = window.template_view
    assert "rendering took longer than 2 s" in view.body.toPlainText()
    assert window.shown_errors[-1] == ("Cannot analyse the template", message)
    assert not view.analysing and not view.busy.isVisibleTo(view)


def test_a_template_the_sandbox_refuses_says_so_in_the_pane(window, qtbot, tmp_path):
    path = tmp_path / "unsafe.jinja"
    path.write_text(UNSAFE)
    message, _, _ = _fails(window, qtbot, path)
    assert "the sandbox refused it: SecurityError" in message and "\n" not in message
    assert "the sandbox refused it" in window.template_view.body.toPlainText()


def test_closing_the_window_mid_render_does_not_wait_out_the_limit(qtbot, tmp_path, monkeypatch):
    from callscope.engine.templates import isolation

    monkeypatch.setenv(isolation.TIMEOUT_ENV, "60")
    isolation._limits = None
    try:
        window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
        path = tmp_path / "loops.jinja"
        path.write_text(NESTED_LOOPS)
        window.templates.open_path(str(path))
        qtbot.waitUntil(lambda: isolation.worker_pid() is not None, timeout=20000)
        time.sleep(0.3)  # the render is under way
        began = time.monotonic()
        assert window.template_view.shutdown(20000)
        assert time.monotonic() - began < 5
    finally:
        isolation._limits = None
