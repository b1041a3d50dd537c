"""Export a replay as an animation: frames grabbed from a widget as the cursor plays, written as APNG, GIF or MP4.

The frames follow :func:`~callscope.engine.inspector.animation.plan_frames`
(real timing at 1x); a pane's frames get a margin of the window's background
so its first line and edges are never cut at the frame's border. Writers take
frames one at a time, so a long replay never holds hundreds of full-size
images. A ``progress`` callback hears of every frame and may cancel (the
window shows a progress dialog, the command line a counter on a terminal):

* ``.png`` / ``.apng``: an animated PNG, assembled here from Qt's own PNG
  encoding of each frame (its ``IDAT`` data becomes the frame's ``fdAT``),
  streamed to the file; identical consecutive frames are merged into one
  longer frame. No extra package.
* ``.gif``: Pillow (a dependency), each frame reduced to a 256-colour palette
  as it is grabbed; Pillow merges identical frames itself.
* ``.mp4``: ``ffmpeg`` when it is on ``PATH`` (H.264, constant frame rate),
  frames piped as PNG; without it, one line saying so.
"""

from __future__ import annotations

import io
import shutil
import struct
import subprocess
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QApplication, QProgressDialog, QWidget

from callscope.engine.inspector.animation import FramePlan
from callscope.ui import theme
from callscope.ui.exports import ExportError

FORMATS = (".png", ".apng", ".gif", ".mp4")
#: Pixels of background around each frame: the view's own edges (its first line) never touch the border.
FRAME_MARGIN = 12
#: ``(frames done, frames in all) -> go on?``: hears of each frame written; False cancels the export.
Progress = Callable[[int, int], bool]


class ExportCancelled(ExportError):
    """The user cancelled the export; nothing is left behind."""
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def animation_kind(path: str) -> str:
    """``apng``, ``gif`` or ``mp4`` from the file name; anything else is an :class:`ExportError`."""
    suffix = Path(path).suffix.lower()
    if suffix in (".png", ".apng"):
        return "apng"
    if suffix in (".gif", ".mp4"):
        return suffix[1:]
    raise ExportError(f"cannot write {path}: an animation is .png (animated PNG), .apng, .gif or .mp4")


VIEWS = ("client", "presenter", "window")


def export_replay(window, path: str, view: str = "client", fps: float = 10.0, speed: float = 1.0,
                  progress: Progress | None = None) -> int:
    """The window's trace replayed from the start as frames of ``view``, written to ``path``; frames written.

    ``client`` is the client view pane (its tab brought forward), ``presenter``
    presenter mode at the window's size (entered for the frames, left after),
    ``window`` the whole window. Playback pauses and the cursor comes back to
    where it was. Raises :class:`ExportError` (a bad name or view, no ffmpeg for MP4).
    """
    from callscope.engine.inspector.animation import AnimationError, plan_frames

    state = window.session.state
    if state is None or state.live:
        raise ExportError("nothing to animate: open a recording (or wait for the live run to end)")
    if view not in VIEWS:
        raise ExportError(f"cannot animate the {view!r} view; views: {', '.join(VIEWS)}")
    animation_kind(path)  # a bad name fails before any frame is grabbed
    try:
        plan = plan_frames(state.timebase, fps, speed)
    except AnimationError as exc:
        raise ExportError(str(exc)) from None
    window.driver.pause()
    was_at = state.cursor
    presenting = view == "presenter" and not window.presenter.active
    if presenting:
        window.presenter.enter(full_screen=False)
    target = {"client": window.client_view, "presenter": window.presenter.page, "window": window}[view]
    if view == "client" and window.tabs.indexOf(target) >= 0:
        window.tabs.setCurrentWidget(target)

    def move(index: int) -> None:
        state.set_cursor(index)
        window.session.flush()

    try:
        margin = FRAME_MARGIN if view == "client" else 0  # a pane has no border of its own; a window has
        return write_animation(path, grab_frames(target, plan, move, progress, margin), plan)
    finally:
        if presenting:
            window.presenter.leave()
        state.set_cursor(was_at)
        window.session.flush()


