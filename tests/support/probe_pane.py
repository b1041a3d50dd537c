"""A test-only pane, added as docs/extending.md says: one widget and one ``PaneSpec``.

It shows the cursor's step, so a test can see that it follows the one session like every pane,
and it offers one export (a text file of what it shows), so File > Export and
``write_export`` are exercised through the declaration alone.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from callscope.models.session import InspectorSession
from callscope.panes.specs import PaneExport, PaneSpec


class ProbePane(QWidget):
    """The step at the cursor, as text."""

    def __init__(self, session: InspectorSession, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.label = QLabel("no source")
        QVBoxLayout(self).addWidget(self.label)
        session.cursorChanged.connect(self._cursor)

    def _cursor(self, _cursor: int) -> None:
        state = self.session.state
        if state is not None:
            self.label.setText(f"step {state.timebase.step(state.cursor)}")


def write_probe_text(pane: ProbePane, path: str, width: int | None) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(pane.label.text() + "\n")


SPEC = PaneSpec("probe", "Probe", ProbePane, exports=(
    PaneExport("probe-text", "Probe &text…", "Text (*.txt)", ".probe.txt", write_probe_text),
))
