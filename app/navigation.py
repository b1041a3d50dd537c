"""The window's debugger keys: jump by parse event, violation, revision or opened call, bookmarks, run to
the next violation, the policy menu, and the timeline's fit and zoom.

Every action is a window action with its shortcut, so the ``?`` list (read from
the window's actions) always has them. The jumps are computed by the Qt-free
:class:`~callscope.engine.inspector.state.InspectorState` (``next_mark``); this
module only binds keys and menus to it. A jump that finds nothing says so in
the status bar instead of doing nothing silently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu

from callscope.engine.analysis.units import step_noun
from callscope.engine.inspector.state import BOOKMARK, CALL, EVENT, REVISION, VIOLATION
from callscope.engine.policies import POLICY_IDS

if TYPE_CHECKING:
    from callscope.main_window import MainWindow

#: (mark kind, what the menu calls it, the key forward; Shift+key goes back)
JUMPS = (
    (EVENT, "parse event", "E"),
    (VIOLATION, "violation", "V"),
    (REVISION, "revision", "X"),
    (CALL, "call opened", "C"),
    (BOOKMARK, "bookmark", "N"),
)
#: What the status bar says when a jump finds nothing that way.
NOUNS = {EVENT: "parse event", VIOLATION: "violation", REVISION: "revision", CALL: "opened call", BOOKMARK: "bookmark"}


class DebuggerActions(QObject):
    """Builds the debugger's actions into the window's Playback and View menus and a Policy menu."""

    def __init__(self, window: MainWindow, play: QMenu, view: QMenu, before: QAction) -> None:
        super().__init__(window)
        self.window = window
        play.addSeparator()
        for kind, noun, key in JUMPS:
            window._action(play, f"Next {noun}", lambda _c=False, k=kind: self.jump(k, 1), [key])
            window._action(play, f"Previous {noun}", lambda _c=False, k=kind: self.jump(k, -1), [f"Shift+{key}"])
        play.addSeparator()
        self.bookmark_action = window._action(play, "Toggle bookmark at the cursor", self.toggle_bookmark, ["B"])
        self.run_to_action = window._action(play, "Run to the next violation", self.run_to_violation, ["F8"],
                                            "Play from the cursor and stop at the next violation")
        view.addSeparator()
        timeline = window.timeline
        self.fit_action = window._action(view, "Fit the timeline", timeline.fit, ["F"])
        self.zoom_action = window._action(view, "Zoom the timeline to the cursor", timeline.zoom_to_cursor, ["Z"])
        window._action(view, "Zoom in", lambda: timeline.zoom(0.5), ["+", "="])
        window._action(view, "Zoom out", lambda: timeline.zoom(2.0), ["-"])
        timeline.extra_actions = [self.bookmark_action, self.run_to_action]
        self.policy_menu = QMenu("P&olicy", window)
        window.menuBar().insertMenu(before, self.policy_menu)
        self.policy_group = QActionGroup(self)
        self.policy_actions: dict[str, QAction] = {}
        for number, policy in enumerate(POLICY_IDS, 1):
            action = window._action(self.policy_menu, f"Analyse under {policy}", lambda _c=False, p=policy: window.set_policy(p),
                                    [f"Ctrl+{number}"], f"Re-analyse the shown source under the {policy} policy")
            action.setCheckable(True)
            self.policy_group.addAction(action)
            self.policy_actions[policy] = action
        window.session.analysisChanged.connect(self._show_policy)

    def jump(self, kind: str, direction: int) -> bool:
        state = self.window.session.state
        if state is None:
            return False
        moved = state.next_mark(kind, direction)
        if not moved:
            where = "after" if direction > 0 else "before"
            self.window.statusBar().showMessage(f"no {NOUNS[kind]} {where} {step_noun(state.analysis)} {state.cursor_step}",
                                                4000)
        return moved

    def toggle_bookmark(self) -> None:
        state = self.window.session.state
        if state is not None:
            added = state.toggle_bookmark()
            what = "bookmarked" if added else "bookmark removed at"
            self.window.statusBar().showMessage(f"{what} {step_noun(state.analysis)} {state.cursor_step}", 3000)

    def run_to_violation(self) -> bool:
        """Play from the cursor (at the chosen speed) and stop on the next violation."""
        state = self.window.session.state
        if state is None:
            return False
        steps = [s for s in state.mark_steps(VIOLATION) if s > state.cursor_step]
        if not steps:
            self.window.statusBar().showMessage(f"no violation after {step_noun(state.analysis)} {state.cursor_step}", 4000)
            return False
        return self.window.driver.run_to(steps[0])

    def _show_policy(self) -> None:
        """Check the shown analysis' policy; a capture (the server decided) offers none to choose."""
        state = self.window.session.state
        shown = state.analysis.source.policy if state is not None else None
        for policy, action in self.policy_actions.items():
            action.setChecked(policy == shown)
        ours = shown in POLICY_IDS
        self.policy_menu.setEnabled(ours)
        self.policy_menu.setToolTip("" if ours else "A capture shows what the server sent: there is no policy to change")
