"""The window as a debugger people trust, offscreen with real parts: each defect a user driving the window
found (capture leaking its policy, a cancelled stream claiming a pass, a table moving under the mouse,
markers coloured by a pattern, panes not following the cursor...), and the debugger's keys, bookmarks,
step diff and themes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from callscope.engine.inspector.sources import AnalysisSource
from callscope.engine.recordings.replay_text import analyze_text
from tests.support.gui_helpers import FIXTURES, HEADLINE, PARALLEL, REGRESS, ROOT, make_window
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, Scenario, clean_call, lines_of

pytestmark = pytest.mark.gui
CLOSER_IN_STRING = FIXTURES / "cases" / "closing_marker_in_string.jsonl"
QWEN_PARALLEL = FIXTURES / "formats" / "qwen3_coder_parallel.jsonl"


def settle(window) -> None:
    window.session.flush()
    QApplication.processEvents()
    window.session.flush()


def capture_values(url: str, body: dict | None = None):
    from callscope.dialogs.capture import CaptureValues

    body = body or {"messages": [{"role": "user", "content": "weather?"}], "stream": True}
    return CaptureValues(url, json.dumps(body), "", False, 5.0)


def paced_clean_stream() -> Scenario:
    lines = lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE)
    return Scenario([(0.0 if i < 2 else 0.04, line) for i, (_, line) in enumerate(lines)])


# ----------------------------------------------------------------- 1, 7, 10: after a live capture


@pytest.fixture
def live_window(qtbot, tmp_path, monkeypatch, qloop):
    return make_window(qtbot, tmp_path, monkeypatch, REGRESS)


def test_after_a_capture_open_works_and_the_status_line_is_about_the_shown_source(live_window, server, qtbot):
    window = live_window
    assert window.reconcile_view.violations_caption.text() == f"Violations ({len(window.session.current.violations)})"
    url = server.play("after-capture", paced_clean_stream())
    with qtbot.waitSignal(window.captures.started, timeout=5000):
        assert window.start_capture(capture_values(url))
    # defect 7: the caption above the violations table belongs to the stream being shown
    assert window.reconcile_view.violations_caption.text() == "Violations (0)"
    with qtbot.waitSignal(window.captures.ended, timeout=10000):
        pass
    settle(window)
    assert window.session.current.source.policy == "server" and "capture ended" in window.phase_label.text()
    # defect 1: the capture's pseudo-policy never becomes the policy the next source is analysed under
    assert window.open_path(str(PARALLEL)), window.shown_errors
    assert window.shown_errors == [] and window.session.current.source.policy == "incremental"
    assert window.session.policy == "incremental"
    # defect 7: the status line no longer describes the capture
    assert window.phase_label.text() == "" and window.rate_label.text() == ""


def test_a_live_stream_that_ends_keeps_the_cursor_where_the_user_parked_it(live_window, server, qtbot):
    window = live_window
    url = server.play("parked", paced_clean_stream())
    parked: list[int] = []

    def park(_text: str) -> None:
        state = window.session.state
        if not parked and state is not None and state.live and state.last >= 2:
            state.set_cursor(1)
            parked.append(state.cursor_step)

    window.session.grew.connect(park)
    with qtbot.waitSignal(window.captures.ended, timeout=10000):
        assert window.start_capture(capture_values(url))
    settle(window)
    state = window.session.state
    assert parked and not state.live
    assert state.cursor_step == parked[0] and state.cursor < state.last  # defect 10: no jump to the end


def test_a_tool_choice_typed_into_the_capture_request_is_never_overridden_by_the_forms_default(
        live_window, server, qtbot, monkeypatch):
    from callscope.dialogs.capture import DEFAULT_BODY, CaptureDialog

    window = live_window
    url = server.play("tool-choice", paced_clean_stream())
    default = json.dumps(DEFAULT_BODY, indent=2)
    typed = default.replace("{", '{\n  "tool_choice": "required",', 1)  # added on top of the form's body
    assert '"tool_choice": "auto"' in typed  # the default is still further down: JSON would keep it

    def accept(dialog):  # the real dialog, its body edited as a user would
        dialog.url.setText(url)
        dialog.body.setPlainText(typed)
        return 1

    monkeypatch.setattr(CaptureDialog, "exec", accept)
    before = len(server.requests)
    window.capture_dialog()
    assert window.shown_errors and window.shown_errors[-1][0] == "Bad capture request"
    assert '"tool_choice" is given twice' in window.shown_errors[-1][1]
    assert len(server.requests) == before and not window.captures.running  # nothing was sent
    fixed = typed.replace('  "tool_choice": "auto",\n', "")
    monkeypatch.setattr(CaptureDialog, "exec", lambda dialog: (dialog.url.setText(url), dialog.body.setPlainText(fixed), 1)[-1])
    with qtbot.waitSignal(window.captures.ended, timeout=10000):
        window.capture_dialog()
    sent = [r for r in server.requests if r["path"].startswith("/s/tool-choice")]
    assert sent and sent[-1]["body"]["tool_choice"] == "required"


# ----------------------------------------------------------------- 2: a cancelled stream


def test_a_cancelled_stream_shows_what_it_held_and_never_a_pass(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch)
    a = analyze_text('Sure.[TOOL_CALLS][{"name": "get_', "mistral", size=3, rate=20.0, cause="cancelled")
    window.session.open(AnalysisSource([a], label="stopped run"), "incremental")
    settle(window)
    headline = window.reconcile_view.headline.text()
    assert "✓" not in headline and "never sent" in headline and "get_" in headline
    assert window.source_bar.violations.property("tone") != "ok"
    assert "sooner" not in window.source_bar.ttfd.text()  # no gain against an emission that never happens
    assert all("[TOOL_CALLS]" not in c.text for c in a.chunks if c.kind == "content")
    window.session.state.end()
    settle(window)
    assert window.text_view.held_label.isVisible() and "never went out" in window.text_view.held_label.text()


# ----------------------------------------------------------------- 3: clicking a delta


def test_clicking_a_delta_row_selects_that_row_and_the_table_stays_put(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    window.tabs.setCurrentWidget(window.chunks_view)
    settle(window)
    table = window.chunks_view.table
    model = window.chunks_view.model
    qtbot.waitUntil(lambda: table.viewport().height() > 100)
    first = table.rowAt(5)
    row = first + 3  # a row near the top of the viewport, well above the newest one
    index = model.index(row, 1)
    before = table.visualRect(index)
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, before.center())
    settle(window)
    chunk = window.session.current.chunks[row]
    assert window.session.state.cursor_step == chunk.step
    assert table.currentIndex().row() == row
    assert table.visualRect(index).top() == before.top()  # nothing scrolled or trimmed under the mouse
    assert table.rowAt(before.center().y()) == row
    assert model.rowCount() == len(window.session.current.chunks) and model.sent >= row + 1


# ----------------------------------------------------------------- 4: marker colours from parse events


def char_color(view, offset: int) -> str:
    """The foreground the text pane's highlighter gave character ``offset``."""
    block = view.document().findBlock(offset)
    for fmt in block.layout().formats():
        if fmt.start <= offset - block.position() < fmt.start + fmt.length:
            return fmt.format.foreground().color().name()
    return ""


