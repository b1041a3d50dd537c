"""The Template pane in a real window, offscreen: open a template off the GUI thread, see how it writes and
reads back a call, run it live on the packaged model, paste a generation through its parser; and Paste's
format detection. Every wait is on a signal (or a condition), never a sleep.
"""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QThread, QTimer, QUrl
from PySide6.QtGui import QDropEvent, QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from tests.support.gui_helpers import PARALLEL, ROOT, make_window

pytestmark = [pytest.mark.gui, pytest.mark.usefixtures("forget_derived")]
GLM = ROOT / "resources" / "templates" / "glm45.jinja"
DERIVED = ROOT / "tests" / "data" / "templates" / "derived" / "tag_tagged.jinja"
BROKEN = ROOT / "tests" / "data" / "templates" / "broken_syntax.jinja"
GLM_TEXT = (
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>\n"
    "<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>notes/todo.txt</arg_value>\n</tool_call>"
)


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch, PARALLEL)


def _open(window, qtbot, path):
    view = window.template_view
    with qtbot.waitSignal(view.analysed, timeout=60000) as got:
        window.templates.open_path(str(path))
        # the analysis runs on its own thread: the call returns at once and the window keeps running
        assert view.analysing and window.tabs.currentWidget() is view
        assert view._analyser.thread() is not QApplication.instance().thread()
        assert isinstance(view._analyser.thread(), QThread) and view.busy.isVisibleTo(view)
    assert not view.analysing and not view.busy.isVisibleTo(view)
    return got.args[0]


def test_a_template_shows_its_parser_the_rendered_call_and_the_round_trip(window, qtbot):
    state = _open(window, qtbot, GLM)
    view = window.template_view
    assert state is view.state and state.format_id == "glm45"
    assert view.parser_label.text() == "parser: glm45 · dedicated parser"
    assert view.badge.text() == "round trip OK" and view.badge.property("tone") == "ok" and view.badge.isVisibleTo(view)
    assert view.run_button.isEnabled() and view.paste_button.isEnabled()
    body = view.body.toPlainText()
    assert "its parser reads the template's rendered calls back" in body
    assert "<tool_call>zq_first_fn" in body  # the rendered call as the template writes it
    assert "OK: glm45 read 2 of 2 calls back" in body and "<arg_value>Paris</arg_value>" in body
    assert "Learnt description: tag + tagged arguments" in body and "'<arg_key>'" in body
    from callscope.ui import theme

    html = view.body.toHtml()
    assert theme.SPAN_COLORS["call"] in html and theme.call_color(1) in html  # markers, the second call's arguments
    assert "round trip OK" in window.statusBar().currentMessage()


def test_the_theme_recolours_the_pane(window, qtbot):
    from callscope.ui import theme

    _open(window, qtbot, GLM)
    dark_marker = theme.SPAN_COLORS["call"]
    window.theme_menu.choose("light")
    try:
        light_marker = theme.SPAN_COLORS["call"]
        assert light_marker != dark_marker
        html = window.template_view.body.toHtml()
        assert light_marker in html and dark_marker not in html
    finally:
        window.theme_menu.choose("dark")


def test_a_derived_template_and_a_broken_one(window, qtbot):
    view = window.template_view
    state = _open(window, qtbot, DERIVED)
    assert state.derived and view.parser_label.text() == f"parser: {state.format_id} · derived from the template"
    assert "derived from the template instead" in view.body.toPlainText()
    with qtbot.waitSignal(view.failed, timeout=60000) as failed:
        window.templates.open_path(str(BROKEN))
    assert "syntax error" in failed.args[0] and "\n" not in failed.args[0]
    assert window.shown_errors[-1][0] == "Cannot analyse the template"
    assert view.state is state and "syntax error" in view.body.toPlainText()  # the last good analysis stays


