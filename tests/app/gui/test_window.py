"""The inspector window, offscreen: panes fill, follow the cursor, navigate, play, export, and survive errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from callscope.engine.analysis.report import report_json
from callscope.engine.formats.samples import render
from callscope.engine.inspector.ttfd import ttfd_label
from callscope.engine.recordings.replay import load_analyses
from tests.support.gui_helpers import HEADLINE, PARALLEL, REGRESS, ROOT, make_window

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch, PARALLEL)


def settle(window):
    window.session.flush()


# ----------------------------------------------------------------- opening


def test_opening_a_trace_fills_every_pane(window):
    state = window.session.state
    a = state.analysis
    assert a.name == "hermes_parallel" and state.cursor == state.last
    drawn = window.timeline.drawn()
    assert drawn[("tokens", "token")] == a.step_count
    assert drawn[("wire", "header")] == 2 and drawn[("wire", "arguments")] == sum(c.kind == "arguments" for c in a.chunks)
    assert drawn[("atomic", "header")] == 2
    assert window.text_view.toPlainText() == state.spans.text and "<tool_call>" in state.spans.text
    parse_text = window.parse_view.toPlainText()
    assert "get_weather" in parse_text and "read_file" in parse_text and "terminal parse" in parse_text
    assert window.chunks_view.model.rowCount() == len(a.chunks)
    assert window.reconcile_view.calls.rowCount() == 2
    assert "finish_reason tool_calls" in window.reconcile_view.headline.text()
    assert ttfd_label(a) in window.ttfd_view.label.text()
    assert window.compare_view.model.rowCount() > 0 and window.compare_view.comparison is not None
    assert window.source_bar.finish.text() == "finish_reason tool_calls"
    assert "hermes_parallel" in window.windowTitle()


def test_opening_a_byte_prefix_fixture_shows_parses_and_violations(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, REGRESS)
    a = window.session.current
    assert window.text_view.toPlainText() == "" and "carries parses" in window.text_view.placeholderText()
    assert window.reconcile_view.violations.rowCount() == len(a.violations) >= 2
    assert "violation" in window.source_bar.violations.text()
    assert window.source_bar.run.isVisible() == (len(window.session.analyses) > 1)


# ----------------------------------------------------------------- cursor


def test_moving_the_cursor_updates_every_pane(window):
    state = window.session.state
    a = state.analysis
    header = next(c for c in a.chunks if c.kind == "header" and c.index == 1)
    state.set_cursor_step(header.step + 2)
    settle(window)
    index = state.cursor
    view = state.view()
    assert window.timeline.cursor_line.value() == pytest.approx(state.timebase.x(index))
    assert window.ttfd_view.cursor_line.value() == pytest.approx(state.timebase.x(index))
    assert window.chunks_view.model.sent == len(a.chunks_until(view.step))
    assert window.chunks_view.model.rowCount() == len(a.chunks)  # later chunks are shown dimmed, never removed
    parse_text = window.parse_view.toPlainText()
    assert f"partial parse after token {view.step}" in parse_text
    assert view.parse.calls[1].arguments in parse_text
    selections = window.text_view.extraSelections()
    token = [s for s in selections if s.format.background().color().name() == "#ffd166"]
    assert token and (token[0].cursor.selectionStart(), token[0].cursor.selectionEnd()) == (view.token.start, view.token.end)
    future = [s for s in selections if s.cursor.selectionEnd() == len(state.spans.text)]
    assert future and future[0].cursor.selectionStart() == view.cut
    assert f"token {view.step}" in window.playback.position.text()
    assert window.playback.slider.value() == index


def test_cursor_updates_are_throttled_to_one_redraw_per_frame(window):
    state = window.session.state
    before = window.session.redraws
    for i in range(200):
        state.set_cursor(i % state.last)
    window.session.flush()
    assert window.session.redraws - before <= 2


def test_dragging_the_cursor_line_moves_the_cursor(window):
    state = window.session.state
    x = state.timebase.x(17) + 0.1
    window.timeline.cursor_line.setValue(x)
    assert state.cursor == 17
    settle(window)
    assert window.timeline.cursor_line.value() == pytest.approx(state.timebase.x(17))  # snapped to the token


def test_hover_previews_without_moving_the_cursor(window, qtbot):
    state = window.session.state
    state.set_cursor(5)
    settle(window)
    plot = window.timeline.plot
    vb = plot.getPlotItem().getViewBox()
    scene_point = vb.mapViewToScene(QPointF(state.timebase.x(40), 2.0))
    target = plot.mapFromScene(scene_point)
    # Qt drops a move to where it believes the pointer already is (an earlier test may have left it
    # there), so arrive from somewhere else, and let that first move be delivered before the second.
    QTest.mouseMove(plot.viewport(), target + QPoint(-25, 0))
    QApplication.processEvents()
    QTest.mouseMove(plot.viewport(), target)
    QApplication.processEvents()
    # The hover previews a step near the pointer (well right of the cursor at 5; the exact step depends
    # on how the axis column laid out), and never moves the cursor.
    qtbot.waitUntil(lambda: state.hover is not None and abs(state.hover - 40) <= 8, timeout=3000)
    assert f"{window.session.current.unit} " in window.timeline.hover_text()
    assert state.cursor == 5


def test_keyboard_steps_by_token_and_by_delta(window):
    state = window.session.state
    a = state.analysis
    window.activateWindow()
    window.setFocus()
    QTest.keyClick(window, Qt.Key.Key_Home)
    assert state.cursor == 0
    QTest.keyClick(window, Qt.Key.Key_Right)
    QTest.keyClick(window, Qt.Key.Key_Period)
    assert state.cursor == 2
    QTest.keyClick(window, Qt.Key.Key_Comma)
    assert state.cursor == 1
    emitting = sorted({c.step for c in a.chunks if c.kind != "role"})
    QTest.keyClick(window, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert state.cursor_step == emitting[0]
    QTest.keyClick(window, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert state.cursor_step == emitting[1]
    QTest.keyClick(window, Qt.Key.Key_Left, Qt.KeyboardModifier.ShiftModifier)
    assert state.cursor_step == emitting[0]
    QTest.keyClick(window, Qt.Key.Key_End)
    assert state.cursor == state.last
    window.playback.next_delta.click()
    assert state.cursor == state.last
    window.playback.home.click()
    assert state.cursor == 0


def test_play_reaches_the_end(window, qtbot):
    state = window.session.state
    state.home()
    window.playback.speed.setCurrentIndex(window.playback.speed.count() - 1)  # as fast as possible
    QTest.keyClick(window, Qt.Key.Key_Space)
    assert window.driver.playing
    qtbot.waitUntil(lambda: not window.driver.playing, timeout=10000)
    assert state.cursor == state.last
    settle(window)
    assert window.playback.slider.value() == state.last and not window.playback.play.isChecked()


def test_play_at_1x_follows_recorded_time(window, qtbot):
    """Playback walks through the steps at their recorded times instead of jumping to the end.

    Timing on a shared machine is noisy, so the test only asserts what no stall can
    fake: the cursor passed through intermediate steps, and playing took at least
    the recorded span (it never runs ahead of the recording at 1x).
    """
    import time

    state = window.session.state
    start = state.last - 6
    state.set_cursor(start)
    recorded_span_ms = state.timebase.x(state.last) - state.timebase.x(start)
    assert state.analysis.timed and recorded_span_ms > 100
    seen: list[int] = []
    window.playback.speed.setCurrentText("1×")
    began = time.monotonic()
    window.driver.play()
    qtbot.waitUntil(lambda: seen.append(state.cursor) or state.cursor == state.last, timeout=10000)
    elapsed_ms = (time.monotonic() - began) * 1000
    assert len({c for c in seen if start < c < state.last}) >= 2, seen
    assert elapsed_ms >= recorded_span_ms * 0.9


def test_selecting_a_chunk_moves_the_cursor_and_marks_its_text(window):
    state = window.session.state
    a = state.analysis
    number = next(i for i, c in enumerate(a.chunks) if c.kind == "arguments" and c.index == 0) + 2
    window.chunks_view.select_chunk(number)
    assert state.cursor_step == a.chunks[number].step
    settle(window)
    assert json.loads(window.chunks_view.raw.toPlainText())["choices"][0]["delta"]["tool_calls"][0]["index"] == 0
    assert window.text_view.picked_span() == state.spans.chunk_span(a.chunks, number)
    assert window.chunks_view.model.sent == len(a.chunks_until(a.chunks[number].step))
    window.chunks_view.details.setCurrentWidget(window.chunks_view.accumulated)
    assert "get_weather" in window.chunks_view.accumulated.toPlainText()


def test_violation_activation_jumps_to_its_step(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, REGRESS)
    state = window.session.state
    model = window.reconcile_view.violations
    row = next(i for i, v in enumerate(model.rows) if v.step is not None and v.step < state.analysis.last_step)
    window.reconcile_view.violations_table.doubleClicked.emit(model.index(row, 0))
    assert state.cursor_step == model.rows[row].step


def test_ttfd_label_matches_the_engine_report(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    a = window.session.current
    doc = report_json([a])["runs"][0]["ttfd"]
    label = window.ttfd_view.label.text()
    assert f"{doc['streaming']['ms'] / 1000:.3g} s" in label and f"{doc['atomic']['ms'] / 1000:.3g} s" in label
    assert f"{doc['atomic']['ms'] / doc['streaming']['ms']:.0f}x sooner" in label
    assert window.source_bar.ttfd.text() == ttfd_label(a)
    window.ttfd_view.set_runs(load_analyses(PARALLEL) + load_analyses(HEADLINE), "runs")
    assert len(window.ttfd_view.points) == 2


def test_changing_policy_reanalyses_and_keeps_the_step(window):
    state = window.session.state
    state.set_cursor(30)
    step = state.cursor_step
    window.source_bar.policy.setCurrentText("atomic")
    settle(window)
    assert window.session.current.source.policy == "atomic"
    assert window.session.state.cursor_step == step
    assert window.source_bar.policy.currentText() == "atomic"


def test_shortcuts_dialog_lists_every_shortcut(window, qtbot):
    dialog = window.show_shortcuts()
    qtbot.addWidget(dialog)
    table = dialog.table  # key/action pairs side by side: columns 0-1, 2-3...
    cells = [(table.item(i, c), table.item(i, c + 1)) for i in range(table.rowCount())
             for c in range(0, table.columnCount(), 2)]
    keys = {k.text() for k, _ in cells if k is not None}
    actions = {a.text() for _, a in cells if a is not None}
    assert any("Space" in k for k in keys) and any("Shift+Right" in k for k in keys)
    assert {"Play / pause", "Next / previous emitted delta", "Keyboard shortcuts", "Open"} <= actions


# ----------------------------------------------------------------- sources and errors


def test_paste_text_replays_a_generation(window):
    text = render("hermes", [("get_weather", {"city": "Oslo"})], content="Checking.")
    assert window.replay_text(text, "hermes", "", "char", 2, 50.0)
    a = window.session.current
    assert a.source.kind == "text" and a.calls[0].name == "get_weather" and a.timed
    assert window.text_view.toPlainText() == text


def test_paste_text_can_start_inside_reasoning(window):
    """The Paste dialog's "starts inside reasoning" box: text before </think> is reasoning, not content."""
    text = "Let me look it up.</think>\n" + render("hermes", [("get_weather", {"city": "Oslo"})])
    assert window.replay_text(text, "hermes", size=4, thinking=True)
    a = window.session.current
    assert a.source.extra.get("thinking") and a.calls[0].name == "get_weather"
    assert "".join(c.text for c in a.chunks if c.kind == "reasoning").startswith("Let me look it up.")
    assert "look" not in "".join(c.text for c in a.chunks if c.kind == "content")
    assert window.replay_text(text, "hermes", size=4)  # unticked: the same words are content
    assert "look it up" in "".join(c.text for c in window.session.current.chunks if c.kind == "content")


