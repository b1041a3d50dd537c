"""During a live run every part of the window shows the same token, and the chunk ids are the run's own.

The transport once moved with the growth while the panes that show the cursor's
step followed a turn later (one token apart), the status line counted tokens
still queued, and the chunk JSON carried a placeholder completion id that
changed when the run ended.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.support.gui_helpers import ROOT, make_window

pytestmark = [pytest.mark.gui, pytest.mark.model]


def test_a_live_run_shows_one_token_everywhere_and_its_final_chunk_ids(qtbot, tmp_path, monkeypatch):
    from callscope.dialogs.run import RunValues
    from callscope.gui_main import live_runs_available

    if not live_runs_available():
        pytest.skip("the packaged model or llama-cpp-python is not installed")
    window = make_window(qtbot, tmp_path, monkeypatch)
    samples: list[tuple[int, str, str, str, str]] = []

    def drawn() -> None:  # every pane has drawn this growth (connected after the run's own listener)
        state = window.session.state
        if state is None or not state.live:
            return
        window.chunks_view._show_at_cursor()  # the deltas pane's rows are a stage of their own: bring it level
        samples.append((state.timebase.step(state.cursor), window.playback.position.text(),
                        window.cursor_label.text(), window.rate_label.text(), window.chunks_view.raw.toPlainText()))

    tools = (ROOT / "resources" / "tools" / "default.json").read_text()
    assert window.start_run(RunValues(None, "auto", "incremental", "Weather in Paris?", tools, "any", 40, 5))
    window.session.growthShown.connect(drawn)
    between: list[tuple[str, str]] = []  # a growth reached the lanes and the text, not yet the cursor's panes
    window.session.grew.connect(lambda _text: between.append((window.playback.position.text(), window.cursor_label.text())))
    moved: list[tuple[str, str, str, str]] = []  # the turn the cursor's panes moved in: all of them, together

    def cursor_moved(_index: int) -> None:
        state = window.session.state
        if state is not None and state.live and state.last:  # something arrived (before it, "starting…")
            moved.append((window.playback.position.text(), window.cursor_label.text(), window.rate_label.text(),
                          f"token {state.timebase.step(state.cursor)}"))

    window.session.cursorChanged.connect(cursor_moved)
    qtbot.waitUntil(lambda: not window.runs.running, timeout=180000)
    final = window.session.state.analysis
    assert len(samples) >= 3
    ids = set()
    for step, transport, cursor, rate, raw in samples:
        assert transport.startswith(f"token {step}  ·"), (step, transport)
        assert cursor == f"token {step}", (step, cursor)
        count = re.match(r"([\d,]+) tokens?", rate)
        assert count and int(count.group(1).replace(",", "")) == step, (step, rate)
        if raw:
            ids.add(json.loads(raw)["id"])
    assert ids == {final.identity.completion_id}, "the growing run's chunk ids are the finished run's"
    assert len(between) >= 3
    for transport, cursor in between:  # the transport moves with the panes that show the cursor, not before them
        assert transport.startswith(cursor + "  ·") or not cursor, (transport, cursor)
    assert len(moved) >= 3
    for transport, cursor, rate, step in moved:
        count = re.match(r"([\d,]+) tokens?", rate)
        assert transport.startswith(step + "  ·") and cursor == step, (transport, cursor, step)
        assert count and f"token {count.group(1)}" == step, (rate, step)


def test_the_start_up_demo_says_why_it_runs_in_the_emulated_format(qtbot, tmp_path, monkeypatch):
    from callscope.gui_main import live_runs_available, start_default_run

    if not live_runs_available():
        pytest.skip("the packaged model or llama-cpp-python is not installed")
    window = make_window(qtbot, tmp_path, monkeypatch)
    assert start_default_run(window)
    qtbot.waitUntil(lambda: window.runs.tokens_received >= 2, timeout=180000)
    details = window.source_bar.details.text()
    window.stop_run()
    qtbot.waitUntil(lambda: not window.runs.running, timeout=60000)
    assert "format emulated" in details and "emulated: the model's template has no tool support" in details, details
    assert "tools are taught in the prompt" in window.source_bar.details.text()  # the finished run says it too


def test_a_format_the_user_chose_needs_no_reason():
    from callscope.engine.analysis.analyzer import Analyzer, SourceInfo
    from callscope.engine.analysis.report import format_why
    from callscope.engine.formats import make_parser

    def analysis(reason: str):
        source = SourceInfo("model", "m.gguf", "qwen3_coder", "incremental", {"format_reason": reason})
        return Analyzer("run", source, "token", True, make_parser("qwen3_coder")).finish()

    assert format_why(analysis("chosen with --format")) is None  # no option name in the window, nothing to explain
    assert format_why(analysis("the model's template has no tool support, so tools are taught in the prompt "
                               "(callscope: emulated)")) == "the model's template has no tool support, so tools are taught in the prompt"
