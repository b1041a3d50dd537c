"""A call cut in the middle (a cancelled run, the token limit, an error) is never shown as a green "reconstructs".

The client got exactly what the server parsed, so the call does reconstruct, but
what both hold is half a call: its arguments stop inside a string. The calls
badge says the call was cut, in a warning tone, and the report says so too.
"""

from __future__ import annotations

import pytest

from callscope.cli import main
from callscope.engine.inspector.reconcile import calls_badge
from callscope.engine.recordings.replay import load_analyses
from tests.support.gui_helpers import FIXTURES, HEADLINE, make_window

TRUNCATED = FIXTURES / "cases" / "truncated_length.jsonl"


def _cut_recording(tmp_path, cause: str):
    lines = TRUNCATED.read_text(encoding="utf-8").splitlines()
    assert '"cause":"length"' in lines[-1]
    path = tmp_path / f"{cause}.jsonl"
    path.write_text("\n".join([*lines[:-1], lines[-1].replace('"length"', f'"{cause}"')]) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("cause", ["cancelled", "length", "error"])
def test_a_call_cut_mid_string_is_not_a_green_reconstructs(tmp_path, capsys, cause):
    path = _cut_recording(tmp_path, cause)
    (analysis,) = load_analyses(str(path))
    (call,) = analysis.calls
    assert call.cut and call.reconstructs  # the client has what the server parsed: half a call
    text, tone = calls_badge(analysis.calls)
    assert text == "1 call · cut mid-call" and tone == "warn"
    assert main(["replay", str(path)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("[0] write_file"))
    assert "cut mid-call" in line


def test_finished_calls_keep_their_green_badge():
    (analysis,) = load_analyses(str(HEADLINE))
    assert calls_badge(analysis.calls) == ("1 call · reconstructs", "ok")
    assert not analysis.calls[0].cut


@pytest.mark.gui
def test_the_window_s_calls_badge_for_a_cancelled_run(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, _cut_recording(tmp_path, "cancelled"))
    badge = window.source_bar.calls
    assert badge.text() == "1 call · cut mid-call" and badge.property("tone") == "warn"