def test_every_error_shows_a_dialog_and_keeps_the_view(window, tmp_path):
    before = window.session.state
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_bytes(b"\x00\x01 not a recording\n")
    assert not window.open_path(str(garbage))
    assert not window.open_path(str(tmp_path / "missing.jsonl"))
    assert not window.replay_text("<tool_call>", "hermes", "[{not json")
    assert not window.replay_text("", "hermes")
    assert not window.replay_text("hello", "no_such_format")
    from callscope.dialogs.run import RunValues

    assert not window.start_run(RunValues(str(tmp_path / "nope.gguf"), "auto", "incremental", "hi", "", "any", 8, 1))
    assert not window.start_run(RunValues(None, "auto", "incremental", "hi", '{"tools": 3}', "any", 8, 1))
    titles = [t for t, _ in window.shown_errors]
    assert titles == ["Cannot open", "Cannot open", "Bad tools JSON", "Cannot open", "Cannot open", "Bad model", "Bad tools JSON"]
    assert "callscope reads: callscope traces" in window.shown_errors[0][1]
    assert window.session.state is before  # the previous view stays
    before.step_token(-1)
    settle(window)
    assert window.chunks_view.model.sent == len(before.analysis.chunks_until(before.cursor_step))


def test_a_parser_crash_is_an_error_not_a_crash(window, monkeypatch):
    from callscope.engine.inspector import sources

    def boom(self, policy):
        raise RuntimeError("parser exploded")

    monkeypatch.setattr(sources.TextSource, "analyses", boom)
    assert not window.replay_text("x", "hermes")
    assert "parser exploded" in window.shown_errors[-1][1]


