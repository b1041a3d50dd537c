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
