"""File > Quirks library: every shipped quirk opens in the panes, with what each client makes of it."""

from __future__ import annotations

import pytest

from tests.support.gui_helpers import make_window

pytestmark = pytest.mark.gui


def test_the_quirks_menu_lists_the_library_and_opens_a_quirk(qtbot, tmp_path, monkeypatch):
    from callscope.engine.recordings.quirks import library

    window = make_window(qtbot, tmp_path, monkeypatch)
    window.quirks_menu.aboutToShow.emit()
    actions = {a.text(): a for a in window.quirks_menu.actions()}
    assert set(actions) == {q.id for q in library()}
    assert "two pieces" in actions["name_fragmented"].toolTip()
    actions["name_fragmented"].trigger()
    analysis = window.session.current
    assert analysis.name.startswith("name_fragmented") and analysis.calls[0].name == "get_weather"
    assert "name-fragmented" in {v.rule for v in analysis.violations}
    window.quirks_menu.aboutToShow.emit()  # filled once
    assert len(window.quirks_menu.actions()) == len(actions)
