"""Dialogs say what they will do: the Run dialog's tools preset names what its editor holds."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gui


def _app():
    from callscope.gui_main import make_app

    make_app()


def test_the_run_dialog_s_preset_label_names_the_tools_in_its_editor(qtbot):
    """The last run's tools (the weather ones) once sat under the label ``write_file``; the run used the editor."""
    from callscope.dialogs.common import tool_presets
    from callscope.dialogs.run import RunDialog, demo_values

    _app()
    weather = tool_presets()["weather"]
    last = demo_values()
    last.tools_text = weather
    run = RunDialog(last=last)
    qtbot.addWidget(run)
    assert run.tools.text() == weather and run.tools.picker.currentText() == "weather"
    run.tools.editor.setPlainText(weather.replace("get_weather", "get_forecast"))  # edited: no preset holds it
    assert run.tools.picker.currentText() == "(edited)"
    run.tools.editor.setPlainText(tool_presets()["default"])
    assert run.tools.picker.currentText() == "default"
    run.tools.editor.setPlainText("")
    assert run.tools.picker.currentText() == "(none)"
    run.tools.picker.setCurrentText("files")  # choosing a preset still fills the editor
    assert run.tools.text() == tool_presets()["files"]
    run.demo.setCurrentText("quick")
    assert run.tools.picker.currentText() == "default" and run.tools.text() == tool_presets()["default"]


def test_no_command_line_option_in_the_window_s_error_texts(qtbot, tmp_path, monkeypatch, qloop):
    """The engine words its errors for the CLI (``--listen 'x': give HOST:PORT``); the window says them in its words."""
    from callscope.dialogs.proxy import ProxyValues
    from callscope.ui.errors import gui_wording
    from tests.support.gui_helpers import make_window

    window = make_window(qtbot, tmp_path, monkeypatch)
    assert not window.proxy.start(ProxyValues(listen="nonsense:port", upstream="http://127.0.0.1:9"))
    assert not window.proxy.start(ProxyValues(listen="127.0.0.1:0", upstream="ftp://nowhere"))
    window.errors.report("Cannot run", "--max-string must be at least 1; --force-tool 'x': no such tool")
    messages = [message for _title, message in window.shown_errors]
    assert len(messages) == 3 and not any("--" in m for m in messages), messages
    assert messages[0].startswith("the listen address 'nonsense:port'")
    assert "the upstream URL must start with http://" in messages[1]
    assert messages[2] == "max string must be at least 1; force tool 'x': no such tool"
    assert gui_wording("a--b and x --y") == "a--b and x y"  # only an option's name is reworded


def test_paste_keeps_the_text_when_the_replay_fails(qtbot, tmp_path, monkeypatch):
    """Bad tools JSON once closed the dialog and lost the pasted generation; now it opens again, text and all."""
    from PySide6.QtCore import QTimer

    from callscope.dialogs.paste import PasteDialog
    from tests.support.gui_helpers import make_window

    window = make_window(qtbot, tmp_path, monkeypatch)
    dialog = PasteDialog(window)
    generation = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    seen: list[str] = []

    def answer() -> None:
        if not dialog.isVisible():
            QTimer.singleShot(50, answer)
            return
        seen.append(dialog.text.toPlainText())
        if len(seen) == 1:
            dialog.text.setPlainText(generation)
            dialog.tools.editor.setPlainText("[{not json")
        elif len(seen) == 2:
            dialog.tools.editor.setPlainText("")  # the fix: no tools
        dialog.accept()
        if len(seen) < 2:  # the failed replay brings the dialog back once
            QTimer.singleShot(50, answer)

    QTimer.singleShot(50, answer)
    QTimer.singleShot(20_000, dialog.reject)  # never hang the suite
    assert window.paste_with(dialog)
    assert seen[1] == generation  # the dialog came back with the text after the error
    assert [title for title, _ in window.shown_errors] == ["Bad tools JSON"]
    assert window.session.current.calls[0].name == "get_weather"


def _quit_with_ctrl_q(window) -> None:
    """What Ctrl+Q does: the action bound to it (a key click needs the window active, which offscreen it may not be)."""
    from PySide6.QtGui import QKeySequence

    (quit_action,) = [a for a in window.actions() if QKeySequence("Ctrl+Q") in a.shortcuts()]
    quit_action.trigger()


@pytest.mark.model
def test_ctrl_q_during_a_run_asks_first(qtbot, tmp_path, monkeypatch):
    from callscope.dialogs.run import RunValues
    from callscope.gui_main import live_runs_available
    from tests.support.gui_helpers import ROOT, make_window

    if not live_runs_available():
        pytest.skip("the packaged model or llama-cpp-python is not installed")
    window = make_window(qtbot, tmp_path, monkeypatch)
    tools = (ROOT / "resources" / "tools" / "default.json").read_text()
    assert window.start_run(RunValues(None, "auto", "incremental", "Weather in Paris?", tools, "any", 2000, 11))
    qtbot.waitUntil(lambda: window.runs.tokens_received >= 2, timeout=180000)
    window.answer = False  # "Cancel": the run goes on
    _quit_with_ctrl_q(window)
    assert [title for title, _ in window.asked] == ["Quit during a live run?"]
    assert window.isVisible() and window.runs.running
    thread = window.runs.thread
    window.answer = True
    _quit_with_ctrl_q(window)
    assert len(window.asked) == 2 and not window.isVisible() and thread.isFinished()


def test_quitting_with_nothing_live_asks_nothing_and_a_proxy_asks(qtbot, tmp_path, monkeypatch, qloop):
    from callscope.dialogs.proxy import ProxyValues
    from tests.support.gui_helpers import make_window

    window = make_window(qtbot, tmp_path, monkeypatch)
    assert window.proxy.start(ProxyValues(listen="127.0.0.1:0", upstream="http://127.0.0.1:9", record_dir=str(tmp_path)))
    qtbot.waitUntil(lambda: window.proxy.controller.server is not None, timeout=10000)
    window.answer = False
    _quit_with_ctrl_q(window)
    assert window.asked and "proxy" in window.asked[0][0] and window.isVisible()
    window.proxy.controller.stop()
    qtbot.waitUntil(lambda: not window.proxy.controller.active, timeout=10000)
    _quit_with_ctrl_q(window)
    assert len(window.asked) == 1 and not window.isVisible()
