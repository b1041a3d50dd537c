"""File > Open folder: a real window offscreen, a real process pool; the table fills off the GUI thread."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from callscope.engine.core import rules
from callscope.engine.corpus.browse import CLEAN, COLUMNS
from callscope.models.corpus_model import PATH_ROLE
from callscope.panes.corpus_view import CorpusView
from tests.support.gui_helpers import make_window

pytestmark = pytest.mark.gui
COUNT = 60
VIOLATIONS = [c.title for c in COLUMNS].index("Violations")


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from callscope.benchmarks.corpus import generate

    out = tmp_path_factory.mktemp("window") / "corpus"
    generate(out, COUNT, seed=5)
    return out


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    return make_window(qtbot, tmp_path, monkeypatch)


def test_open_folder_fills_the_table_from_the_pool_off_the_gui_thread(window, folder, qtbot, monkeypatch):
    batches: list[tuple[int, bool]] = []
    real_add = CorpusView.add_batch

    def add_batch(view, verdicts):
        batches.append((len(verdicts), QThread.currentThread() is QApplication.instance().thread()))
        real_add(view, verdicts)

    monkeypatch.setattr(CorpusView, "add_batch", add_batch)
    assert window.corpus.action.text() == "Open fo&lder…" and window.corpus.action.shortcut().toString()
    runner = window.corpus.open_folder(str(folder), jobs=2)
    assert runner._thread is not threading.main_thread()
    view = window.corpus.view
    assert window.corpus.dock.isVisible() and view.stop_button.isVisibleTo(view)
    qtbot.waitUntil(lambda: view.done, timeout=180_000)
    assert len(batches) > 2 and sum(n for n, _ in batches) == COUNT, "it fills batch by batch"
    assert all(on_gui for _, on_gui in batches), "each batch is received on the GUI thread"
    assert view.model.rowCount() == view.proxy.rowCount() == COUNT
    assert f"{COUNT:,} recordings" in view.header.text() and not view.progress.isVisibleTo(view)
    assert not window.shown_errors


def test_filters_sorting_the_plot_and_opening_a_row(window, folder, qtbot):
    window.corpus.open_folder(str(folder), jobs=2)
    view = window.corpus.view
    qtbot.waitUntil(lambda: view.done, timeout=180_000)
    rules_offered = [view.rule_box.itemText(i) for i in range(view.rule_box.count())]
    assert rules.ID_REPEATED in rules_offered and CLEAN in rules_offered
    assert view.model_box.count() > 3 and view.client_box.count() > 1
    view.set_filter(rule=rules.ID_REPEATED)
    shown = view.proxy.rowCount()
    assert 0 < shown < COUNT and all(rules.ID_REPEATED in v.rules() for v in view.proxy.shown())
    assert f"{shown:,} shown" == view.shown_label.text()
    model = view.model_box.itemText(1)
    view.set_filter(rule=rules.ID_REPEATED, model=model)
    assert all(v.model == model for v in view.proxy.shown()) and view.proxy.rowCount() <= shown
    view.set_filter()
    h = view.histogram()
    assert sum(h.incremental) == sum(1 for v in view.proxy.shown() for r in v.runs if r.ttfd_ms is not None) > 0
    assert view.incremental_curve.getData()[1] is not None and "p50 / p90 / p99" in view.percentiles.text()
    view.table.sortByColumn(VIOLATIONS, view.table.horizontalHeader().sortIndicatorOrder().DescendingOrder)
    counts = [int(view.proxy.index(r, VIOLATIONS).data() or 0) for r in range(view.proxy.rowCount())]
    assert counts == sorted(counts, reverse=True) and counts[0] > 0
    top = view.proxy.index(0, 0)
    path = top.data(PATH_ROLE)
    assert path.endswith(top.data()) and max(v.violation_count for v in view.proxy.shown()) == counts[0]
    view.table.doubleClicked.emit(top)
    window.session.flush()
    assert window.session.current is not None and window.session.current.source.path == path
    assert not window.shown_errors


def test_stopping_a_folder_ends_the_pool_and_says_so(window, tmp_path, qtbot):
    from callscope.benchmarks.corpus import generate

    big = tmp_path / "big"
    generate(big, 400, seed=1)
    runner = window.corpus.open_folder(str(big), jobs=2)
    view = window.corpus.view
    runner.batch.connect(window.corpus.stop)  # stop as soon as the first batch is back
    qtbot.waitUntil(lambda: view.done, timeout=180_000)
    assert runner.wait(10) and "stopped after" in view.header.text()
    assert 0 < view.model.rowCount() < 400


@pytest.mark.parametrize("low, high, size", [(1.2, 4.8, 530), (1.5, 2.3, 530), (0.0, 6.0, 200), (2.0, 2.9, 900)])
def test_the_log_time_axis_labels_never_crowd(qapp, low, high, size):
    from callscope.panes.corpus_view import LogTimeAxis

    axis = LogTimeAxis(orientation="bottom")
    [(_, values)] = axis.tickValues(low, high, size)
    px = [(v - low) / (high - low) * size for v in values]
    assert values and all(b - a >= LogTimeAxis.LABEL_PX * 0.6 for a, b in zip(px, px[1:])), values
    labels = axis.tickStrings(values, 1.0, 1.0)
    assert all(label.endswith(("ms", " s", "min", "h")) or " s" in label for label in labels), labels
    assert "e+" not in "".join(labels)


def test_a_folder_given_to_open_or_to_the_command_line_opens_as_a_corpus(window, folder, qtbot, tmp_path):
    assert window.open_path(str(folder)), "File > Open (or a recent entry) on a folder lists it, as Open folder does"
    view = window.corpus.view
    qtbot.waitUntil(lambda: view.done, timeout=180_000)
    assert view.model.rowCount() == COUNT and not window.shown_errors
    shot = tmp_path / "corpus.png"
    done = subprocess.run([sys.executable, "-m", "callscope", "gui", str(folder), "--screenshot", str(shot)],
                          env={**os.environ, "QT_QPA_PLATFORM": "offscreen"}, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert shot.stat().st_size > 10_000 and f"wrote {shot}" in done.stdout
