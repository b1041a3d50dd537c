"""What File ▸ Export writes: the report JSON (same as the CLI), the SSE transcript, PNGs and plots, traces.

A plot is exported as the plot alone (drawn again from its scene), at a
chosen width or as SVG, without the live view's cursor line; a window or pane is a
grab of the widget. Replay animations are :mod:`callscope.ui.animation`'s.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from PySide6.QtCore import QRectF
from PySide6.QtGui import QGuiApplication, QImage, QPainter, QPen
from PySide6.QtWidgets import QGraphicsItem, QWidget

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.analysis.report import report_json
from callscope.engine.core.json_text import dumps
from callscope.engine.recordings.sse_dump import sse_transcript
from callscope.engine.recordings.trace_io import write_analysis_trace
from callscope.ui import theme


class ExportError(Exception):
    """A file could not be written; the message says which and why."""


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_report(path: str, analyses: list[Analysis]) -> None:
    """``callscope.report/1`` with every chunk, exactly what ``callscope replay --json --chunks`` prints."""
    try:  # never NaN, whatever the depth: the file must be what a JSON reader accepts
        text = dumps(report_json(analyses, include_chunks=True), ensure_ascii=False, indent=2, allow_nan=False)
    except ValueError as exc:
        raise ExportError(f"cannot write {path}: the report is not valid JSON ({exc})") from None
    _write(path, text + "\n")


def write_sse(path: str, analysis: Analysis) -> None:
    _write(path, sse_transcript(analysis))


def save_png(path: str, widget: QWidget) -> None:
    if not widget.grab().save(path, "PNG"):
        raise ExportError(f"cannot write {path}: the image could not be saved")


#: Width of a plot exported as PNG unless asked otherwise: print and slide resolution, not the pane's.
PLOT_EXPORT_WIDTH = 2400


def export_plot(path: str, plot_item, hide: tuple = (), width: int = PLOT_EXPORT_WIDTH) -> None:
    """A pyqtgraph plot alone (no buttons around it), as a PNG ``width`` pixels wide or as SVG.

    The PNG is the plot drawn again at a device pixel ratio of ``width`` over its
    on-screen width, so lines, markers and text all scale (pyqtgraph's cosmetic
    pens would stay one screen pixel thin under a plain scale). The SVG comes
    from Qt's own SVG generator (vector text and paths). ``hide`` are items drawn
    only for the live view (the cursor line, a hover readout): left out of the
    file, shown again after.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ExportError(f"cannot write {path}: a plot is exported as .png or .svg")
    if not 16 <= width <= 20000:
        raise ExportError(f"cannot write {path}: the width must be 16 to 20,000 pixels, not {width}")
    scene = plot_item.scene()
    source = plot_item.sceneBoundingRect()
    if scene is None or source.width() < 1 or source.height() < 1:
        raise ExportError(f"cannot write {path}: the plot is not laid out yet")
    shown = [item for item in hide if item.isVisible()]
    for item in shown:
        item.setVisible(False)
    try:
        with _items_uncached(scene):
            ok = _render_svg(path, scene, source) if suffix == ".svg" else _render_png(path, scene, source, width)
    finally:
        for item in shown:
            item.setVisible(True)
    if not ok:
        raise ExportError(f"cannot write {path}: the image could not be saved")


def _render_png(path: str, scene, source: QRectF, width: int) -> bool:
    ratio = width / source.width()
    image = QImage(round(source.width() * ratio), round(source.height() * ratio), QImage.Format.Format_ARGB32)
    image.setDevicePixelRatio(ratio)
    image.fill(theme.qcolor(theme.PANEL))
    painter = QPainter(image)
    painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
    with _pens_scaled(scene, ratio):
        scene.render(painter, QRectF(0, 0, source.width(), source.height()), source)
    painter.end()
    return image.save(path, "PNG")


@contextlib.contextmanager
def _items_uncached(scene) -> Iterator[None]:
    """Items kept as pixmaps for fast repaints (axes, settled lane marks) are drawn afresh for the file:
    from their cache they would land in an SVG as bitmaps (no vector text) and in a large PNG as blurred
    screen-resolution pixels."""
    none = QGraphicsItem.CacheMode.NoCache
    cached = [(item, item.cacheMode()) for item in scene.items() if item.cacheMode() != none]
    for item, _mode in cached:
        item.setCacheMode(none)
    try:
        yield
    finally:
        for item, mode in cached:
            item.setCacheMode(mode)


@contextlib.contextmanager
def _pens_scaled(scene, ratio: float) -> Iterator[None]:
    """Curves and marker lines drawn ``ratio`` times wider for the duration.

    pyqtgraph's pens are cosmetic (their width is in device pixels, whatever the
    scale or pixel ratio), so at 2,400 pixels a curve would stay as thin as on
    screen while the text around it grew.
    """
    import pyqtgraph as pg

    changed = []
    for item in scene.items():
        if isinstance(item, pg.PlotDataItem):  # it owns its curve's pen (and sets it again on any update)
            pen = item.opts.get("pen")
        elif isinstance(item, pg.PlotCurveItem) and not isinstance(item.parentItem(), pg.PlotDataItem):
            pen = item.opts.get("pen")
        elif isinstance(item, pg.InfiniteLine):
            pen = item.pen
        else:
            continue
        if not isinstance(pen, QPen):
            continue
        wider = QPen(pen)
        wider.setWidthF(max(1.0, pen.widthF()) * ratio)
        changed.append((item, pen))
        item.setPen(wider)
    try:
        yield
    finally:
        for item, pen in changed:
            item.setPen(pen)


def _render_svg(path: str, scene, source: QRectF) -> bool:
    from PySide6.QtSvg import QSvgGenerator

    generator = QSvgGenerator()
    generator.setFileName(path)
    generator.setSize(source.size().toSize())
    generator.setViewBox(QRectF(0, 0, source.width(), source.height()))
    generator.setTitle("callscope plot")
    # pyqtgraph's axes replay QPictures recorded at the screen's resolution: the SVG must have the same
    # (at the generator's default 72 dpi the tick labels shrink by 72/96 towards the corner)
    screen = QGuiApplication.primaryScreen()
    generator.setResolution(round(screen.logicalDotsPerInch()) if screen is not None else 96)
    painter = QPainter()
    if not painter.begin(generator):
        return False
    painter.fillRect(QRectF(0, 0, source.width(), source.height()), theme.qcolor(theme.PANEL))
    scene.render(painter, QRectF(0, 0, source.width(), source.height()), source)
    painter.end()
    return Path(path).is_file() and Path(path).stat().st_size > 0


def save_trace(path: str, analysis: Analysis, recorded: str | None = None, tools=None) -> None:
    """A live run's own recording when there is one (full request header), else the analysis' steps."""
    try:
        if recorded and Path(recorded).is_file():
            shutil.copyfile(recorded, path)
            return
        write_analysis_trace(path, analysis, tools=tools, description=f"saved from the callscope inspector: {analysis.name}")
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # TraceError: a parse-carrying run has no bytes to record
        raise ExportError(str(exc)) from None