def test_a_marker_the_parser_kept_as_argument_text_is_coloured_as_arguments(qtbot, tmp_path, monkeypatch):
    from callscope.ui import theme

    window = make_window(qtbot, tmp_path, monkeypatch, CLOSER_IN_STRING)
    settle(window)
    text = window.text_view.toPlainText()
    inside, closer = text.index("</tool_call>"), text.rindex("</tool_call>")
    assert inside < closer
    assert char_color(window.text_view, inside + 2) == QColor(theme.call_color(0)).name()
    assert char_color(window.text_view, closer + 2) == QColor(theme.SPAN_COLORS["call"]).name()


def test_held_text_is_shown_with_its_reason(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch)
    text = 'Let me see. <tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'
    assert window.replay_text(text, "hermes", size=4)
    state = window.session.state
    index = next(i for i in range(1, len(state.timebase)) if state.spans.text[: state.spans.cut(i)].endswith("<too"))
    state.set_cursor(index)
    settle(window)
    label = window.text_view.held_label
    assert label.isVisible() and "&lt;too" in label.text() and "half-typed marker" in label.text()
    from PySide6.QtGui import QTextCharFormat

    dotted = QTextCharFormat.UnderlineStyle.DotLine
    held = [s for s in window.text_view.extraSelections() if s.format.underlineStyle() == dotted]
    assert held and held[0].cursor.selectedText() == "<too"


