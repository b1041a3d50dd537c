"""The window's tabbed panes, one declaration each: what builds the tabs, the View menu, ``gui --tab`` and the exports.

A :class:`PaneSpec` says a pane's id (``gui --tab ID``), its title (the tab and its View menu
entry, whose ``Alt+N`` key is its position), how to make it from the session, what File >
Export offers for it, and how much room it takes in presenter mode (0: not shown there).
The order of :func:`all_panes` is the order of the tabs, the menu and the keys, so nothing
else has to line up with it.

Adding a pane: write its widget (``app/panes/<name>.py``, a ``QWidget`` made from the
:class:`~callscope.models.session.InspectorSession`) and add one ``PaneSpec`` to
:data:`BUILTIN`; a pane defined elsewhere (a plug-in, a test) calls :func:`register_pane`.

This module imports no Qt: the CLI (``callscope gui --tab``) reads the ids without a display.
The factories and export writers import their widgets only when called.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Makes a pane's widget from the window's session (an ``InspectorSession``).
PaneFactory = Callable[[Any], Any]
#: Writes one export of a pane's widget to a path (``width``: a PNG plot's pixel width, or None).
ExportWriter = Callable[[Any, str, "int | None"], None]


@dataclass(frozen=True, slots=True)
class PaneExport:
    """One File > Export entry of a pane: ``write_export(what, path)`` brings the pane forward, then writes."""

    what: str  # the export's id (``write_export``'s first argument, ``gui --export-plot --plot``)
    label: str  # the menu entry (``&`` marks its key)
    pattern: str  # the save dialog's file filter
    suffix: str  # the default file name: ``<recording><suffix>``
    write: ExportWriter


@dataclass(frozen=True, slots=True)
class PaneSpec:
    """One tabbed pane of the window."""

    id: str  # ``gui --tab ID``; lowercase, no spaces
    title: str  # the tab's title and its View menu entry
    make: PaneFactory
    exports: tuple[PaneExport, ...] = ()
    presenter: int = 0  # its stretch in presenter mode's page (0: presenter mode does not show it)


def lazy(module: str, name: str) -> PaneFactory:
    """A factory that imports ``module`` only when the window is built (the CLI never loads Qt)."""

    def make(session: Any) -> Any:
        return getattr(importlib.import_module(module), name)(session)

    make.__qualname__ = f"lazy({module}:{name})"
    return make


def _template_view(session: Any) -> Any:
    """The Template tab shows a chat template, not the recording: it takes no session."""
    from callscope.panes.template_view import TemplateView

    return TemplateView()


def write_ttfd_plot(pane: Any, path: str, width: int | None) -> None:
    """The TTFD plot alone, with its legend, without buttons or cursor (.png or .svg by the path)."""
    from callscope.ui.exports import export_plot

    with pane.export_legend():
        export_plot(path, pane.plot.getPlotItem(), (pane.cursor_line,), **({} if width is None else {"width": width}))


def write_grab(pane: Any, path: str, width: int | None) -> None:
    """The pane as it is on screen, as a PNG."""
    from callscope.ui.exports import save_png

    save_png(path, pane)


PNG, SVG = "PNG image (*.png)", "SVG image (*.svg)"

#: The built-in panes, in tab order (``Alt+1``...).
BUILTIN: tuple[PaneSpec, ...] = (
    PaneSpec("deltas", "Emitted deltas", lazy("callscope.panes.chunks_view", "ChunksView")),
    PaneSpec("reconciliation", "Reconciliation", lazy("callscope.panes.reconcile_view", "ReconcileView")),
    PaneSpec("ttfd", "TTFD", lazy("callscope.panes.ttfd_view", "TtfdView"), presenter=2, exports=(
        PaneExport("ttfd", "TTFD &plot PNG…", PNG, ".ttfd.png", write_ttfd_plot),
        PaneExport("ttfd-svg", "TTFD plot SVG…", SVG, ".ttfd.svg", write_ttfd_plot),
    )),
    PaneSpec("compare", "Compare", lazy("callscope.panes.compare_view", "CompareView")),
    PaneSpec("client", "Client view", lazy("callscope.panes.client_view", "ClientViewPane"), presenter=3, exports=(
        PaneExport("client", "&Client view PNG…", PNG, ".client.png", write_grab),
    )),
    PaneSpec("template", "Template", _template_view),
)

_registered: list[PaneSpec] = []


def all_panes() -> tuple[PaneSpec, ...]:
    """The built-in panes, then the registered ones, in tab order."""
    return (*BUILTIN, *_registered)


def pane_ids() -> tuple[str, ...]:
    return tuple(spec.id for spec in all_panes())


def get_pane(pane_id: str) -> PaneSpec:
    for spec in all_panes():
        if spec.id == pane_id:
            return spec
    raise KeyError(f"unknown pane {pane_id!r}; known: {', '.join(pane_ids())}")


def pane_exports() -> dict[str, tuple[PaneSpec, PaneExport]]:
    """Export id -> (its pane, the export), for every pane's exports."""
    return {export.what: (spec, export) for spec in all_panes() for export in spec.exports}


def register_pane(spec: PaneSpec) -> PaneSpec:
    """Add a pane after the others (a window built afterwards shows it); its id must be new."""
    if spec.id in pane_ids():
        raise ValueError(f"a pane {spec.id!r} exists already")
    clash = set(pane_exports()) & {export.what for export in spec.exports}
    if clash:
        raise ValueError(f"export ids taken by another pane: {', '.join(sorted(clash))}")
    _registered.append(spec)
    return spec


def unregister_pane(pane_id: str) -> None:
    _registered[:] = [spec for spec in _registered if spec.id != pane_id]


__all__ = [
    "BUILTIN", "PaneExport", "PaneSpec", "all_panes", "get_pane", "lazy", "pane_exports", "pane_ids",
    "register_pane", "unregister_pane", "write_grab", "write_ttfd_plot",
]
