"""The client view pane, presenter mode and the exports (animation, plots) in a real window, offscreen."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage

from callscope.engine.inspector.playback import SPEEDS
from tests.support.gui_helpers import HEADLINE, PARALLEL, ROOT, make_window

pytestmark = pytest.mark.gui


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch, HEADLINE)


def settle(window) -> None:
    from PySide6.QtWidgets import QApplication

    for _ in range(2):
        window.session.flush()
        QApplication.processEvents()


def _at(window, step: int) -> None:
    window.session.state.set_cursor_step(step)
    settle(window)


def test_the_client_view_follows_the_cursor(window):
    window.tabs.setCurrentWidget(window.client_view)
    pane = window.client_view
    _at(window, 5)
    assert pane.streaming.pages.currentIndex() == pane.atomic.pages.currentIndex() == 0  # both waiting
    assert pane.atomic.spinner.text() and pane.streaming.clock.text().endswith(" s")
    _at(window, 180)
    assert pane.streaming.pages.currentIndex() == 1 and pane.atomic.pages.currentIndex() == 0
    shown = pane.streaming.body.toPlainText()
    assert "write_file" in shown and "path" in shown and "def handler" in shown
    assert pane.streaming.clock.text() == pane.atomic.clock.text() == f"{window.session.state.timebase.x(180) / 1000:.1f} s"
    assert "first delta at 0.542 s" in pane.streaming.status.text()
    window.session.state.end()
    settle(window)
    assert pane.atomic.pages.currentIndex() == 1 and "finish tool_calls" in pane.atomic.status.text()
    assert pane.atomic.body.toPlainText() == pane.streaming.body.toPlainText()


def test_a_hidden_client_view_catches_up_when_shown(window):
    pane = window.client_view
    window.tabs.setCurrentIndex(0)
    _at(window, 5)
    assert not pane.isVisible() and pane._stale
    window.tabs.setCurrentWidget(pane)
    settle(window)
    assert pane.scene is not None and pane.scene.streaming.waiting and not pane._stale


def test_presenter_mode_shows_the_client_view_over_the_plot_and_gives_the_panes_back(window, qtbot):
    tabs = [window.tabs.tabText(i) for i in range(window.tabs.count())]
    window.tabs.setCurrentIndex(1)
    window.presenter.enter(full_screen=False)
    settle(window)
    page = window.centralWidget()
    assert page is window.presenter.page and window.presenter.active
    assert window.client_view.parent() is page and window.ttfd_view.parent() is page
    assert not window.menuBar().isVisible() and not window.statusBar().isVisible()
    assert not window.timeline.isVisible() and not window.text_view.isVisible()
    assert not window.ttfd_view.across.isVisible() and not window.client_view.headline.isVisible()
    assert window.client_view.streaming.scale > 1 and window.leave_presenter_action.isEnabled()
    left = window.ttfd_view.plot.getPlotItem().getAxis("left")
    desk_title = "argument characters delivered"
    # the large title is cut on a short plot (1024x700): presenting, it is short; the desk's comes back on leave
    assert left.labelText == "characters delivered"
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    settle(window)
    assert left.labelText == desk_title
    assert not window.presenter.active and window.centralWidget() is not page
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == tabs
    assert window.tabs.currentIndex() == 1 and window.menuBar().isVisible() and window.timeline.isVisible()
    assert not window.ttfd_view.across.isHidden() and window.client_view.streaming.scale == 1
    assert not window.leave_presenter_action.isEnabled()
    window.presenter_action.trigger()  # F5 in the menu
    assert window.presenter.active
    window.presenter_action.trigger()
    assert not window.presenter.active


def test_r_replays_the_trace_from_the_start_at_real_speed(window, qtbot):
    window.playback.speed.setCurrentIndex(SPEEDS.index(4.0))
    _at(window, 400)
    qtbot.keyClick(window.timeline.plot, Qt.Key.Key_R)
    assert window.driver.playing and window.driver.speed == 1.0
    assert window.session.state.cursor < 20  # back at the start (a tick may have moved it on)
    window.driver.pause()


def test_the_shortcut_list_names_presenter_mode_and_the_replay_key(window, qtbot):
    from callscope.dialogs.shortcuts import describe_shortcuts

    dialog = window.show_shortcuts()
    qtbot.addWidget(dialog)
    rows = {what: keys for keys, what in describe_shortcuts(window.actions())}
    shown = {dialog.table.item(r, c).text() for r in range(dialog.table.rowCount())
             for c in range(1, dialog.table.columnCount(), 2) if dialog.table.item(r, c) is not None}
    assert {"Presenter mode", "Replay from the start at 1×", "Leave presenter mode", "Client view"} <= shown
    assert "F5" in rows["Presenter mode"] and rows["Replay from the start at 1×"] == "R"
    assert "Esc" in rows["Leave presenter mode"] and "Alt+5" in rows["Client view"]


# ------------------------------------------------------------------ exports


def test_plots_export_alone_at_high_resolution_without_the_cursor(window, tmp_path):
    cursor = window.ttfd_view.cursor_line
    window.tabs.setCurrentWidget(window.ttfd_view)
    settle(window)
    assert cursor.isVisible()
    window.write_export("ttfd", str(tmp_path / "ttfd.png"), width=3000)
    image = QImage(str(tmp_path / "ttfd.png"))
    plot = window.ttfd_view.plot.getPlotItem().sceneBoundingRect()
    assert image.width() == 3000 and abs(image.height() - 3000 * plot.height() / plot.width()) <= 2
    assert cursor.isVisible(), "the cursor line is back on screen after the export"
    # the cursor line (its own colour, full height) is not in the file
    from callscope.ui import theme

    cursor_colour = theme.qcolor(theme.CURSOR)
    found = sum(1 for px in range(0, image.width(), 7) for py in range(0, image.height(), 7)
                if image.pixelColor(px, py) == cursor_colour)
    assert found == 0
    window.write_export("timeline-svg", str(tmp_path / "timeline.svg"))
    from PySide6.QtSvg import QSvgRenderer

    svg = QSvgRenderer(str(tmp_path / "timeline.svg"))
    assert svg.isValid() and svg.defaultSize().width() > 100
    assert "wire · atomic" in (tmp_path / "timeline.svg").read_text()
    assert not window.export_to("ttfd", str(tmp_path / "ttfd.jpg"))
    assert "a plot is exported as .png or .svg" in window.shown_errors[-1][1]


def test_an_exported_ttfd_plot_carries_its_legend_and_the_screen_does_not(window, tmp_path):
    import pyqtgraph as pg

    window.tabs.setCurrentWidget(window.ttfd_view)
    settle(window)
    view = window.ttfd_view
    assert view.legend_entries() == ["incremental", "atomic"]

    def legends() -> list:
        return [item for item in view.plot.scene().items() if isinstance(item, pg.LegendItem)]

    assert legends() == []  # on screen the key is in the headline, never over the curves
    window.write_export("ttfd-svg", str(tmp_path / "ttfd.svg"))
    svg = (tmp_path / "ttfd.svg").read_text()
    assert "incremental" in svg and "atomic" in svg and "first delta" in svg  # the key, by the curves' labels
    assert legends() == []  # gone again after the export


def test_the_client_view_exports_as_a_picture(window, tmp_path):
    _at(window, 180)
    assert window.export_to("client", str(tmp_path / "client.png"))
    image = QImage(str(tmp_path / "client.png"))
    assert image.width() == window.client_view.width() and image.height() == window.client_view.height()


def test_the_replay_exports_as_an_animated_png_with_real_timing(window, tmp_path):
    from PIL import Image

    _at(window, 300)
    frames = window.export_animation(str(tmp_path / "replay.png"), "client", fps=4)
    assert window.session.state.cursor == window.session.state.timebase.index_of_step(300), "the cursor comes back"
    with Image.open(tmp_path / "replay.png") as apng:
        assert apng.format == "PNG" and getattr(apng, "is_animated", False) and apng.n_frames == frames
        durations = []
        for i in range(apng.n_frames):
            apng.seek(i)
            durations.append(apng.info["duration"])
        first, last = _frame(apng, 0), _frame(apng, apng.n_frames - 1)
    span = window.session.state.timebase.x(window.session.state.last)
    assert abs(sum(durations) - (span + 2000)) < 2 * 250  # the run's 29.2 s, then the held end
    assert first != last and frames > 50


def _frame(image, index: int) -> bytes:
    image.seek(index)
    return image.convert("RGB").tobytes()


def test_the_replay_exports_as_a_gif_and_refuses_what_it_cannot_write(window, tmp_path, monkeypatch):
    from PIL import Image

    frames = window.export_animation(str(tmp_path / "replay.gif"), "presenter", fps=2, speed=4)
    assert not window.presenter.active, "presenter mode was only borrowed for the frames"
    with Image.open(tmp_path / "replay.gif") as gif:
        assert gif.format == "GIF" and gif.n_frames >= 5 and gif.size[0] == window.width()
    assert frames >= gif.n_frames  # identical frames merge
    from callscope.ui import animation
    from callscope.ui.exports import ExportError

    with pytest.raises(ExportError, match=r"\.gif or \.mp4"):
        window.export_animation(str(tmp_path / "replay.avi"))
    monkeypatch.setattr(animation.shutil, "which", lambda _name: None)  # a machine without ffmpeg
    with pytest.raises(ExportError, match="MP4 export needs ffmpeg on PATH"):
        window.export_animation(str(tmp_path / "replay.mp4"))


@pytest.mark.skipif(subprocess.run(["sh", "-c", "command -v ffmpeg"], capture_output=True).returncode != 0,
                    reason="ffmpeg is not installed")
def test_the_replay_exports_as_mp4_with_ffmpeg(window, tmp_path):
    window.export_animation(str(tmp_path / "replay.mp4"), "client", fps=5, speed=4)
    assert (tmp_path / "replay.mp4").read_bytes()[4:8] == b"ftyp"


# ------------------------------------------------------------------ the CLI


def _gui(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "callscope", "gui", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)


def test_gui_exports_headless_from_the_command_line(tmp_path):
    shot, anim, plot = tmp_path / "p.png", tmp_path / "a.png", tmp_path / "t.svg"
    done = _gui(str(PARALLEL), "--screenshot", str(shot), "--presenter", "--size", "1024x700",
                "--export-animation", str(anim), "--fps", "5", "--export-plot", str(plot))
    assert done.returncode == 0, done.stderr
    assert QImage(str(shot)).size().toTuple() == (1024, 700)
    assert f"wrote {anim} (" in done.stdout and plot.read_text().startswith("<?xml")
    from PIL import Image

    with Image.open(anim) as image:
        assert image.n_frames > 3


@pytest.mark.parametrize(("args", "message"), [
    (["--size", "big", "--screenshot", "x.png"], "--size takes WIDTHxHEIGHT"),
    (["--size", "1024x700"], "--size only applies with"),
    (["--export-animation", "x.avi"], "writes .gif, .png (animated), .apng or .mp4"),
    (["--export-animation", "x.gif", "--fps", "0"], "--fps must be above 0"),
    (["--export-plot", "x.pdf"], "--export-plot writes .png or .svg"),
    (["--presenter"], "only apply with --screenshot"),
])
def test_gui_export_options_are_checked_in_one_line(args, message):
    done = _gui(str(PARALLEL), *args)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and message in done.stderr, done.stderr


# ------------------------------------------------------------------ the start-up demo, live


@pytest.mark.model
def test_the_start_up_demo_streams_its_long_call_into_the_client_view_live(qtbot, tmp_path, monkeypatch):
    from callscope.gui_main import live_runs_available, start_default_run

    if not live_runs_available():
        pytest.skip("the packaged model or llama-cpp-python is not installed")
    window = make_window(qtbot, tmp_path, monkeypatch)
    window.tabs.setCurrentWidget(window.client_view)
    pane = window.client_view
    assert start_default_run(window)
    assert window.runs.running

    def streaming_while_atomic_waits() -> bool:
        scene = pane.scene
        return scene is not None and scene.live and bool(scene.streaming.calls) and scene.atomic.waiting \
            and len(scene.streaming.calls[0].arguments) > 70

    qtbot.waitUntil(streaming_while_atomic_waits, timeout=180000)
    scene = pane.scene
    assert scene.streaming.calls[0].name == "write_file" and pane.atomic.pages.currentIndex() == 0
    assert "content" in pane.streaming.body.toPlainText()
    source = window.session.current.source.extra
    assert source["forced"] == "one call to write_file in emulated syntax"  # the demo's settings reached the worker
    with qtbot.waitSignal(window.runs.ended, timeout=60000):
        window.stop_run()
    assert window.session.current.finish_cause == "cancelled" and window.shown_errors == []


def test_the_run_dialog_offers_the_demo_presets(qtbot):
    from callscope.dialogs.run import RunDialog
    from callscope.engine.decode.demos import QUICK, WRITE_FILE
    from callscope.gui_main import make_app

    make_app()
    dialog = RunDialog()
    qtbot.addWidget(dialog)
    v = dialog.values()
    assert (v.demo, v.prompt, v.max_tokens) == ("write-file", WRITE_FILE.prompt, WRITE_FILE.max_tokens)
    dialog.demo.setCurrentIndex(dialog.demo.findData("quick"))
    v = dialog.values()
    assert (v.demo, v.prompt, v.max_tokens) == ("quick", QUICK.prompt, QUICK.max_tokens)
    assert '"get_weather"' in v.tools_text and dialog.tools.picker.currentText() == "default"
    dialog.demo.setCurrentIndex(0)  # your own request: the fields stay, the demo's forcing does not apply
    assert dialog.values().demo is None and dialog.values().prompt == QUICK.prompt


def test_the_client_view_follows_a_theme_switch(window):
    from callscope.ui import theme

    window.tabs.setCurrentWidget(window.client_view)
    _at(window, 180)
    try:
        window.theme_menu.choose("light")
        settle(window)
        assert theme.PANEL_ALT in window.client_view.streaming.styleSheet()
        assert window.client_view.streaming.accent == theme.POLICY_COLOR
    finally:
        window.theme_menu.choose("dark")
    settle(window)
    assert theme.PANEL_ALT in window.client_view.streaming.styleSheet()
