"""Every pane quotes the same two times as the headline badge: the first tool-call delta and the atomic emission.

When reasoning or content came before the call, the client view (and presenter
mode, which shows it large) once said "first delta at 0.08 s" and "all of it at
0.08 s" (the reasoning's first chunk) while the badge said 1.17 s against 2.46 s.
Here the badge, the client view, presenter mode, the TTFD plot, the compare view
and the CLI report of one recording are read as a user reads them, and each time
shown must be the engine's time, written to the precision it is shown with.
"""

from __future__ import annotations

import json
import re

import pytest

from callscope.cli import main
from callscope.engine.analysis.analyzer import headline_times
from callscope.engine.recordings.replay import load_analyses
from tests.support.gui_helpers import FIXTURES, HEADLINE, make_window

pytestmark = pytest.mark.gui

#: Recordings where something comes before the call (reasoning, content) and one where the call comes first.
RECORDINGS = [FIXTURES / "cases" / "reasoning_then_call.jsonl", FIXTURES / "formats" / "hermes_parallel.jsonl", HEADLINE]

_TIME = re.compile(r"(\d+(?:\.\d+)?) (ms|s)\b")


def _shown_ms(text: str) -> list[tuple[float, float]]:
    """Every time in ``text`` as (ms, half its last shown digit in ms): ``1.17 s`` -> (1170, 5)."""
    out = []
    for number, unit in _TIME.findall(text):
        decimals = len(number.split(".")[1]) if "." in number else 0
        scale = 1000.0 if unit == "s" else 1.0
        out.append((float(number) * scale, 0.5 * scale * 10.0 ** -decimals))
    return out


def _agrees(text: str, ms: float) -> bool:
    """``text`` shows exactly one time, and it is ``ms`` to the precision shown."""
    shown = _shown_ms(text)
    return len(shown) == 1 and abs(shown[0][0] - ms) <= shown[0][1] + 1e-6


def _after(text: str, words: str) -> str:
    """The part of ``text`` from ``words`` to the next separator (``·``, ``,`` or ``vs``)."""
    assert words in text, (words, text)
    return re.split(r" · |, | vs ", text.split(words, 1)[1])[0]


def _settle(window) -> None:
    from PySide6.QtWidgets import QApplication

    for _ in range(2):
        window.session.flush()
        QApplication.processEvents()


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_every_pane_quotes_the_badge_s_first_delta_and_atomic_times(qtbot, tmp_path, monkeypatch, capsys, path):
    (analysis,) = load_analyses(str(path))
    times = headline_times(analysis)
    first, atomic = times.first_delta, times.atomic
    assert first.ms is not None and atomic.ms is not None and first.ms < atomic.ms

    # the CLI report, as JSON and as text
    assert main(["replay", str(path), "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["ttfd"]["streaming"]["ms"] == first.ms and run["ttfd"]["atomic"]["ms"] == atomic.ms
    assert main(["replay", str(path)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("time to first tool-call delta"))
    assert _agrees(_after(line, "delta: "), first.ms) and _agrees(_after(line, " vs "), atomic.ms)

    window = make_window(qtbot, tmp_path, monkeypatch, path)
    state = window.session.state
    badge = window.source_bar.ttfd.text()
    assert _agrees(_after(badge, "first delta "), first.ms) and _agrees(_after(badge, " vs "), atomic.ms)

    # the client view just after the first delta (the atomic call not there yet), then at the end
    pane = window.client_view
    window.tabs.setCurrentWidget(pane)
    state.set_cursor_step(first.step)
    _settle(window)
    assert _agrees(_after(pane.streaming.status.text(), "first delta at "), first.ms), pane.streaming.status.text()
    assert not _shown_ms(pane.atomic.status.text()), pane.atomic.status.text()  # nothing of the call yet: no time
    state.end()
    _settle(window)
    assert _agrees(_after(pane.streaming.status.text(), "first delta at "), first.ms), pane.streaming.status.text()
    assert _agrees(_after(pane.atomic.status.text(), "whole call at "), atomic.ms), pane.atomic.status.text()

    # presenter mode shows the same panes large: the same texts, and the plot's headline
    window.presenter.enter(full_screen=False)
    _settle(window)
    try:
        assert _agrees(_after(pane.streaming.status.text(), "first delta at "), first.ms)
        assert _agrees(_after(pane.atomic.status.text(), "whole call at "), atomic.ms)
        headline = window.ttfd_view.label.text()
        assert _agrees(_after(headline, "first delta "), first.ms) and _agrees(_after(headline, " vs "), atomic.ms)
    finally:
        window.presenter.leave()

    # the TTFD plot: its headline and the label on each curve's first-delta marker
    window.tabs.setCurrentWidget(window.ttfd_view)
    _settle(window)
    import pyqtgraph as pg

    labels = [i.toPlainText() for i in window.ttfd_view.plot.getPlotItem().items if isinstance(i, pg.TextItem)]
    marks = [t for t in labels if t.startswith("first delta ")]
    assert len(marks) == 2, labels
    assert sum(_agrees(t, first.ms) for t in marks) == 1 and sum(_agrees(t, atomic.ms) for t in marks) == 1, marks

    # the compare view's summary of the shown policy
    window.tabs.setCurrentWidget(window.compare_view)
    _settle(window)
    summary = re.sub(r"<[^>]+>", "", window.compare_view.summary.text())
    assert _agrees(_after(summary, "first delta "), first.ms) and _agrees(_after(summary, " vs "), atomic.ms)