def grab_frames(widget: QWidget, plan: FramePlan, move: Callable[[int], None],
                progress: Progress | None = None, margin: int = FRAME_MARGIN) -> Iterator[QImage]:
    """Each frame of ``plan``: ``move(index)`` puts the cursor there, then ``widget`` is grabbed (with ``margin``)."""
    app = QApplication.instance()
    total = len(plan.indices)
    for done, index in enumerate(plan.indices, 1):
        move(index)
        if app is not None:
            app.processEvents()
        image = widget.grab().toImage()
        yield with_margin(image, margin) if margin else image.convertToFormat(QImage.Format.Format_RGB32)
        if progress is not None and not progress(done, total):
            raise ExportCancelled("export cancelled")


def with_margin(image: QImage, margin: int = FRAME_MARGIN) -> QImage:
    """``image`` on the window's background, ``margin`` pixels from every border (RGB32, as the writers take)."""
    framed = QImage(image.width() + 2 * margin, image.height() + 2 * margin, QImage.Format.Format_RGB32)
    framed.setDevicePixelRatio(1.0)
    framed.fill(QColor(theme.BACKGROUND))
    painter = QPainter(framed)
    try:
        image.setDevicePixelRatio(1.0)
        painter.drawImage(QPoint(margin, margin), image)
    finally:
        painter.end()
    return framed


def write_animation(path: str, frames: Iterable[QImage], plan: FramePlan) -> int:
    """Write ``frames`` (one per ``plan`` tick) to ``path`` in the format its name says; returns frames written.

    A cancelled or failed export removes the partial file."""
    kind = animation_kind(path)
    try:
        if kind == "apng":
            return _write_apng(path, frames, plan.frame_ms)
        if kind == "gif":
            return _write_gif(path, frames, plan.frame_ms)
        return _write_mp4(path, frames, plan.fps)
    except OSError as exc:
        Path(path).unlink(missing_ok=True)
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
    except ExportError:
        Path(path).unlink(missing_ok=True)
        raise


def dialog_progress(parent: QWidget, path: str) -> tuple[Progress, QProgressDialog]:
    """A window-modal progress dialog for an export (Cancel stops it) and the callback that drives it."""
    dialog = QProgressDialog(f"Writing {Path(path).name}…", "Cancel", 0, 1, parent)
    dialog.setWindowTitle("Export animation")
    dialog.setWindowModality(Qt.WindowModality.WindowModal)
    dialog.setMinimumDuration(0)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)

    def progress(done: int, total: int) -> bool:
        dialog.setMaximum(total)
        dialog.setValue(done)
        dialog.setLabelText(f"Writing {Path(path).name}: frame {done:,} of {total:,}")
        return not dialog.wasCanceled()

    return progress, dialog


def terminal_progress(path: str) -> Progress | None:
    """A frame counter on stderr when it is a terminal (a pipe or a log gets only the final line)."""
    import sys

    if not sys.stderr.isatty():
        return None

    def progress(done: int, total: int) -> bool:
        end = "\n" if done == total else ""
        sys.stderr.write(f"\rwriting {Path(path).name}: frame {done:,}/{total:,}{end}")
        sys.stderr.flush()
        return True

    return progress


# ------------------------------------------------------------------ APNG


def png_bytes(image: QImage) -> bytes:
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise ExportError("a frame could not be encoded as PNG")
    buffer.close()
    return bytes(data.data())


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """``(type, body)`` of every chunk of a PNG file."""
    if not data.startswith(_PNG_SIGNATURE):
        raise ExportError("a frame is not a PNG image")
    chunks = []
    pos = len(_PNG_SIGNATURE)
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        chunks.append((kind, data[pos + 8 : pos + 8 + length]))
        pos += 12 + length
    return chunks


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


