"""Dialogs collect values, the text pane answers clicks, the TTFD folder view, compare on fixtures, CLI checks."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from tests.support.gui_helpers import FIXTURES, PARALLEL, REGRESS, ROOT, make_window

pytestmark = pytest.mark.gui


def test_paste_and_run_dialogs_return_what_was_entered(qtbot):
    from callscope.dialogs.paste import PasteDialog
    from callscope.dialogs.run import RunDialog
    from callscope.gui_main import make_app

    make_app()
    paste = PasteDialog()
    qtbot.addWidget(paste)
    paste.text.setPlainText("<tool_call>")
    paste.format.setCurrentText("qwen3_coder")
    paste.step.setCurrentText("4 chars")
    paste.rate.setValue(0)
    v = paste.values()
    assert (v.text, v.format_id, v.unit, v.size, v.rate) == ("<tool_call>", "qwen3_coder", "char", 4, None)
    assert paste.thinking.currentText() == "auto" and v.thinking is False  # no template: nothing opened reasoning
    paste.thinking.setCurrentText("on")
    assert paste.thinking.isEnabled() and paste.values().thinking is True
    paste.format.setCurrentText("llama3_json")  # no reasoning block in this format: the picker is greyed and ignored
    assert not paste.thinking.isEnabled() and not paste.values().thinking
    from_template = PasteDialog(None, "qwen3_coder", "auto", may_open=True)  # the Template pane's, for Qwen3.5
    qtbot.addWidget(from_template)
    assert from_template.values().thinking == "auto"  # the text decides
    run = RunDialog()
    qtbot.addWidget(run)
    assert '"write_file"' in run.tools.text()  # the default demo's request is loaded
    assert run.values().demo == "write-file" and run.values().max_tokens == 2500
    offered = [run.force.itemText(i) for i in range(run.force.count())]
    assert offered == ["any", "off", "write_file"]  # force tool offers the tools' names, not only any/off
    run.force.setCurrentText("write_file")
    assert run.values().force_tool == "write_file"
    run.tools.picker.setCurrentText("(none)")  # no tools: no name to force, the choice falls back to any
    run.max_tokens.setValue(64)
    r = run.values()
    assert r.model_path is None and r.tools_text == "" and r.max_tokens == 64 and r.force_tool == "any"
    assert [run.force.itemText(i) for i in range(run.force.count())] == ["any", "off"]
    assert not run.force.isEditable()  # a list like every other choice (its popup looked like no other)
    assert r.format_id == "auto" and r.policy == "incremental"


def test_clicking_the_text_moves_the_cursor_to_that_token(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    state = window.session.state
    view = window.text_view
    offset = state.spans.text.index("read_file")
    from PySide6.QtGui import QTextCursor

    cursor = QTextCursor(view.document())
    cursor.setPosition(offset + 2)
    point = view.cursorRect(cursor).center()
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
    token = state.spans.span(state.cursor)
    assert token.start <= offset + 2 < token.end or token.start <= offset + 1 < token.end


def test_ttfd_against_call_length_for_a_folder(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    window.plot_folder(str(FIXTURES / "formats"))
    view = window.ttfd_view
    assert view.stack.currentIndex() == 1 and len(view.points) == len(list((FIXTURES / "formats").glob("*.jsonl")))
    assert all(p.streaming is not None and p.atomic is not None and p.streaming <= p.atomic for p in view.points)
    window.plot_folder(str(tmp_path))  # nothing readable there
    assert window.shown_errors[-1][0] == "Nothing to plot"


def test_ttfd_against_call_length_across_the_runs_of_this_session(qtbot, tmp_path, monkeypatch):
    from callscope.engine.inspector.ttfd import ttfd_point
    from tests.support.gui_helpers import HEADLINE

    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    view = window.ttfd_view
    window.tabs.setCurrentWidget(view)
    view.across.click()
    assert view.stack.currentIndex() == 1 and [p.name for p in view.points] == ["hermes_parallel"]
    assert window.open_path(str(HEADLINE))  # the plot follows: both runs, not the first file's alone
    assert [p.name for p in view.points] == ["hermes_parallel", "headline_701_tokens"]
    assert view.points[1] == ttfd_point(window.session.current)
    assert "2 runs this session" in view.across_caption.text() and view.across.text() == "TTFD vs call length"
    window.source_bar.policy.setCurrentText("atomic")  # one policy per plot
    assert [p.name for p in view.points] == ["headline_701_tokens"] and view.points[0].streaming == view.points[0].atomic
    assert window.open_path(str(PARALLEL))  # the same run again is not a second dot
    window.source_bar.policy.setCurrentText("incremental")
    assert [p.name for p in view.points] == ["headline_701_tokens", "hermes_parallel"]


def test_question_mark_opens_the_shortcut_list(qtbot, tmp_path, monkeypatch):
    from callscope.dialogs.shortcuts import ShortcutsDialog

    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    window.activateWindow()
    assert QTest.qWaitForWindowActive(window)  # window shortcuts need the active window
    QTest.keyClick(window, Qt.Key.Key_Question)
    QTest.keyClick(window, Qt.Key.Key_Question)  # again: the same list comes forward, not a second one
    dialogs = [d for d in window.findChildren(ShortcutsDialog) if d.isVisible()]
    assert len(dialogs) == 1 and dialogs[0].table.rowCount() > 15


def test_compare_works_on_a_parse_carrying_fixture(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, REGRESS)
    compare = window.compare_view
    assert compare.comparison is not None and compare.comparison.right.source.policy == "atomic"
    assert [compare.other.itemText(i) for i in range(compare.other.count())] == [
        "policy: incremental", "policy: atomic", "policy: llama_server"]  # parses, not text: no other parser
    compare.other.setCurrentText("policy: llama_server")
    assert compare.comparison.right.source.policy == "llama_server"
    row = next(i for i, r in enumerate(compare.comparison.rows) if r.step > 0)
    compare.table.selectRow(row)
    assert window.session.state.cursor_step == compare.comparison.rows[row].step
    target = compare.comparison.rows[-2]
    window.tabs.setCurrentWidget(compare)
    window.session.state.set_cursor_step(target.step)  # the other way: the table follows the cursor
    window.session.flush()
    assert compare.table.currentIndex().row() == len(compare.comparison.rows) - 2
    assert window.session.state.cursor_step == target.step


def test_compare_against_another_parser_marks_what_it_reads_differently(qtbot, tmp_path, monkeypatch):
    """A trace carries text: the picker offers the other wire formats, re-parsing the same steps."""
    window = make_window(qtbot, tmp_path, monkeypatch, FIXTURES / "formats" / "hermes_single.jsonl")
    compare = window.compare_view
    labels = [compare.other.itemText(i) for i in range(compare.other.count())]
    assert "format: qwen3_coder" in labels and "format: hermes" not in labels and "policy: atomic" in labels
    assert compare.choose("format: qwen3_coder")
    c = compare.comparison
    assert c.right.source.format == "qwen3_coder" and c.right.source.policy == c.left.source.policy == "incremental"
    assert [s.data for s in c.right.steps] == [s.data for s in c.left.steps]  # the same steps, another parser
    assert c.left.calls and not c.right.calls  # qwen3_coder does not read hermes' JSON call
    assert c.differing > 0 and any(r.differs for r in compare.model.rows)
    assert compare.model.headerData(3, Qt.Orientation.Horizontal) == "qwen3_coder"
    assert "qwen3_coder · incremental" in compare.summary.text()
    window.set_policy("atomic")  # the parser choice stays; it now runs under the shown policy
    assert compare.target.label == "format: qwen3_coder"
    assert compare.comparison.right.source.policy == "atomic" and compare.comparison.right.source.format == "qwen3_coder"
    assert window.open_path(str(REGRESS))  # parses, not text: back to a policy
    assert compare.target.label == "policy: atomic" and compare.comparison.right.source.policy == "atomic"


def test_reconciliation_says_why_the_stream_ended(qtbot, tmp_path, monkeypatch):
    lines = (FIXTURES / "formats" / "hermes_single.jsonl").read_text().splitlines()
    assert lines[-1].startswith('{"type":"end"')
    lines[-1] = '{"type":"end","cause":"error","ms":2125.0,"detail":"connection lost after 57 lines"}'
    trace = tmp_path / "ended.jsonl"
    trace.write_text("\n".join(lines) + "\n")
    window = make_window(qtbot, tmp_path, monkeypatch, trace)
    headline = window.reconcile_view.headline.text()
    assert "generation ended: error: connection lost after 57 lines" in headline
    assert window.open_path(str(PARALLEL))  # no detail recorded: the short form
    assert "(generation ended: stop)" in window.reconcile_view.headline.text()
    assert "connection lost" not in window.reconcile_view.headline.text()


def test_compare_marks_the_rows_that_differ_on_screen(qtbot, tmp_path, monkeypatch):
    """The style sheet must not hide the model's row colours (a ::item border rule would)."""
    window = make_window(qtbot, tmp_path, monkeypatch, REGRESS)
    window.tabs.setCurrentWidget(window.compare_view)
    compare = window.compare_view
    rows = compare.comparison.rows
    same = next(i for i, r in enumerate(rows) if not r.differs)
    differs = next(i for i, r in enumerate(rows) if r.differs)
    compare.table.clearSelection()
    compare.table.scrollToTop()  # it follows the cursor, which opened at the end
    image = compare.table.viewport().grab().toImage()

    def colour(row: int):
        rect = compare.table.visualRect(compare.model.index(row, 3))  # the right-hand cell, empty in both rows
        return image.pixelColor(rect.center().x(), rect.center().y())

    assert colour(differs) != colour(same)
    assert colour(differs).red() > colour(differs).blue()  # the warm "differs" mark, not the table's own colour


