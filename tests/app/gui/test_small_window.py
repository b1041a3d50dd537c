"""At 1024x700 (a small laptop screen) the panes still show what they are for: every row of a short violations list."""

from __future__ import annotations

import pytest

from tests.support.gui_helpers import REGRESS, make_window

pytestmark = pytest.mark.gui


def _fully_shown(table, row: int) -> bool:
    top = table.rowViewportPosition(row)
    return top >= 0 and top + table.rowHeight(row) <= table.viewport().height()


def test_a_1024x700_window_lists_both_violations_and_keeps_the_timeline_readable(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QApplication

    from callscope.panes.timeline import PLOT_MIN_HEIGHT

    window = make_window(qtbot, tmp_path, monkeypatch, REGRESS)
    window.resize(1024, 700)
    pane = window.reconcile_view
    window.tabs.setCurrentWidget(pane)
    for _ in range(3):
        window.session.flush()
        QApplication.processEvents()
    assert window.height() <= 700, "the window fits the screen"
    assert pane.violations.rowCount() == 2
    assert _fully_shown(pane.violations_table, 0) and _fully_shown(pane.violations_table, 1)
    assert _fully_shown(pane.calls_table, 0) and pane.diff.height() >= 40
    assert window.timeline.plot.height() >= PLOT_MIN_HEIGHT
    assert "arguments regress" in pane.about.toolTip()  # the description, one line (whole in its tooltip)