class ApngWriter:
    """An animated PNG written frame by frame; every frame the full image, same size and pixel format.

    ``acTL`` needs the frame count up front: it is written as 0 and patched at :meth:`close`.
    """

    def __init__(self, stream: io.BufferedIOBase) -> None:
        self.stream = stream
        self.sequence = 0
        self.frames = 0
        self.header: bytes | None = None
        self._actl_at = 0
        self._pending: tuple[list[bytes], float] | None = None  # the last frame, written once its delay is known

    def add(self, png: bytes, delay_ms: float) -> None:
        chunks = png_chunks(png)
        header = next((body for kind, body in chunks if kind == b"IHDR"), None)
        if header is None:
            raise ExportError("a frame has no PNG header")
        data = [body for kind, body in chunks if kind == b"IDAT"]
        if self.header is None:
            self.header = header
            self.stream.write(_PNG_SIGNATURE + _chunk(b"IHDR", header))
            self._actl_at = self.stream.tell()
            self.stream.write(_chunk(b"acTL", struct.pack(">II", 0, 0)))
        elif header != self.header:
            raise ExportError("the frames changed size or pixel format mid-animation")
        if self._pending is not None and self._pending[0] == data:
            self._pending = (data, self._pending[1] + delay_ms)  # the same picture again: one longer frame
            return
        self._flush()
        self._pending = (data, delay_ms)

    def _flush(self) -> None:
        if self._pending is None:
            return
        data, delay = self._pending
        assert self.header is not None
        width, height = struct.unpack(">II", self.header[:8])
        delay_ms = max(1, min(65535, round(delay)))
        self.stream.write(_chunk(b"fcTL", struct.pack(">IIIIIHHBB", self.sequence, width, height, 0, 0,
                                                      delay_ms, 1000, 0, 0)))
        self.sequence += 1
        for body in data:
            if self.frames == 0:
                self.stream.write(_chunk(b"IDAT", body))  # the first frame is the default image too
            else:
                self.stream.write(_chunk(b"fdAT", struct.pack(">I", self.sequence) + body))
                self.sequence += 1
        self.frames += 1
        self._pending = None

    def close(self) -> int:
        self._flush()
        if self.header is None:
            raise ExportError("no frame to write")
        self.stream.write(_chunk(b"IEND", b""))
        end = self.stream.tell()
        self.stream.seek(self._actl_at)
        self.stream.write(_chunk(b"acTL", struct.pack(">II", self.frames, 0)))  # 0 plays: loop forever
        self.stream.seek(end)
        return self.frames


def _write_apng(path: str, frames: Iterable[QImage], frame_ms: float) -> int:
    with open(path, "wb") as stream:
        writer = ApngWriter(stream)
        for image in frames:
            writer.add(png_bytes(image), frame_ms)
        return writer.close()


# ------------------------------------------------------------------ GIF (Pillow)


def _write_gif(path: str, frames: Iterable[QImage], frame_ms: float) -> int:
    try:
        from PIL import Image
    except ImportError:
        raise ExportError(f"cannot write {path}: GIF export needs Pillow (pip install pillow); "
                          "an animated .png needs nothing") from None
    images = []
    for image in frames:
        rgb = Image.open(io.BytesIO(png_bytes(image))).convert("RGB")
        images.append(rgb.quantize(colors=255, method=Image.Quantize.MEDIANCUT))
    if not images:
        raise ExportError(f"cannot write {path}: no frame to write")
    images[0].save(path, save_all=True, append_images=images[1:], duration=round(frame_ms), loop=0,
                   optimize=False, disposal=1)
    return len(images)


# ------------------------------------------------------------------ MP4 (ffmpeg)


def ffmpeg_path() -> str | None:
    return shutil.which("ffmpeg")


def _write_mp4(path: str, frames: Iterable[QImage], fps: float) -> int:
    ffmpeg = ffmpeg_path()
    if ffmpeg is None:
        raise ExportError(f"cannot write {path}: MP4 export needs ffmpeg on PATH (apt-get install ffmpeg); "
                          "write an animated .png or a .gif instead")
    command = [ffmpeg, "-y", "-loglevel", "error", "-f", "image2pipe", "-framerate", f"{fps:.4f}", "-c:v", "png",
               "-i", "-", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2", path]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    count = 0
    assert process.stdin is not None
    try:
        for image in frames:
            process.stdin.write(png_bytes(image))
            count += 1
    except BrokenPipeError:
        pass  # ffmpeg quit early: its own message says why
    except BaseException:
        process.kill()
        process.communicate()
        raise
    _, err = process.communicate()  # closes its input: ffmpeg finishes the file
    if process.returncode != 0:
        reason = (err or b"").decode("utf-8", "replace").strip().splitlines()
        raise ExportError(f"cannot write {path}: ffmpeg failed ({reason[-1] if reason else process.returncode})")
    return count
