"""A recording with one very long line opens at once: the text pane wraps such a line anywhere.

Qt looks for a word boundary in a line that has none in quadratic time: one
1 MiB line kept the window busy for over two minutes (``callscope bench
longline`` measures the open; here the pane's choice is checked, not a time).
"""

from __future__ import annotations

import pytest
from PySide6.QtGui import QTextOption

from callscope.engine.recordings.trace import TraceHeader, TraceWriter
from tests.support.gui_helpers import PARALLEL, make_window

pytestmark = pytest.mark.gui


def _long_line_trace(path, size: int = 64 * 1024):
    header = TraceHeader(source="text", format="hermes", unit="token")
    with TraceWriter(path, header) as writer:
        writer.write_step(1.0, b'<tool_call>\n{"name": "write_file", "arguments": {"content": "')
        for i in range(16):
            writer.write_step(2.0 + i, b"Q" * (size // 16))
        writer.write_step(20.0, b'"}}\n</tool_call>')
        writer.end("stop", 20.0)
    return path


def test_a_long_line_is_wrapped_anywhere_and_an_ordinary_text_at_words(qtbot, tmp_path, monkeypatch):
    window = make_window(qtbot, tmp_path, monkeypatch, _long_line_trace(tmp_path / "long.jsonl"))
    view = window.text_view
    assert view.wordWrapMode() == QTextOption.WrapMode.WrapAnywhere
    assert view.toPlainText().count("Q") == 64 * 1024  # all of it, nothing cut
    assert window.open_path(str(PARALLEL))
    window.session.flush()
    assert view.wordWrapMode() == QTextOption.WrapMode.WordWrap  # prose and JSON still break between words
    view.append_text("Q" * 6000)  # a live call growing one long line switches as it grows
    assert view.wordWrapMode() == QTextOption.WrapMode.WrapAnywhere
