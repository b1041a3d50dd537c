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
