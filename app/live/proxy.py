"""The Proxy source: a recording proxy started from the window (or a session folder watched), its turns live.

:class:`ProxyController` either runs a :class:`~callscope.engine.capture.proxy.ProxyServer`
on the Qt event loop through qasync (no thread: the proxy is asyncio, and its
observer calls arrive on the GUI thread), or watches a session folder a
``callscope proxy --record-dir`` writes (:class:`~callscope.engine.inspector.proxy_turns.SessionReader`,
polled). Either way the turns are a :class:`~callscope.engine.inspector.proxy_turns.TurnList`
the pane (:mod:`callscope.panes.proxy_view`) lists as they happen.

One turn at a time is in the panes. A turn still streaming is shown like a
live capture (the shared :class:`~.base.LiveController` lifecycle feeds a
:class:`~callscope.engine.streams.conformance.CaptureAnalyzer` at most once per frame);
when it ends, the proxy's own verdict (the one ``callscope replay`` of its
recording gives) replaces the growing view. The newest streamed turn is
followed while the panes show the proxy's turns; once the user opens
something else, new turns are only listed. A watched folder's turn in
progress is re-read from its trace as the trace grows.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from callscope.engine.analysis.report import plural
from callscope.engine.capture.client import Line
from callscope.engine.capture.proxy import ProxyConfig, ProxyServer, Turn, is_session_folder
from callscope.engine.capture.proxy.judge import ThreadJudge
from callscope.engine.inspector.proxy_turns import SessionReader, TurnList, TurnRow
from callscope.engine.inspector.sources import AnalysisSource, FileSource, SourceError
from callscope.engine.streams.conformance import CaptureAnalyzer
from callscope.engine.streams.protocols import expected_choices
from callscope.live.base import LiveController, wait_for_task
from callscope.models.session import InspectorSession

#: How often a watched session folder is looked at (ms).
POLL_MS = 300
#: Finished turns whose analyses stay in memory; older ones are read back from their recording when opened.
KEEP_ANALYSES = 32


class ProxyController(LiveController[Line]):
    """One proxy (or one watched session folder) at a time; its turns listed, one of them in the panes."""

    kind = "proxy turn"
    noun = "proxy"

    turnsChanged = Signal(int)  # the number of the turn added or changed
    listening = Signal(str)  # the proxy is up: what it listens on and where it forwards, one line
    stopped = Signal()  # the proxy stopped (or the folder is no longer watched)

    def __init__(self, session: InspectorSession, parent: QObject | None = None,
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(session, parent)
        self.loop = loop
        self.server: ProxyServer | None = None
        self.reader: SessionReader | None = None
        self.turns = TurnList()
        self.shown: int | None = None  # the turn the panes show
        self.status = ""  # the pane's header line
        self._proxied: dict[int, Turn] = {}  # the running proxy's turns (analyses kept for the newest)
        self._lines: dict[int, list[Line]] = {}  # lines of turns still streaming (to open one mid-way)
        self._claim = False  # the next streamed turn may take the panes (just started or attached)
        self._shown_done = False  # the shown turn of a watched folder was read after its end
        self._task: asyncio.Task[None] | None = None
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self.poll)

    @property
    def running(self) -> bool:
        """Never holds the window: another source may be opened while a turn streams (it is then only listed)."""
        return False

    @property
    def showing_live(self) -> bool:
        """A turn still streaming is in the panes, growing."""
        return self._running

    @property
    def active(self) -> bool:
        """A proxy runs, or a folder is watched."""
        return self.server is not None or self.reader is not None

    # ------------------------------------------------------------ start, attach, stop

    def start(self, config: ProxyConfig) -> bool:
        """Start a proxy (False if one runs); ``listening`` or ``failed`` follows once it is bound."""
        if self.active:
            return False
        self._reset()
        self.server = ProxyServer(config, self, ThreadJudge())
        self._listen_soon()
        return True

    def _listen_soon(self) -> None:
        loop = self.loop or asyncio.get_event_loop()
        self._task = loop.create_task(self._listen(self.server))

    async def _listen(self, server: Any) -> None:
        try:
            await server.start()
        except OSError as exc:
            self.server = None
            self.failed.emit(f"cannot listen on {server.config.host}:{server.config.port}: {exc.strerror or exc}")
            return
        where = f"; recording to {server.session.path}" if server.session is not None else ""
        self.status = self._status_text(server) + where
        self._claim = True
        self.listening.emit(self.status)

    def _status_text(self, server: Any) -> str:
        """The pane's header once listening (a subclass serving turns says what it serves)."""
        return f"proxy on {server.url} → {server.config.public_upstream}"

    def attach(self, folder: str | Path) -> bool:
        """Watch a session folder (a running CLI proxy's, or one left behind); raises ValueError if it is none."""
        if self.active:
            return False
        if not is_session_folder(folder):
            raise ValueError(f"{folder}: not a proxy session folder (no turns.jsonl, no turn-NNNN.jsonl)")
        self._reset()
        self.reader = SessionReader(folder)
        self.status = f"session folder {self.reader.folder}"
        self._claim = True
        self.listening.emit(self.status)
        self.poll()
        self._poll.start()
        return True

    def stop(self) -> None:
        """Stop the proxy (its open turns end, recorded as cancelled) or stop watching the folder."""
        self._poll.stop()
        if self.reader is not None:
            self.reader = None
            self._settle()
            self.stopped.emit()
        server, self.server = self.server, None
        if server is not None:
            loop = self.loop or asyncio.get_event_loop()
            self._task = loop.create_task(self._stop(server))

    async def _stop(self, server: Any) -> None:
        with contextlib.suppress(Exception):
            await server.stop()
        self.status = f"{self.noun} stopped after {plural(server.turn_count, 'turn')}"
        self.stopped.emit()

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Window closing: stop, and wait (bounded, in a local event loop that drives qasync) for the proxy."""
        self.stop()
        self._feed.cancel()
        task = self._task
        wait_for_task(task, timeout_ms)
        return task is None or task.done()

    def _reset(self) -> None:
        self.turns = TurnList()
        self._proxied.clear()
        self._lines.clear()
        self.shown = None
        self.analysis = None

    # ------------------------------------------------------------ the proxy's observer (on the GUI thread)

    def turn_started(self, turn: Turn) -> None:
        self._proxied[turn.number] = turn
        self._listed(turn)

    def turn_lines(self, turn: Turn, lines: list[Line]) -> None:
        first = turn.number not in self._lines
        self._lines.setdefault(turn.number, []).extend(lines)
        if first:
            self._listed(turn)
            if self._may_follow():
                self._show_streaming(turn)
                return
        if self.shown == turn.number and self._running:
            self._received(lines)

    def turn_ended(self, turn: Turn) -> None:
        self._lines.pop(turn.number, None)
        self._listed(turn)
        if self.shown == turn.number and self._running and self._showing_ours():
            self.drain()
            final = turn.analyses[0] if turn.analyses else self.analyzer.finish("error") if self.analyzer else None
            if final is not None:
                self._conclude(final, f"{self.kind} {turn.number} · {turn.target}")
                self.tools = None
        elif self.shown == turn.number and self._running:
            self._settle()  # the panes show something else now: the turn is only listed
        self._forget_old()

    def _listed(self, turn: Turn) -> None:
        self.turns.put_turn(turn)
        self.turnsChanged.emit(turn.number)

    def _may_follow(self) -> bool:
        """The newest turn takes the panes while they show the proxy's turns (or right after start/attach)."""
        if self._running:
            return False
        if self._claim:
            return True
        state = self.session.state
        return self.analysis is not None and state is not None and state.analysis is self.analysis

    def _forget_old(self) -> None:
        done = [t for t in self._proxied.values() if t.done and t.analyses and t.record_path is not None]
        for turn in done[:-KEEP_ANALYSES]:
            turn.analyses = []  # read back from its recording if opened again

    # ------------------------------------------------------------ showing a turn

    def open_turn(self, number: int) -> bool:
        """Show turn ``number`` in the panes: growing if it still streams, else its verdict. False: nothing to show."""
        row = self.turns.get(number)
        if row is None or not row.openable:
            return False
        if number == self.shown and self._running:
            return True
        if self._running:
            self._settle()  # the turn on screen goes on streaming, just not in the panes
        turn = self._proxied.get(number)
        if turn is not None and not turn.done and number in self._lines:
            self._show_streaming(turn)
            return True
        if turn is not None and turn.analyses:
            self._show_final(number, AnalysisSource(list(turn.analyses), _tools(turn), label=f"{self.kind} {number}"),
                             policy=turn.analyses[0].source.policy)
            return True
        if row.file is None:
            return False
        return self._show_file(row)

    def _show_streaming(self, turn: Turn) -> None:
        """The turn in the panes, growing as its lines arrive (those received so far first)."""
        self._claim = False
        self._begin(_tools(turn))
        self.shown = turn.number
        config = self.server.config if self.server is not None else None
        analyzer = CaptureAnalyzer(
            turn.record_path.stem if turn.record_path is not None else f"turn-{turn.number}", turn.url, url=turn.url,
            protocol=turn.protocol, expected_choices=expected_choices(turn.body or {}),
            clients=config.clients if config is not None else None,
            **({"atomic_silence_ms": config.atomic_silence_ms} if config is not None else {}),
        )
        self.record_path = str(turn.record_path) if turn.record_path is not None else None
        self.phaseChanged.emit(f"{self.kind} {turn.number}: {turn.method} {turn.target}…")
        self._show_live(analyzer)
        self._received(list(self._lines.get(turn.number, [])))

    def _flush(self) -> None:
        """Grow the panes only while they still show this turn; once the user opened another source, let go."""
        if not self._showing_ours():
            self._settle()
            return
        super()._flush()

    def _show_final(self, number: int, source: AnalysisSource | FileSource, quiet: bool = False,
                    policy: str | None = None) -> bool:
        """``quiet``: a trace being written may end mid-record; the next poll reads it again, no dialog."""
        try:
            self.session.open(source, policy)
        except SourceError as exc:
            if not quiet:
                self.failed.emit(str(exc))
            return False
        self._claim = False
        self.shown = number
        self.analysis = self.session.current
        return True

    def _show_file(self, row: TurnRow, quiet: bool = False) -> bool:
        """A turn of a watched folder (or one forgotten): its recording, as far as it is written."""
        assert row.file is not None
        self.record_path = str(row.file)
        self._shown_done = row.done
        return self._show_final(row.number, FileSource(str(row.file)), quiet)

    # ------------------------------------------------------------ a watched folder

    def poll(self) -> None:
        """Read what the folder gained: turns listed, the newest followed, the shown one re-read as it grows."""
        reader = self.reader
        if reader is None:
            return
        for row in reader.poll():
            self.turns.put(row)
            self.turnsChanged.emit(row.number)
        shown = self.turns.get(self.shown) if self.shown is not None else None
        latest = self.turns.latest_open()
        if latest is not None and latest.number != self.shown and self._may_follow() and latest.file is not None:
            reader.grown(latest.number)
            self._show_file(latest, quiet=True)
            return
        if shown is None or not self._showing_ours():
            return
        if (shown.done and not self._shown_done) or (not shown.done and reader.grown(shown.number)):
            self._show_file(shown, quiet=True)

    def _showing_ours(self) -> bool:
        state = self.session.state
        return self.analysis is not None and state is not None and state.analysis is self.analysis

    def _progress_text(self) -> str:
        steps = len(self.analysis.steps) if self.analysis is not None else 0
        return f"turn {self.shown} · {plural(steps, 'chunk')}"


def _tools(turn: Turn):
    tools = turn.body.get("tools") if turn.body else None
    return tools if isinstance(tools, list) else None

