"""The deltas table, the timeline's axis and the badge on a long trace: step 100000 whole, no exponents."""

from __future__ import annotations

from tests.engine.analysis.test_units import SCIENTIFIC, _long_run


def test_the_window_shows_step_100000_and_long_times_whole(qtbot, tmp_path, monkeypatch):
    from PySide6.QtGui import QFontMetrics

    from tests.support.gui_helpers import make_window

    window = make_window(qtbot, tmp_path, monkeypatch)
    window.session.show_analysis(_long_run())
    window.session.flush()
    table = window.chunks_view.table
    metrics = QFontMetrics(table.font())
    header = table.horizontalHeader()
    padding = 24  # the cell's padding (2 x 6 px) and its frame: what a column needs beyond its text
    assert header.sectionSize(0) >= metrics.horizontalAdvance("100000") + padding
    assert header.sectionSize(1) >= metrics.horizontalAdvance("2000.000 s") + padding
    axis = window.timeline.plot.getPlotItem().getAxis("bottom")
    ticks = axis.tickStrings([0.0, 1e6, 2e6], 1.0, 2e5)
    assert ticks == ["0", "1,000,000", "2,000,000"]
    badge = window.source_bar.ttfd.text()
    assert not SCIENTIFIC.search(badge) and "min" in badge, badge
