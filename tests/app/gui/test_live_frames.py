"""How a live frame is spread over the event loop and what it repaints (the `bench gui` stall target).

- a growth reaches the panes in two turns: ``grew`` (lanes, text), then ``cursorChanged``, then the feed goes on;
- a lane's ticks stay in a settled item between range changes; only its tail takes the new ones, and
  settled + tail is always exactly what one item thinned to the view would draw;
- the grid is drawn by the timeline (the axis's own grid cost a few ms per range change) at the axis's ticks;
- no full garbage collection runs while a live stream grows.
"""

from __future__ import annotations

import gc
import sys

import numpy as np
import pytest

from callscope.benchmarks.workload import big_arguments, write_file_text
from callscope.engine.analysis.analyzer import SourceInfo
from callscope.engine.core.bulk import FullCollectionHold
from tests.support.gui_helpers import make_window

pytestmark = pytest.mark.gui


def _pieces(tokens: int) -> list[bytes]:
    text = write_file_text("hermes", big_arguments(tokens * 4), content="Writing it now.").encode()
    size = len(text) // tokens
    return [text[i * size : (i + 1) * size] for i in range(tokens - 1)] + [text[(tokens - 1) * size :]]


def _points(item) -> int:
    xs = item.getData()[0]
    return 0 if xs is None else len(xs)


def _start(window, name: str = "frames") -> None:
    from callscope.live.run_worker import RunPlan

    window.runs._begin(None)
    window.runs._on_prepared(RunPlan(SourceInfo("model", None, "hermes", "incremental"), "hermes", None, name, 12, "test"))


def _inside(function_name: str) -> bool:
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name == function_name:
            return True
        frame = frame.f_back
    return False


def test_a_growth_reaches_the_panes_in_two_event_loop_turns(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch)
    session = window.session
    _start(window)
    order: list[tuple[str, bool]] = []
    session.grew.connect(lambda _text: order.append(("grew", _inside("_emit_growth"))))
    # emitted from within the growth's own turn (_emit_growth), the cursor half would add its panes' work to it
    session.cursorChanged.connect(lambda _index: order.append(("cursor", _inside("_emit_growth"))))
    session.growthShown.connect(lambda: order.append(("shown", session.growth_pending)))
    for i, piece in enumerate(_pieces(40)):
        window.runs.on_token(piece, i * 10.0, i)
    qtbot.waitUntil(lambda: ("shown", False) in order, timeout=2000)
    assert order[:3] == [("grew", True), ("cursor", False), ("shown", False)]  # the cursor half on a later turn
    qtbot.waitUntil(lambda: not window.runs._pending and not session.growth_pending, timeout=5000)
    assert window.timeline.drawn()[("tokens", "token")] == 40


def test_flush_delivers_both_halves_of_a_growth(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch)
    _start(window)
    seen: list[int] = []
    window.session.cursorChanged.connect(seen.append)
    for i, piece in enumerate(_pieces(10)):
        window.runs.on_token(piece, i * 10.0, i)
    window.runs.drain()
    window.session.flush()
    assert seen and seen[-1] == window.session.state.last
    assert not window.session.growth_pending


def test_live_ticks_settle_on_a_range_change_and_only_the_tail_grows_between(qtbot, tmp_path, monkeypatch):
    from callscope.panes.tick_marks import visible_ticks

    window = make_window(qtbot, tmp_path, monkeypatch)
    timeline = window.timeline
    _start(window)
    pieces = _pieces(3000)
    settled_sizes, tail_sizes, ranges, thinned = [], [], [], []
    for start in range(0, len(pieces), 100):
        for i in range(start, start + 100):
            window.runs.on_token(pieces[i], i * 20.0, i)
        window.runs.drain()
        window.session.flush()
        marks = timeline.tick_marks()[("tokens", "token")]
        view = timeline._view_span()
        assert np.array_equal(marks.drawn_xs(), visible_ticks(marks.xs, view)), f"after token {start + 100}"
        settled_sizes.append(_points(marks.settled))
        tail_sizes.append(_points(marks.tail))
        ranges.append((view.x0, view.x1))
        thinned.append(len(marks.xs) > view.width)
    changes = [i for i in range(1, len(ranges)) if ranges[i] != ranges[i - 1]]
    assert 3 <= len(changes) <= 12  # the live view doubles when full: a few range changes, not one per frame
    steady = [i for i in range(1, len(ranges)) if i not in changes]
    # settled ticks untouched, but once: when the lane outgrows the plot's pixel columns and is thinned
    resettled = [i for i in steady if settled_sizes[i] != settled_sizes[i - 1]]
    assert len(steady) > 10 and all(thinned[i] and not thinned[i - 1] for i in resettled), resettled
    assert all(tail_sizes[i] == 0 for i in changes)  # a range change folds the tail into the settled item
    assert any(tail_sizes[i] > 0 for i in steady)