def test_drop_and_recent_files(window, tmp_path):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(HEADLINE))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert window.session.current.name == "headline_701_tokens"
    assert window.recent_files()[:2] == [str(HEADLINE), str(PARALLEL)]
    actions = window.recent_menu.actions()
    assert [a.text() for a in actions][:2] == [str(HEADLINE), str(PARALLEL)]
    actions[1].trigger()
    assert window.session.current.name == "hermes_parallel"


# ----------------------------------------------------------------- export


def test_exports_write_report_sse_pngs_and_trace(window, tmp_path):
    a = window.session.current
    assert window.export_to("report", str(tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text()) == json.loads(json.dumps(report_json([a], include_chunks=True)))
    assert window.export_to("sse", str(tmp_path / "t.sse"))
    events = (tmp_path / "t.sse").read_text().split("\n\n")
    assert events[0].startswith("data: {") and events[-2] == "data: [DONE]" and len(events) == len(a.chunks) + 2
    for what in ("timeline", "ttfd", "window"):
        out = tmp_path / f"{what}.png"
        assert window.export_to(what, str(out))
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert window.save_trace_to(str(tmp_path / "saved.jsonl"))
    again = load_analyses(tmp_path / "saved.jsonl")[0]
    assert [c.text for c in again.chunks] == [c.text for c in a.chunks]
    assert not window.export_to("report", str(tmp_path / "no" / "dir" / "r.json"))
    assert window.shown_errors[-1][0] == "Export failed"


# ----------------------------------------------------------------- item models


def test_item_models_pass_the_model_tester(window, qtmodeltester):
    window.session.state.set_cursor(40)
    settle(window)
    qtmodeltester.check(window.chunks_view.model)
    qtmodeltester.check(window.reconcile_view.calls)
    qtmodeltester.check(window.reconcile_view.violations)
    qtmodeltester.check(window.compare_view.model)


# ----------------------------------------------------------------- the CLI verb


def test_gui_screenshot_renders_and_exits(tmp_path):
    out = tmp_path / "shot.png"
    done = subprocess.run(
        [sys.executable, "-m", "callscope", "gui", str(PARALLEL), "--screenshot", str(out), "--at", "40"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nonsense\n")
    done = subprocess.run(
        [sys.executable, "-m", "callscope", "gui", str(bad), "--screenshot", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2 and "callscope reads: callscope traces" in done.stderr


def _selected(window) -> dict[str, str]:
    """Text under each extra selection of the generated-text pane, by its background colour."""
    view = window.text_view
    names = {view._current.background().color().name(): "current", view._future.background().color().name(): "future"}
    return {names.get(s.format.background().color().name(), "pick"): s.cursor.selectedText() for s in view.extraSelections()}


def test_emoji_and_cjk_keep_the_token_highlight_on_its_token(window):
    text = 'Hi 😀😀😀 there 雨\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "🌧️🌧️ rain"}}\n</tool_call>'
    assert window.replay_text(text, "hermes", "", "char", 1, None)
    state = window.session.state
    assert window.text_view.toPlainText() == text
    for char in (3, 10, text.index("🌧"), len(text) - 1):
        position = state.spans.position_at_char(char)
        state.set_cursor(position)
        settle(window)
        selected = _selected(window)
        assert selected["current"] == text[char], char
        assert selected.get("future", "") == text[char + 1 :].replace("\n", "\u2029")


def test_multibyte_split_tokens_last_token_is_highlighted_whole(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, ROOT / "fixtures" / "cases" / "multibyte_split_tokens.jsonl")
    state = window.session.state
    state.set_cursor(state.last)
    settle(window)
    token = state.spans.span(state.last)
    assert token.end > token.start
    assert _selected(window)["current"] == state.spans.text[token.start : token.end]
    assert "future" not in _selected(window)
    # the highlighter shades by UTF-16 positions: the last block's formats end exactly at the block's end
    block = window.text_view.document().lastBlock()
    formats = block.layout().formats()
    assert formats and max(f.start + f.length for f in formats) == block.length() - 1


def _drawn_lane_labels(window) -> list[str]:
    """The lane titles pyqtgraph would paint on the left axis (it skips any that do not fit)."""
    from PySide6.QtGui import QImage, QPainter

    window.timeline.plot.getPlotItem().layout.activate()
    axis = window.timeline.plot.getPlotItem().getAxis("left")
    image = QImage(400, 400, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    painter.setFont(window.timeline.plot.font())
    try:
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [text for _, _, text in texts]


@pytest.mark.parametrize("policy", ["incremental", "llama_server"])
def test_every_timeline_lane_keeps_its_label(qtbot, tmp_path, monkeypatch, policy):
    window = make_window(qtbot, tmp_path, monkeypatch)
    assert window.open_path(str(REGRESS), policy=policy), window.shown_errors
    settle(window)
    titles = [lane.title for lane in window.session.state.lanes.lanes.values()]
    assert any(policy in title for title in titles)
    assert sorted(_drawn_lane_labels(window)) == sorted(titles)


def test_tables_count_in_the_analysis_unit_and_one_time_format(qtbot, tmp_path, monkeypatch):
    from callscope.engine.inspector.chunks import time_text

    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    a = window.session.current
    horizontal = Qt.Orientation.Horizontal
    assert a.unit == "token"
    assert window.reconcile_view.violations.headerData(1, horizontal) == "token"
    calls = window.reconcile_view.calls
    assert calls.data(calls.index(0, 3)) == f"token {a.calls[0].first_delta.step}"
    compare = window.compare_view.model
    assert compare.headerData(0, horizontal) == "token"
    assert window.chunks_view.model.headerData(0, horizontal) == "token"
    timed = next(r for r in compare.rows if r.ms is not None and r.ms >= 1000)
    assert compare.data(compare.index(compare.rows.index(timed), 1)) == time_text(timed.ms)
    chars = sum(len(c.streamed_arguments) for c in a.calls)
    assert f"{chars:,} characters of arguments" in window.ttfd_view.label.text()
    assert window.compare_view.comparison.rows[-1].left_chars == chars


def test_deltas_table_keeps_the_cursor_row_visible_when_the_window_shrinks(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    window.tabs.setCurrentWidget(window.chunks_view)
    window.session.state.set_cursor_step(180)
    settle(window)
    table = window.chunks_view.table

    def last_row_visible() -> bool:
        index = window.chunks_view.model.index(window.chunks_view.model.sent - 1, 0)
        rect = table.visualRect(index)
        return rect.isValid() and table.viewport().rect().contains(rect)

    qtbot.waitUntil(last_row_visible)
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: table.viewport().height() < 300)
    qtbot.waitUntil(last_row_visible, timeout=2000)


# ----------------------------------------------------------------- QA pass 2


def test_arrow_keys_never_change_the_policy(window, qtbot):
    """Up/Down on the focused widget after opening a file must not re-analyse under another policy."""
    from PySide6.QtWidgets import QApplication

    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None)
    before = window.session.policy
    for key in (Qt.Key.Key_Down, Qt.Key.Key_Up, Qt.Key.Key_Down):
        QTest.keyClick(QApplication.focusWidget(), key)
        assert window.session.policy == before
    assert QApplication.focusWidget() is window.timeline.plot  # the keyboard starts on the cursor, not a selector
    # the selectors are reachable by Tab (deliberately), never focused by opening a file
    assert window.source_bar.policy.focusPolicy() & Qt.FocusPolicy.TabFocus
    assert window.source_bar.run.focusPolicy() & Qt.FocusPolicy.TabFocus


def test_recent_files_are_absolute_and_unique(window, tmp_path, monkeypatch):
    """A path typed relative to one directory is stored absolute, once, so it opens from any directory."""
    monkeypatch.chdir(HEADLINE.parent)
    assert window.open_path(HEADLINE.name)
    assert window.open_path(str(HEADLINE))
    monkeypatch.chdir(tmp_path)
    assert window.recent_files()[:2] == [str(HEADLINE.resolve()), str(PARALLEL.resolve())]
    assert len(window.recent_files()) == len(set(window.recent_files()))
    window.recent_menu.actions()[1].trigger()
    assert window.session.current.name == "hermes_parallel" and not window.shown_errors


def test_tests_never_touch_the_users_settings():
    """The default QSettings (what `callscope gui` uses) points into the test run's scratch directory."""
    import os

    from PySide6.QtCore import QSettings

    home_config = os.path.expanduser("~/.config")
    assert not QSettings("callscope", "callscope").fileName().startswith(home_config)
    assert os.environ["XDG_CONFIG_HOME"] in QSettings("callscope", "callscope").fileName()


def test_save_as_trace_is_disabled_for_a_parse_carrying_source(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, REGRESS)
    assert not window.save_trace_action.isEnabled()
    assert "carries parses" in window.save_trace_action.toolTip()
    assert window.open_path(str(PARALLEL))
    assert window.save_trace_action.isEnabled()


def test_empty_states_say_what_is_missing(qtbot, tmp_path, monkeypatch):
    """No source: no meaningless 0-4 axes; a run without calls: a TTFD axis floored at 0 that says so."""
    window = make_window(qtbot, tmp_path, monkeypatch)
    axis = window.timeline.plot.getPlotItem().getAxis("left")
    assert not axis.isVisible() and window.timeline.empty_label.isVisible()
    assert window.replay_text("Just a plain answer, no tools.", "hermes")
    window.session.flush()
    assert axis.isVisible() and not window.timeline.empty_label.isVisible()
    window.tabs.setCurrentWidget(window.ttfd_view)
    ttfd = window.ttfd_view
    qtbot.waitUntil(lambda: ttfd.plot.isVisible())
    assert ttfd.no_calls
    assert ttfd.plot.getPlotItem().getViewBox().viewRange()[1][0] >= -0.1


def test_a_byte_prefix_fixture_keeps_a_readable_text_pane(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, REGRESS)
    assert window.bottom_split.sizes()[0] >= 300
    assert window.open_path(str(PARALLEL))
    assert window.bottom_split.sizes()[0] >= 400
