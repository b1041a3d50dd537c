"""Exporting the replay: progress for every frame (Cancel removes the file), and the first line never at the border."""

from __future__ import annotations

import pytest

from tests.support.gui_helpers import FIXTURES, make_window

pytestmark = pytest.mark.gui
REASONING = FIXTURES / "cases" / "reasoning_then_call.jsonl"


def test_the_gif_export_reports_progress_and_keeps_a_margin(qtbot, tmp_path, monkeypatch):
    from PIL import Image

    from callscope.ui import theme
    from callscope.ui.animation import FRAME_MARGIN

    window = make_window(qtbot, tmp_path, monkeypatch, REASONING)
    heard: list[tuple[int, int]] = []
    path = tmp_path / "replay.gif"
    frames = window.export_animation(str(path), "client", fps=5, progress=lambda d, t: heard.append((d, t)) or True)
    total = heard[-1][1]
    assert heard == [(n, total) for n in range(1, total + 1)] and total >= frames > 5
    with Image.open(path) as gif:
        gif.seek(gif.n_frames - 1)
        rgb = gif.convert("RGB")
    width, height = rgb.size
    assert (width, height) == (window.client_view.width() + 2 * FRAME_MARGIN, window.client_view.height() + 2 * FRAME_MARGIN)
    background = tuple(int(theme.BACKGROUND[i:i + 2], 16) for i in (1, 3, 5))
    border = [rgb.getpixel((x, y)) for y in range(FRAME_MARGIN - 2) for x in range(0, width, 7)]
    border += [rgb.getpixel((x, y)) for x in range(FRAME_MARGIN - 2) for y in range(0, height, 7)]
    near = sum(1 for p in border if max(abs(a - b) for a, b in zip(p, background)) <= 12)
    assert near == len(border), "the headline's first line reaches into the frame's border"


def test_cancelling_the_export_leaves_no_file(qtbot, tmp_path, monkeypatch):
    from callscope.ui.animation import ExportCancelled

    window = make_window(qtbot, tmp_path, monkeypatch, REASONING)
    path = tmp_path / "replay.gif"
    with pytest.raises(ExportCancelled):
        window.export_animation(str(path), "client", fps=5, progress=lambda done, _total: done < 3)
    assert not path.exists()
    assert window.export_to("animation", str(path)) and path.exists()  # the menu's way: a progress dialog, no answer needed
