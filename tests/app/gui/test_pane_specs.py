"""A pane is one declaration: reorder or extend the PaneSpecs and the tabs, the View menu's Alt+N keys,
``gui --tab``, the exports and presenter mode all follow, with no other list to keep in line.
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication, QMenu

from callscope.cli import build_parser
from callscope.panes import specs
from tests.support import probe_pane
from tests.support.gui_helpers import HEADLINE, make_window

pytestmark = pytest.mark.gui


@pytest.fixture
def reordered(monkeypatch):
    """The built-in panes in reverse order, plus the test-only Probe pane at the end."""
    monkeypatch.setattr(specs, "BUILTIN", tuple(reversed(specs.BUILTIN)))
    specs.register_pane(probe_pane.SPEC)
    yield specs.all_panes()
    specs.unregister_pane(probe_pane.SPEC.id)


def _view_menu(window) -> QMenu:
    return next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")


def _tab_choices() -> list[str]:
    gui = build_parser("gui")._subparsers._group_actions[0].choices["gui"]
    return next(action.choices for action in gui._actions if "--tab" in action.option_strings)


def test_the_cli_tab_choices_are_the_pane_ids_in_order(reordered):
    assert list(_tab_choices()) == [spec.id for spec in reordered] and _tab_choices()[-1] == "probe"


def test_tabs_view_menu_keys_and_exports_follow_the_specs(qtbot, tmp_path, monkeypatch, reordered):
    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [spec.title for spec in reordered]
    by_key = {a.shortcut().toString(): a for a in _view_menu(window).actions() if a.shortcut().toString().startswith("Alt+")}
    for n, spec in enumerate(reordered, 1):
        action = by_key[f"Alt+{n}"]
        assert action.text() == spec.title
        action.trigger()
        assert window.tabs.currentWidget() is window.panes[spec.id] and window.tabs.tabText(window.tabs.currentIndex()) == spec.title
    window.show_tab("probe")
    window.session.state.set_cursor_step(40)
    window.session.flush()
    assert window.panes["probe"].label.text() == "step 40"  # it follows the one session like every pane
    export_menu = next(a.menu() for a in window.findChildren(QMenu) for a in a.actions()
                       if a.menu() is not None and a.text() == "&Export")
    assert "Probe &text…" in [a.text() for a in export_menu.actions()]
    window.show_tab("deltas")
    out = tmp_path / "probe.txt"
    window.write_export("probe-text", str(out))
    assert out.read_text() == "step 40\n" and window.tabs.currentWidget() is window.panes["probe"]


def test_headless_tab_and_presenter_mode_come_from_the_specs(qtbot, tmp_path, monkeypatch, reordered):
    from callscope.headless import HeadlessJob, _write_all
    from callscope.presenter_mode import presented

    window = make_window(qtbot, tmp_path, monkeypatch, HEADLINE)
    _write_all(QApplication.instance(), window, HeadlessJob(tab="compare"))
    assert window.tabs.currentWidget() is window.panes["compare"]
    assert [spec.id for spec in presented()] == ["client", "ttfd"]  # by stretch, whatever the tab order
    window.presenter.enter(full_screen=False)
    assert all(window.tabs.indexOf(window.panes[spec.id]) < 0 for spec in presented())
    window.presenter.leave()
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [spec.title for spec in reordered]


def test_a_pane_id_is_registered_once():
    with pytest.raises(ValueError, match="exists already"):
        specs.register_pane(specs.PaneSpec("ttfd", "Again", probe_pane.ProbePane))