def test_dropping_a_template_opens_it_in_the_pane_and_keys_reach_it(window, qtbot):
    view = window.template_view
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(GLM))])
    with qtbot.waitSignal(view.analysed, timeout=60000):
        window.dropEvent(QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                                    Qt.KeyboardModifier.NoModifier))
    assert window.session.current.name == "hermes_parallel"  # a template is not a recording: the panes stay
    keys = {a.text(): [s.toString() for s in a.shortcuts()] for a in window.actions()}
    assert keys["Open te&mplate…"] == [QKeySequence("Ctrl+T").toString()]
    assert keys["Template"] == [QKeySequence("Alt+6").toString()]
    window.tabs.setCurrentIndex(0)
    next(a for a in window.actions() if a.text() == "Template").trigger()
    assert window.tabs.currentWidget() is view
    window.activateWindow()
    view.open_button.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is view.open_button)
    reached = []
    for _ in range(3):  # Tab walks the pane's controls in reading order
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        reached.append(QApplication.focusWidget())
    assert reached == [view.run_button, view.paste_button, view.body]


def _accept_paste(text: str, seen: list):
    """Fill the modal Paste dialog once it is up, note its preset format, and accept it."""

    def act():
        dialog = QApplication.activeModalWidget()
        if dialog is None:
            QTimer.singleShot(10, act)
            return
        seen.append((dialog.format.currentText(), dialog.values().thinking))
        dialog.text.setPlainText(text)
        dialog.accept()

    QTimer.singleShot(0, act)


def test_paste_from_the_pane_reads_the_text_with_the_templates_parser(window, qtbot):
    state = _open(window, qtbot, DERIVED)
    seen: list = []
    text = "".join(r.text for r in state.trips[0].read_back)  # what the model writes after the template's prompt
    assert text.startswith("</thought>")  # the prompt opened reasoning: the text closes it first
    _accept_paste(text, seen)
    window.template_view.paste_button.click()
    assert seen == [(state.format_id, "auto")]  # the template's parser; the text says it starts inside reasoning
    a = window.session.current
    assert a.source.format == state.format_id and [c.name for c in a.calls] == ["get_weather", "read_file"]


def test_paste_detects_the_format_and_says_why(window, qtbot):
    seen: list = []
    _accept_paste(GLM_TEXT, seen)
    window.paste_action.trigger()
    assert seen == [("auto", False)]  # no longer reset to hermes
    a = window.session.current
    assert a.source.format == "glm45" and [c.name for c in a.calls] == ["get_weather", "read_file"]
    message = window.statusBar().currentMessage()
    assert message.startswith("pasted text read as glm45: glm45 finds 2 complete calls, streamed cleanly")
    assert "format glm45" in window.source_bar.details.text()


@pytest.mark.model
def test_run_live_prompts_the_model_with_the_template_and_forces_its_syntax(window, qtbot):
    from callscope.gui_main import live_runs_available

    if not live_runs_available():
        pytest.skip("the packaged model or llama-cpp-python is not installed")
    state = _open(window, qtbot, DERIVED)
    with qtbot.waitSignal(window.runs.ended, timeout=240000) as ended:
        window.template_view.run_button.click()
    analysis = ended.args[0]
    assert window.shown_errors == []
    assert analysis.source.kind == "model" and analysis.source.format == state.format_id
    assert analysis.finish_reason == "tool_calls" and analysis.calls and not analysis.violations
    assert {c.name for c in analysis.calls} <= {"get_weather", "read_file"}
    assert '<fn name="' in analysis.text_until(analysis.last_step)  # the syntax the template teaches


def _gui(*args: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "callscope", "gui", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)


def test_the_command_line_opens_a_template_and_grabs_its_tab(tmp_path):
    from PySide6.QtGui import QImage

    shot = tmp_path / "t.png"
    done = _gui(PARALLEL, "--template", GLM, "--tab", "template", "--screenshot", shot, "--size", "1024x700")
    assert done.returncode == 0, done.stderr
    assert QImage(str(shot)).size().toTuple() == (1024, 700)
    for template, words in ((BROKEN, "Cannot analyse the template: chat template"), (tmp_path / "no.jinja", "no such file")):
        failed = _gui(PARALLEL, "--template", template, "--screenshot", shot)
        assert failed.returncode == 2 and words in failed.stderr
        assert len(failed.stderr.strip().splitlines()) == 1, failed.stderr
