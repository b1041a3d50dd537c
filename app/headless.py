"""`callscope gui FILE --screenshot/--export-*`: render the window offscreen, write the files, exit.

One job may write several files from one load: a screenshot of the window
(or of presenter mode), a replay animation, a plot at high resolution. Each
is made exactly as the window's own menu makes it (File > Export), so a test
or a script gets what a user gets. Errors are one line on stderr, exit 2.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from PySide6.QtWidgets import QApplication

from callscope.ui.exports import PLOT_EXPORT_WIDTH, ExportError

SCREENSHOT_SIZE = (1400, 900)


@dataclass(slots=True)
class HeadlessJob:
    """What to render: every field optional except that at least one output is set."""

    screenshot: str | None = None
    at: int | None = None  # the cursor's step for the screenshot
    tab: str | None = None  # a pane id (callscope.panes.specs)
    size: tuple[int, int] = SCREENSHOT_SIZE
    presenter: bool = False  # the screenshot shows presenter mode
    animation: str | None = None
    animation_view: str = "client"
    fps: float = 10.0
    speed: float = 1.0
    plot: str | None = None  # output file of a plot alone
    plot_kind: str = "ttfd"  # ttfd | timeline
    plot_width: int = PLOT_EXPORT_WIDTH


def settle(app: QApplication, window) -> None:
    """Let layouts and plots settle (three turns: splitters, then plots' auto-range, then labels)."""
    for _ in range(3):
        window.session.flush()
        app.processEvents()


def run_job(app: QApplication, window, job: HeadlessJob) -> int:
    """Write every output of ``job`` from the loaded ``window``, close it; 0, or 2 with one line on stderr."""
    try:
        written = _write_all(app, window, job)
    except ExportError as exc:
        print(f"callscope gui: {exc}", file=sys.stderr)
        return 2
    finally:
        if window.presenter.active:
            window.presenter.leave()
        window.close()
    for line in written:
        print(line)
    return 0


def _write_all(app: QApplication, window, job: HeadlessJob) -> list[str]:
    state = window.session.state
    written = []
    if job.tab is not None:
        window.show_tab(job.tab)
    settle(app, window)
    if job.plot:
        what = job.plot_kind if job.plot.lower().endswith(".png") else f"{job.plot_kind}-svg"
        window.write_export(what, job.plot, job.plot_width)
        written.append(f"wrote {job.plot}")
    if job.animation:
        from callscope.ui.animation import terminal_progress

        progress = terminal_progress(job.animation) or (lambda _done, _total: True)
        frames = window.export_animation(job.animation, job.animation_view, job.fps, job.speed, progress)
        written.append(f"wrote {job.animation} ({frames} frames)")
    if job.screenshot:
        if job.at is not None and state is not None:
            last = state.timebase.step(state.last)
            if not 0 <= job.at <= last:  # clamped silently, the picture would not show what was asked for
                raise ExportError(f"--at {job.at} is out of range: {state.analysis.name} has "
                                  f"{state.analysis.unit}s 0 to {last}")
            state.set_cursor_step(job.at)
        if job.presenter:
            window.presenter.enter(full_screen=False)
        settle(app, window)
        if not window.grab().save(job.screenshot, "PNG"):
            raise ExportError(f"cannot write {job.screenshot}")
        written.append(f"wrote {job.screenshot}")
    return written
