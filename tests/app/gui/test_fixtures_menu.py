"""The shipped fixtures within reach of the window: File > Fixtures, shipped names in File > Open, every kind in its filter."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer

from callscope.engine.core.shipped import RECORDING_SUFFIXES, shipped_fixtures
from callscope.engine.inspector.fixture_library import library
from tests.support.gui_helpers import FIXTURES, ROOT, make_window

pytestmark = pytest.mark.gui


def test_the_library_lists_every_shipped_recording_by_folder_with_its_description():
    entries = library()
    assert sorted(e.path for e in entries) == sorted(shipped_fixtures())
    assert entries[0].name == "headline_701_tokens" and entries[0].folder == ""
    assert {"", "cases", "formats", "prefix"} <= {e.folder for e in entries}
    assert all(e.description for e in entries), [e.name for e in entries if not e.description]
    regress = next(e for e in entries if e.name == "arguments_regress")
    assert "arguments regress" in regress.description  # a byte-prefix file's own '# @description' lines


def test_file_fixtures_opens_a_shipped_recording(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch)
    menu = window.fixtures_menu
    titles = [a.text() for a in menu.menu.actions()]
    assert titles[0] == "headline_701_tokens" and any(t.startswith("cases") for t in titles)
    from callscope.fixtures_menu import OWN_MENUS

    listed = [p for p in shipped_fixtures() if not any(f"/{folder}/" in p.as_posix() for folder in OWN_MENUS)]
    assert len(menu.actions) == len(listed) and all(a.toolTip() for a in menu.actions)
    reasoning = next(a for a in menu.actions if a.text() == "reasoning_then_call")
    assert "reasoning" in reasoning.toolTip()
    reasoning.trigger()
    assert not window.shown_errors and window.session.current.name == "reasoning_then_call"


def test_file_open_resolves_a_shipped_name_and_offers_every_kind_replay_reads(qtbot, tmp_path, monkeypatch):
    from callscope.fixtures_menu import open_filters

    every = open_filters()[0]
    for suffix in (*RECORDING_SUFFIXES, ".har", ".mitm"):
        assert f"*{suffix}" in every, (suffix, every)
    window = make_window(qtbot, tmp_path, monkeypatch)
    monkeypatch.chdir(tmp_path)  # the dialog opens in an empty folder: the name is no file there

    seen = []

    def type_a_name():
        from PySide6.QtWidgets import QApplication, QFileDialog

        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QFileDialog):
            QTimer.singleShot(100, type_a_name)  # not shown yet
            return
        seen.append(dialog.nameFilters()[0])
        from PySide6.QtTest import QTest
        from PySide6.QtWidgets import QLineEdit

        name = dialog.findChild(QLineEdit, "fileNameEdit")  # typed as a user types it, then Return
        QTest.keyClicks(name, "headline_701_tokens")
        QTest.keyClick(name, Qt.Key.Key_Return)

    def give_up():  # a dialog that never took the name must not hang the suite
        from PySide6.QtWidgets import QApplication

        if (modal := QApplication.activeModalWidget()) is not None:
            modal.reject()

    QTimer.singleShot(100, type_a_name)
    QTimer.singleShot(20_000, give_up)
    window.open_dialog()
    assert "*.sse" in seen[0] and "*.har" in seen[0]
    assert not window.shown_errors and window.session.current.name == "headline_701_tokens"
    assert window.open_path("formats/hermes_single") and window.session.current.name == "hermes_single"


def test_opening_a_readme_says_what_callscope_reads(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch)
    assert not window.open_path(str(ROOT / "README.md"))
    (title, message), = window.shown_errors
    assert "callscope reads: callscope traces" in message and "byte-prefix length" not in message
    assert not window.open_path(str(FIXTURES / "README.md"))
    assert "callscope reads:" in window.shown_errors[-1][1]
