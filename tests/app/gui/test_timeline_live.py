"""A live run that outgrows the timeline's range: every tick lane is re-picked for the new range.

On a live frame that moves the range, the timeline picks the grown series' ticks once (in
``_draw_lanes``) and re-picks only the others (a lane that stopped growing, like the content
before a call: with more marks than pixel columns, which of them are drawn depends on the range);
this checks no lane is left drawn for an old range.
"""

from __future__ import annotations

import numpy as np
import pytest

from callscope.benchmarks.workload import big_arguments, write_file_text
from callscope.engine.analysis.analyzer import SourceInfo
from tests.support.gui_helpers import make_window

pytestmark = pytest.mark.gui
TOKENS = 3000
BATCH = 150


def _stale_lanes(timeline) -> list[tuple[str, str]]:
    """Tick series whose drawn ticks are not the ones the current view range picks from all their marks."""
    from callscope.panes.tick_marks import visible_ticks

    view = timeline._view_span()
    return [key for key, marks in timeline.tick_marks().items()
            if not np.array_equal(marks.drawn_xs(), visible_ticks(marks.xs, view))]


def test_live_growth_past_the_range_repicks_every_tick_lane(qtbot, tmp_path, monkeypatch):
    from callscope.live.run_worker import RunPlan

    window = make_window(qtbot, tmp_path, monkeypatch)
    controller, timeline = window.runs, window.timeline
    prose = "I will write the file now, as asked. " * 550  # ~20,000 characters: content over ~1,900 tokens
    text = write_file_text("hermes", big_arguments(TOKENS * 4), content=prose).encode()
    size = len(text) // TOKENS
    pieces = [text[i * size : (i + 1) * size] for i in range(TOKENS - 1)] + [text[(TOKENS - 1) * size :]]
    controller._on_prepared(RunPlan(SourceInfo("model", None, "hermes", "incremental"), "hermes", None, "grow", 12, "test"))
    vb = timeline.plot.getPlotItem().getViewBox()
    ranges_after_content = set()
    content = 0
    for start in range(0, TOKENS, BATCH):
        for i in range(start, min(start + BATCH, TOKENS)):
            controller.on_token(pieces[i], i * 2.0, i)
        controller.drain()
        window.session.flush()
        grown = timeline.drawn().get(("parse", "content"), 0)
        if grown == content:
            ranges_after_content.add(tuple(vb.viewRange()[0]))
        content = grown
        assert _stale_lanes(timeline) == [], f"after token {start + BATCH}"
    assert content > vb.width()  # more content marks than pixel columns: the range decides which are drawn
    assert len(ranges_after_content) > 1  # the range moved after the content lane had stopped growing
