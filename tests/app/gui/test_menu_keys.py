"""Every menu's Alt keys are unique: pressing one opens one entry (Qt cycles through duplicates instead).

File held four pairs (Open recent / Run a model, Open folder / Fixtures, Quirks library / Quit,
Proxy turns / Open template / Stop), and the Served turns entry would have made a fifth.
"""

from __future__ import annotations

import re

import pytest

from tests.support.gui_helpers import make_window

pytestmark = pytest.mark.gui


def _duplicate_keys(menu, path: str) -> list[str]:
    found: dict[str, list[str]] = {}
    clashes: list[str] = []
    for action in menu.actions():
        key = re.search(r"&(\w)", action.text())
        if key:
            found.setdefault(key.group(1).lower(), []).append(action.text())
        if action.menu() is not None:
            clashes += _duplicate_keys(action.menu(), f"{path} > {action.text()}")
    return clashes + [f"{path}: {key!r} in {texts}" for key, texts in found.items() if len(texts) > 1]


def test_every_menu_has_one_entry_per_alt_key(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch)
    window.proxy.ensure()  # the Proxy turns and Served turns entries appear with their docks
    window.serve.ensure()
    clashes = _duplicate_keys(window.menuBar(), "menu bar")
    assert clashes == []
    texts = [a.text() for a in window.menuBar().actions()[0].menu().actions()]
    assert "Proxy &turns" in texts and "Served t&urns" in texts
