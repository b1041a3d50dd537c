"""File > Fixtures and File > Open: the shipped recordings within reach of the window, by name or from a menu.

File > Fixtures lists the fixture library by folder (:mod:`callscope.engine.inspector.fixture_library`),
each entry with its own description as its tooltip and status tip. The Open
dialog offers every kind of file ``replay`` reads (traces, byte-prefix
fixtures, raw SSE dumps, HAR files, mitmproxy flows), has the library in its
sidebar, and accepts a shipped name typed into it (``headline_701_tokens``,
``formats/hermes_single``) as the command line does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QUrl
from PySide6.QtWidgets import QFileDialog, QMenu

from callscope.engine.core.shipped import fixtures_dir, resolve_recording
from callscope.engine.inspector.fixture_library import FOLDERS, by_folder, library
from callscope.engine.recordings.replay import RECORDING_KINDS

if TYPE_CHECKING:
    from callscope.main_window import MainWindow


def open_filters() -> list[str]:
    """The Open dialog's name filters: every kind ``replay`` reads, together first, then each alone, then all files."""
    every = sorted({f"*{suffix}" for _, suffixes in RECORDING_KINDS for suffix in suffixes})
    alone = [f"{label} ({' '.join('*' + s for s in suffixes)})" for label, suffixes in RECORDING_KINDS]
    return [f"Recordings ({' '.join(every)})", *alone, "All files (*)"]


def resolve_typed(path: str, directory: str) -> str:
    """A file the Open dialog returned, or the shipped fixture it names when no such file exists.

    The dialog joins what was typed to its folder (``/home/u/headline_701_tokens``):
    the name is tried as typed relative to that folder, then as its last part.
    """
    if not path or Path(path).exists():
        return path
    candidates = [os.path.relpath(path, directory) if directory else path, Path(path).name]
    for name in candidates:
        found = resolve_recording(name)
        if found != name:
            return found
    return path


#: Library folders with a menu of their own (File > Quirks library), left out of File > Fixtures.
OWN_MENUS = ("quirks",)


class FixturesMenu(QObject):
    """File > Fixtures: one submenu per library folder, one entry per shipped recording."""

    def __init__(self, window: MainWindow, file_menu: QMenu) -> None:
        super().__init__(window)
        self.window = window
        self.menu = file_menu.addMenu("&Fixtures")
        self.menu.setToolTipsVisible(True)
        self.actions = []
        for folder, entries in by_folder(library()).items():
            if folder in OWN_MENUS:
                continue
            target = self.menu
            if folder:
                about = FOLDERS.get(folder, "")
                target = self.menu.addMenu(f"{folder}  —  {about}" if about else folder)
                target.setToolTipsVisible(True)
            for entry in entries:
                action = target.addAction(entry.name)
                tip = entry.description or str(entry.path.name)
                action.setToolTip(tip)
                action.setStatusTip(tip.replace("\n", "; "))
                action.setData(str(entry.path))
                action.triggered.connect(lambda _c=False, p=str(entry.path): window.open_path(p))
                self.actions.append(action)


def open_dialog(window: MainWindow) -> QFileDialog:
    """The Open dialog (not yet shown): every readable kind, the fixture library in the sidebar, names accepted."""
    dialog = QFileDialog(window, "Open a recording", str(Path.cwd()))
    dialog.setFileMode(QFileDialog.FileMode.AnyFile)  # a shipped name typed in is no file, yet opens
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptOpen)
    dialog.setNameFilters(open_filters())
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)  # the same dialog (and sidebar) everywhere
    dialog.setSidebarUrls([*dialog.sidebarUrls(), QUrl.fromLocalFile(str(fixtures_dir()))])
    dialog.setLabelText(QFileDialog.DialogLabel.FileName, "File or shipped name:")
    return dialog


def chosen_path(dialog: QFileDialog) -> str:
    """What the accepted dialog names: a file, or the shipped recording typed into it."""
    files = dialog.selectedFiles()
    return resolve_typed(files[0], dialog.directory().absolutePath()) if files else ""