# ----------------------------------------------------------------- 5: the parse pane follows the change


def test_the_partial_parse_scrolls_to_the_change_at_the_cursor(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    state = window.session.state
    state.set_cursor_step(336)
    settle(window)
    view = window.parse_view
    added = state.view().delta.arguments[0]
    found = view.document().find(added, view.document().characterCount() // 2)
    assert not found.isNull()
    rect = view.cursorRect(found)
    assert view.verticalScrollBar().value() > 0
    assert 0 <= rect.top() and rect.bottom() <= view.viewport().height(), (rect, view.viewport().height())
    assert "THIS STEP" in view.toPlainText() and f"token {state.cursor_step}" in view.toPlainText()


# ----------------------------------------------------------------- 6: the timeline


def view_range(window) -> tuple[float, float]:
    return tuple(window.timeline.plot.getPlotItem().getViewBox().viewRange()[0])


def test_the_timeline_fits_follows_the_cursor_scrubs_and_never_pans_past_the_data(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    state = window.session.state
    timeline = window.timeline
    lo, hi = state.timebase.span
    menu = timeline.context_menu()
    labels = [a.text() for a in menu.actions()]
    assert "Fit the whole stream" in labels and all(a.isEnabled() for a in menu.actions())
    state.home()
    settle(window)
    timeline.zoom_to_cursor()
    x0, x1 = view_range(window)
    assert x1 - x0 < (hi - lo) * 0.2
    state.end()  # playback or a jump runs the cursor out of the zoomed view: the view follows it
    settle(window)
    x0, x1 = view_range(window)
    assert x0 <= state.timebase.x(state.last) <= x1 and x1 - x0 < (hi - lo) * 0.2
    vb = timeline.plot.getPlotItem().getViewBox()
    vb.translateBy(x=(hi - lo) * 3)  # pan far right: stops just past the data
    assert view_range(window)[1] <= hi + (hi - lo) * 0.05
    window.debugger.fit_action.trigger()
    x0, x1 = view_range(window)
    assert x0 <= lo and x1 >= hi and x1 - x0 <= (hi - lo) * 1.1
    # dragging away from the cursor line scrubs the cursor (as the hint says) and does not pan
    state.home()
    settle(window)
    plot = timeline.plot
    start = plot.mapFromScene(vb.mapViewToScene(QPointF(lo + (hi - lo) * 0.3, 2.0)))
    end = plot.mapFromScene(vb.mapViewToScene(QPointF(lo + (hi - lo) * 0.6, 2.0)))
    before = view_range(window)
    QTest.mousePress(plot.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, start)
    for step in range(1, 11):
        QTest.mouseMove(plot.viewport(), start + (end - start) * step / 10)
    QTest.mouseRelease(plot.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, end)
    settle(window)
    assert view_range(window) == pytest.approx(before)
    assert state.timebase.x(state.cursor) == pytest.approx(lo + (hi - lo) * 0.6, rel=0.05)


def test_the_empty_timeline_of_a_run_evaluating_its_prompt_reads_in_milliseconds(qtbot, tmp_path, monkeypatch):
    from callscope.engine.analysis.analyzer import Analyzer, SourceInfo
    from callscope.engine.formats import make_parser

    window = make_window(qtbot, tmp_path, monkeypatch)
    analyzer = Analyzer("run", SourceInfo("model", None, "hermes", "incremental"), "token", True, make_parser("hermes"))
    window.session.show_analysis(analyzer.provisional())
    settle(window)
    x0, x1 = view_range(window)
    assert x0 <= 0 and x1 >= 900  # a second of "time (ms)", not -0.5..0.5 scaled by 0.001
    axis = window.timeline.plot.getPlotItem().getAxis("bottom")
    assert "x0.001" not in axis.labelString() and axis.autoSIPrefixScale == 1.0


# ----------------------------------------------------------------- 8: compare


@pytest.mark.parametrize("size", [(1400, 900), (1024, 700)])
def test_compare_shows_both_sides_at_every_window_size(qtbot, tmp_path, monkeypatch, size):
    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    window.resize(*size)
    window.tabs.setCurrentWidget(window.compare_view)
    settle(window)
    table = window.compare_view.table
    qtbot.waitUntil(lambda: table.viewport().width() > 200)
    header = table.horizontalHeader()
    right_edge = header.sectionViewportPosition(5) + header.sectionSize(5)
    assert right_edge <= table.viewport().width() + 1, "every column is inside the pane"
    for side in (2, 3):
        assert header.sectionSize(side) >= 60 and not header.isSectionHidden(side)
    assert window.compare_view.model.headerData(3, Qt.Orientation.Horizontal) == "atomic"


def test_compare_follows_the_cursor_after_switching_what_it_compares_against(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, QWEN_PARALLEL)
    window.tabs.setCurrentWidget(window.compare_view)
    state = window.session.state
    state.set_cursor_step(state.last_step if hasattr(state, "last_step") else state.timebase.step(state.last))
    settle(window)
    view = window.compare_view
    assert view.choose("format: hermes")
    settle(window)
    table = view.table
    row = table.currentIndex().row()
    steps = [r.step for r in view.comparison.rows]
    assert steps[row] == max(s for s in steps if s <= state.cursor_step)
    rect = table.visualRect(table.currentIndex())
    assert rect.isValid() and table.viewport().rect().contains(rect)


# ----------------------------------------------------------------- 9: TTFD


def test_the_ttfd_plot_keeps_its_labels_clear_and_one_run_gets_a_real_axis(qtbot, tmp_path, monkeypatch):
    from callscope.engine.recordings.replay import load_analyses

    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    view = window.ttfd_view
    window.tabs.setCurrentWidget(view)
    settle(window)
    assert view.plot.getPlotItem().legend is None  # the key is in the headline, never over the first-delta label
    assert "incremental" in view.label.text() and "atomic" in view.label.text()
    view.set_runs(load_analyses(HEADLINE), "runs in one folder")
    item = view.scatter_plot.getPlotItem()
    (x0, x1), (y0, y1) = item.getViewBox().viewRange()
    length = view.points[0].call_chars
    assert x0 <= 0 < length < x1 and x1 - x0 > length * 0.5  # not 2055.6-2056.4
    assert y0 <= 0 and view.across.text() == "TTFD vs call length" and "1 run in one folder" in view.across_caption.text()


# ----------------------------------------------------------------- 11: keyboard


def test_every_playback_control_is_reachable_by_tab_and_shows_a_focus_ring(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    bar = window.playback
    wanted = [bar.home, bar.prev_delta, bar.prev_token, bar.play, bar.next_token, bar.next_delta, bar.end,
              bar.slider, bar.speed, bar.loop, window.source_bar.policy]
    for widget in wanted:
        assert widget.focusPolicy() & Qt.FocusPolicy.TabFocus, widget
    assert window.source_bar.run.focusPolicy() & Qt.FocusPolicy.TabFocus  # the run/fixture selector
    window.activateWindow()
    bar.home.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(bar.home.hasFocus)
    visited = []
    for _ in range(40):  # Tab itself walks the chain: every playback control is on it
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        visited.append(QApplication.focusWidget())
    assert all(widget in visited for widget in wanted[1:10]), [type(w).__name__ for w in visited]
    plain = bar.next_token.grab().toImage()
    bar.next_token.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(bar.next_token.hasFocus)
    assert bar.next_token.grab().toImage() != plain  # the ring is drawn
    state = window.session.state
    state.home()
    settle(window)
    QTest.keyClick(bar.next_token, Qt.Key.Key_Space)  # a focused button takes Space itself
    settle(window)
    assert state.cursor == 1 and not window.driver.playing


def test_the_policy_menu_and_violation_keys(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, REGRESS)
    actions = window.debugger.policy_actions
    assert actions["incremental"].isChecked()
    actions["llama_server"].trigger()
    assert window.session.current.source.policy == "llama_server" and actions["llama_server"].isChecked()
    actions["incremental"].trigger()
    state = window.session.state
    state.home()
    settle(window)
    window.activateWindow()
    window.focus_timeline()
    qtbot.waitUntil(window.timeline.plot.hasFocus)
    QTest.keyClick(window.timeline.plot, Qt.Key.Key_V)
    first = min(v.step for v in window.session.current.violations if v.step is not None)
    assert state.cursor_step == first
    # a single click on a violation row jumps to it (no hidden double-click)
    table = window.reconcile_view.violations_table
    window.tabs.setCurrentWidget(window.reconcile_view)
    state.home()
    settle(window)
    rows = window.reconcile_view.violations.rows
    row = next(i for i, v in enumerate(rows) if v.step is not None)
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     table.visualRect(window.reconcile_view.violations.index(row, 1)).center())
    assert state.cursor_step == rows[row].step


def test_the_shortcut_list_has_every_key_of_every_action(qtbot, tmp_path, monkeypatch):
    from PySide6.QtGui import QKeySequence

    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    dialog = window.show_shortcuts()
    shown = " ".join(dialog.table.item(r, c).text() for r in range(dialog.table.rowCount())
                     for c in range(dialog.table.columnCount()) if dialog.table.item(r, c))
    for action in window.actions():
        for key in action.shortcuts():
            text = key.toString(QKeySequence.SequenceFormat.NativeText)
            assert text in shown, (action.text(), text)
    for keys in ("E", "V", "X", "C", "N", "B", "F8", "Ctrl+1", "F", "Z"):
        assert keys in shown
    assert "Shift+drag" in shown


# ----------------------------------------------------------------- 12: smaller ones


def test_the_source_bar_offers_paste_and_a_fixture_says_what_it_is_for(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, FIXTURES / "prefix" / "unnamed_holds_back.txt")
    buttons = [b.text() for b in window.source_buttons.buttons]
    assert buttons[:4] == ["Open", "Paste", "Run", "Capture"]  # the README's sources, in its order
    assert window.source_bar.expected.text() == "expected verdict ✓"
    assert "neither may go out before call 0 is named" in window.source_bar.expected.toolTip()
    headline = window.reconcile_view.headline.text()
    assert "expected verdict (incremental): matches" in headline
    assert "neither may go out before call 0 is named" in window.reconcile_view.about.toolTip()


def test_counts_are_singular_when_there_is_one(qtbot, tmp_path, monkeypatch):
    from callscope.engine.analysis.analyzer import Analyzer, SourceInfo
    from callscope.engine.formats import make_parser

    window = make_window(qtbot, tmp_path, monkeypatch)
    analyzer = Analyzer("run", SourceInfo("model", None, "hermes", "incremental"), "token", True, make_parser("hermes"))
    analysis = analyzer.provisional()
    window.session.show_analysis(analysis)
    settle(window)
    assert window.source_bar.calls.text() == "1 chunk"  # the role chunk


def test_the_gain_is_worded_one_way_for_every_run(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    big = window.source_bar.ttfd.text()
    assert "x sooner (" in big and " s earlier)" in big
    close = analyze_text('<tool_call>\n{"name": "f", "arguments": {"a": "' + "x" * 60 + '"}}\n</tool_call>',
                         "hermes", size=20, rate=5.0)
    window.session.open(AnalysisSource([close]), "incremental")
    settle(window)
    small = window.source_bar.ttfd.text()
    assert "x sooner (" in small and " s earlier)" in small, small


def test_gui_at_out_of_range_is_an_error(tmp_path):
    out = tmp_path / "shot.png"
    done = subprocess.run([sys.executable, "-m", "callscope", "gui", str(PARALLEL), "--screenshot", str(out), "--at",
                           "99999"], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert done.returncode == 2 and "--at 99999" in done.stderr and "token" in done.stderr
    assert done.stderr.count("\n") == 1 and not out.exists()


# ----------------------------------------------------------------- the debugger


def test_step_by_parse_event_bookmarks_and_run_to_the_next_violation(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, REGRESS)
    state = window.session.state
    state.home()
    settle(window)
    assert window.debugger.jump("event", 1) and state.cursor_step == state.mark_steps("event")[0]
    window.debugger.bookmark_action.trigger()
    settle(window)
    assert state.bookmarks == [state.cursor_step]
    assert window.timeline.bookmark_xs() == [pytest.approx(state.timebase.x(state.cursor))]
    state.home()
    window.playback.speed.setCurrentIndex(window.playback.speed.count() - 1)  # max
    target = min(s for s in state.mark_steps("violation") if s > state.cursor_step)
    assert window.debugger.run_to_violation()
    qtbot.waitUntil(lambda: not window.driver.playing, timeout=10000)
    assert state.cursor_step == target
    assert window.debugger.jump("bookmark", -1) and state.cursor_step == state.bookmarks[0]


def test_the_parse_pane_says_what_was_withheld_and_why(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, FIXTURES / "prefix" / "unnamed_holds_back.txt")
    state = window.session.state
    state.set_cursor(2)
    settle(window)
    text = window.parse_view.toPlainText()
    assert "withheld call 0" in text and "name is not complete" in text
    assert "behind call 0" in text


def test_the_light_theme_and_back(qtbot, tmp_path, monkeypatch):
    from callscope.ui import theme

    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    dark = window.timeline.plot.backgroundBrush().color().name()
    try:
        window.theme_menu.choose("light")
        settle(window)
        assert theme.current == "light" and window.settings.value("theme") == "light"
        assert window.timeline.plot.backgroundBrush().color().name() == QColor(theme.LIGHT["PANEL"]).name() != dark
        assert "#eef0f4" in QApplication.instance().styleSheet()
        shot = window.grab().toImage()
        assert QColor(shot.pixel(QPoint(shot.width() // 2, shot.height() - 5))).lightness() > 128
    finally:
        window.theme_menu.choose("dark")
    assert theme.current == "dark" and window.timeline.plot.backgroundBrush().color().name() == dark


def test_following_the_system_switches_when_the_desktop_does(qtbot, tmp_path, monkeypatch):
    """Offscreen has no desktop scheme: the desktop's answer is the one thing stood in for; the signal is Qt's own."""
    from PySide6.QtGui import QGuiApplication

    from callscope.ui import theme

    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    desktop = ["light"]
    monkeypatch.setattr(theme, "system_scheme", lambda: desktop[0])
    try:
        window.theme_menu.choose("system")
        assert theme.current == "light" and window.settings.value("theme") == "system"
        desktop[0] = "dark"
        QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # the desktop switched
        settle(window)
        assert theme.current == "dark"
        assert window.timeline.plot.backgroundBrush().color().name() == QColor(theme.DARK["PANEL"]).name()
        window.theme_menu.choose("light")
        desktop[0] = "dark"
        QGuiApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
        assert theme.current == "light"  # a chosen theme stays whatever the desktop does
    finally:
        window.theme_menu.choose("dark")