def test_dense_lanes_draw_one_tick_per_pixel_and_zoom_brings_every_tick_back(qtbot, tmp_path, monkeypatch):
    from callscope.benchmarks.gui import make_trace

    trace = tmp_path / "long.jsonl"
    make_trace(trace, steps=5000)
    window = make_window(qtbot, tmp_path, monkeypatch, trace)
    state = window.session.state
    ticks = window.timeline.tick_marks()[("tokens", "token")]
    width = window.timeline.plot.getPlotItem().getViewBox().width()
    assert window.timeline.drawn()[("tokens", "token")] == 5000  # the lane holds every token...
    assert len(ticks.drawn_xs()) <= width + 2  # ...and draws at most one per pixel column
    window.timeline.plot.getPlotItem().getViewBox().setXRange(state.timebase.x(100), state.timebase.x(119), padding=0)
    assert 20 <= len(ticks.drawn_xs()) <= 22  # zoomed in: each token in view has its own tick


def test_gui_verb_rejects_bad_arguments(tmp_path):
    def gui(*args):
        return subprocess.run([sys.executable, "-m", "callscope", "gui", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=60, check=False)

    done = gui(str(PARALLEL), "--at", "3")
    assert done.returncode == 2 and "--at, --tab and --presenter only apply with --screenshot" in done.stderr
    done = gui(str(tmp_path / "missing.jsonl"))
    assert done.returncode == 2 and "no such file" in done.stderr
    done = gui(str(PARALLEL), "--policy", "nope", "--screenshot", str(tmp_path / "x.png"))
    assert done.returncode == 2 and "unknown policy" in done.stderr


def test_position_readout_says_where_the_cursor_is(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    state = window.session.state
    state.set_cursor(10)
    window.session.flush()
    assert window.playback.position.text().startswith(f"token {state.cursor_step}")
    assert window.cursor_label.text() == f"token {state.cursor_step}"


def test_a_file_with_several_streams_offers_a_run_picker(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, FIXTURES / "prefix" / "llama_server_fix.txt")
    bar = window.source_bar
    assert bar.run.isVisible() and [bar.run.itemText(i) for i in range(bar.run.count())] == ["single_call", "parallel_calls"]
    bar.run.setCurrentIndex(1)
    assert window.session.current.name == "parallel_calls"
    assert window.reconcile_view.calls.rowCount() == 2
    window.source_bar.policy.setCurrentText("atomic")  # re-analysis keeps the chosen stream
    assert window.session.current.name == "parallel_calls" and window.session.current.source.policy == "atomic"


def test_a_failed_run_keeps_the_tokens_received_and_can_be_saved(qtbot, tmp_path, monkeypatch):
    from callscope.engine.analysis.analyzer import SourceInfo
    from callscope.engine.formats.samples import render
    from callscope.engine.recordings.replay import load_analyses
    from callscope.live.run_worker import RunPlan

    window = make_window(qtbot, tmp_path, monkeypatch)
    controller = window.runs
    text = render("hermes", [("get_weather", {"city": "Paris"})]).encode()
    controller._on_prepared(RunPlan(SourceInfo("model", None, "hermes", "incremental"), "hermes", None, "crashy", 5, "t"))
    for i in range(0, 30, 3):
        controller.on_token(text[i : i + 3], float(i), i)
    controller.worker.failed.emit("llama.cpp crashed")  # as the worker reports a failure
    qtbot.waitUntil(lambda: window.shown_errors != [], timeout=5000)
    assert window.shown_errors[-1] == ("Run failed", "llama.cpp crashed")
    a = window.session.current
    assert a.finish_cause == "error" and a.step_count == 10 and window.text_view.toPlainText() == text[:30].decode()
    assert window.save_trace_to(str(tmp_path / "partial.jsonl"))
    again = load_analyses(tmp_path / "partial.jsonl")[0]
    assert again.step_count == 10 and again.finish_cause == "error"


def test_a_live_run_in_thinking_mode_is_analysed_as_reasoning_first(qtbot, tmp_path, monkeypatch):
    """The GUI's own analysis of a live run uses the plan's thinking flag, as the worker's does."""
    from callscope.engine.analysis.analyzer import SourceInfo
    from callscope.engine.formats.samples import render
    from callscope.live.run_worker import RunPlan

    window = make_window(qtbot, tmp_path, monkeypatch)
    controller = window.runs
    text = ("Weather needs a tool.</think>\n" + render("hermes", [("get_weather", {"city": "Paris"})])).encode()
    info = SourceInfo("model", None, "hermes", "incremental", {"thinking": True})
    controller._on_prepared(RunPlan(info, "hermes", None, "thinks", 5, "t", thinking=True))
    for i in range(0, len(text), 4):
        controller.on_token(text[i : i + 4], float(i), i)
    controller.drain()
    a = window.session.current
    assert a.parse_at(a.steps[-1].step).reasoning.startswith("Weather needs a tool.")
    assert [c.kind for c in a.chunks if c.kind in ("content", "reasoning")][:1] == ["reasoning"]
    assert not any(c.kind == "content" and "Weather" in c.text for c in a.chunks)


@pytest.mark.llama
def test_a_file_that_is_not_a_model_fails_on_the_worker_with_a_dialog(qtbot, tmp_path, monkeypatch):
    from callscope.dialogs.run import RunValues

    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    before = window.session.state
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"NOPE" + b"\0" * 64)
    with qtbot.waitSignal(window.runs.failed, timeout=30000):
        assert window.start_run(RunValues(str(fake), "auto", "incremental", "hi", "", "any", 8, 1))
    assert window.shown_errors[-1][0] == "Run failed" and "not a GGUF model" in window.shown_errors[-1][1]
    assert window.session.state is before and not window.runs.running  # the previous view stays, ready for another run
    assert window.open_path(str(REGRESS))


def test_run_dialog_seed_is_the_cli_default(qtbot):
    from callscope.commands import run as run_command
    from callscope.dialogs.run import RunDialog
    from callscope.gui_main import make_app

    make_app()
    dialog = RunDialog()
    qtbot.addWidget(dialog)
    assert dialog.values().seed == run_command._DEFAULT_SAMPLER.seed


def test_run_failures_speak_of_the_window_not_the_cli(qtbot, tmp_path, monkeypatch):
    from callscope.engine.core.errors import ToolChoiceError
    from callscope.engine.decode.grammar import forced_tools

    window = make_window(qtbot, tmp_path, monkeypatch)
    with pytest.raises(ToolChoiceError) as raised:
        forced_tools("any", [])
    window.runs.worker.failed.emit(str(raised.value))  # as the worker reports a failure
    qtbot.waitUntil(lambda: window.shown_errors != [], timeout=5000)
    title, message = window.shown_errors[-1]
    assert title == "Run failed" and "--" not in message and "tools box" in message and "force tool" in message


def test_a_stream_without_finish_says_why_in_its_badge(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, REGRESS)
    a = window.session.current
    badge = window.source_bar.finish.text()
    assert "null" not in badge and "None" not in badge
    if a.finish_reason is None:
        assert badge.startswith("no finish_reason (")
    assert "null" not in window.reconcile_view.headline.text()
    calls = window.source_bar.calls.text()
    assert calls.endswith("reconstructs") if len(a.calls) == 1 and a.calls[0].reconstructs else "reconstruct" in calls


def test_run_dialog_keeps_the_last_values_and_states_its_range(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from callscope.dialogs.run import RunDialog

    window = make_window(qtbot, tmp_path, monkeypatch)
    started = []
    chosen: list[str] = []
    monkeypatch.setattr(window, "start_run", lambda values: started.append(values) or True)

    def fill_and_accept():
        dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, RunDialog) and w.isVisible())
        dialog.prompt.setPlainText("Read /etc/hosts")
        chosen.append(dialog.force.itemText(2))  # the first tool name offered after any and off
        dialog.force.setCurrentIndex(2)
        dialog.max_tokens.setValue(1000)
        dialog.accept()

    QTimer.singleShot(0, fill_and_accept)
    window.run_dialog()
    assert started and started[0].max_tokens == 1000
    again = window.make_run_dialog()
    qtbot.addWidget(again)
    v = again.values()
    assert (v.prompt, v.force_tool, v.max_tokens) == ("Read /etc/hosts", chosen[0], 1000) and chosen[0]
    assert v.tools_text == started[0].tools_text
    assert again.max_tokens.maximum() >= 4096 and f"{again.max_tokens.maximum():,}" in again.max_tokens_range.text()


def test_shortcuts_dialog_shows_every_row_and_dialog_buttons_carry_no_icons(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QDialogButtonBox

    window = make_window(qtbot, tmp_path, monkeypatch, PARALLEL)
    dialog = window.show_shortcuts()
    qtbot.waitExposed(dialog)
    table = dialog.table
    assert table.verticalScrollBar().maximum() == 0  # "End" and everything after it visible without scrolling
    last = table.visualItemRect(table.item(table.rowCount() - 1, 0))
    assert last.bottom() <= table.viewport().height()
    close = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Close)
    assert close.icon().isNull()
    # offscreen never asks for icons; a desktop platform theme (Xvfb + GNOME/KDE) does, and the style sheet wins
    from PySide6.QtWidgets import QApplication

    assert "dialogbuttonbox-buttons-have-icons: 0" in QApplication.instance().styleSheet()