def test_the_call_bar_grows_in_its_tail_and_spans_the_arguments(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch)
    timeline = window.timeline
    _start(window)
    for i, piece in enumerate(_pieces(600)):
        window.runs.on_token(piece, i * 20.0, i)
        if i % 50 == 49:
            window.runs.drain()
            window.session.flush()
    window.runs.drain()
    window.session.flush()
    (bar, _label), = timeline._call_items.values()
    span = window.session.state.lanes.calls[0]
    assert bar.span() == (span.args_first_x, span.args_last_x)
    tail = bar.tail.getData()[0]
    if tail is not None and len(tail):  # the growth since the last range change: from the settled end on
        assert tail[0] == bar.settled.getData()[0][-1] and tail[-1] == span.args_last_x


def test_the_timeline_draws_its_grid_at_the_axis_ticks_and_not_when_empty(qtbot, tmp_path, monkeypatch):
    from tests.support.gui_helpers import HEADLINE

    window = make_window(qtbot, tmp_path, monkeypatch)
    timeline = window.timeline
    assert not any(curve.isVisible() for curve in timeline.grid.levels)  # no source: no grid over the hint
    assert window.open_path(str(HEADLINE))
    window.session.flush()
    axis = timeline.plot.getPlotItem().getAxis("bottom")
    view = timeline._view_span()
    major = axis.tickValues(view.x0, view.x1, view.width)[0][1]
    assert timeline.grid.xs(0) == pytest.approx(list(major)) and len(major) >= 3
    assert all(curve.isVisible() for curve in timeline.grid.levels)
    assert axis.grid is False  # the axis draws no grid of its own
    timeline.zoom(0.1)
    view = timeline._view_span()
    assert timeline.grid.xs(0) == pytest.approx(list(axis.tickValues(view.x0, view.x1, view.width)[0][1]))


def test_no_full_collection_while_a_live_stream_grows(qtbot, tmp_path, monkeypatch):
    threshold = gc.get_threshold()
    window = make_window(qtbot, tmp_path, monkeypatch)
    _start(window)
    assert gc.get_threshold()[:2] == threshold[:2] and gc.get_threshold()[2] > 10**9
    for i, piece in enumerate(_pieces(20)):
        window.runs.on_token(piece, i * 10.0, i)
    window.runs.drain()
    window.runs._conclude(window.runs.analyzer.finish("stop"), "test run")
    assert gc.get_threshold() == threshold


def test_full_collection_holds_nest_and_restore_the_threshold():
    before = gc.get_threshold()
    first, second = FullCollectionHold(), FullCollectionHold()
    first.hold()
    first.hold()  # idempotent per holder
    second.hold()
    first.release()
    assert gc.get_threshold()[2] > 10**9  # the second still holds
    second.release()
    assert gc.get_threshold() == before
    second.release()  # releasing twice changes nothing
    assert gc.get_threshold() == before


def test_a_new_stream_reuses_the_lane_items_and_a_theme_change_remakes_them(qtbot, tmp_path, monkeypatch):
    from tests.support.gui_helpers import HEADLINE, PARALLEL

    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    timeline = window.timeline
    first = timeline.tick_marks()[("tokens", "token")]
    glyphs = {key: graphic for key, graphic in timeline._series.items()}
    assert window.open_path(str(PARALLEL))
    window.session.flush()
    again = timeline.tick_marks()[("tokens", "token")]
    assert again is first  # emptied and refilled: making two plot items per lane costs more than a live frame
    shared = set(glyphs) & set(timeline._series)
    assert shared and all(timeline._series[key] is glyphs[key] for key in shared)  # glyph series too
    assert len(again) == len(window.session.state.lanes.lanes["tokens"].series["token"])
    try:
        window.theme_menu.choose("light")
        window.session.flush()
        assert timeline.tick_marks()[("tokens", "token")] is not first  # drawn in the new theme's colours
    finally:
        window.theme_menu.choose("dark")


def test_the_deltas_rows_and_a_widening_come_on_turns_of_their_own(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch)
    _start(window)
    rows: list[tuple[bool, bool]] = []
    widened: list[bool] = []
    window.chunks_view.model.rowsInserted.connect(
        lambda *_: rows.append((_inside("_emit_growth"), _inside("_emit_growth_cursor"))))
    vb = window.timeline.plot.getPlotItem().getViewBox()
    vb.sigXRangeChanged.connect(lambda *_: widened.append(_inside("_grew")))
    for i, piece in enumerate(_pieces(400)):
        window.runs.on_token(piece, i * 20.0, i)
    qtbot.waitUntil(lambda: not window.runs._pending and not window.session.growth_pending, timeout=10000)
    assert rows and all(r == (False, False) for r in rows)  # neither in the growth's turn nor in the cursor's
    assert widened and not any(widened)  # the timeline widened on a later turn, never inside the growth
    assert window.chunks_view.model.rows == len(window.session.state.analysis.chunks)
