"""A long trace in the window: what opening it does not do (compare a tab nobody looks at, lay out 100,000
characters), and that what is shown is still the whole story where the cursor is."""

from __future__ import annotations

import pytest

from callscope.engine.inspector.sources import FileSource
from tests.support.gui_helpers import make_window


@pytest.fixture(scope="module")
def long_trace(tmp_path_factory):
    from callscope.benchmarks.gui import make_trace

    path = tmp_path_factory.mktemp("long") / "long.jsonl"
    make_trace(path, 30_000)  # one write_file call: 120,000 characters of arguments, 4 a step
    return path


def test_opening_analyses_the_trace_once_and_compares_when_the_tab_is_shown(qtbot, tmp_path, monkeypatch,
                                                                            long_trace):
    calls: list[str] = []
    analyses = FileSource.analyses

    def counted(self, policy, format_id=None):
        calls.append(policy)
        return analyses(self, policy, format_id)

    monkeypatch.setattr(FileSource, "analyses", counted)
    window = make_window(qtbot, tmp_path, monkeypatch, long_trace)
    assert calls == ["incremental"]  # the Compare tab's atomic side waits until it is shown
    window.tabs.setCurrentWidget(window.compare_view)
    qtbot.waitUntil(lambda: window.compare_view.model.rowCount() > 0)
    assert calls == ["incremental", "atomic"]
    assert window.compare_view.comparison.right.source.policy == "atomic"


def test_a_long_text_is_shown_as_a_window_that_follows_the_cursor(qtbot, tmp_path, monkeypatch, long_trace):
    from callscope.panes.text_view import WINDOW_CHARS

    window = make_window(qtbot, tmp_path, monkeypatch, long_trace)
    view, state = window.text_view, window.session.state
    spans = state.spans
    assert len(spans.text) > 100_000
    assert len(view.toPlainText()) <= WINDOW_CHARS  # not the whole 120 KB line, laid out and highlighted
    assert view.window_label.isVisibleTo(window) and f"of {len(spans.text):,}" in view.window_label.text()
    for position in (state.last, 1, state.last // 2, state.last // 2 + 1, 12_345):
        state.set_cursor(position)
        window.session.flush()
        token = spans.span(position)
        shown = view.toPlainText()
        start = view.shown_from
        assert shown == spans.text[start:start + len(shown)]
        assert start <= token.start and token.end <= start + len(shown), position  # the cursor's token is shown
        [current] = [s for s in view.extraSelections() if s.format.background().color().name() ==
                     view._current.background().color().name()]
        assert current.cursor.selectedText().replace("\u2029", "\n") == spans.text[token.start:token.end], position
    # clicking the text moves the cursor to the token under it, in the whole text's numbering
    state.set_cursor(20_000)
    window.session.flush()
    assert state.spans.position_at_char(view.shown_from + 10) in range(19_000, 21_000)
