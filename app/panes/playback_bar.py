"""Playback controls: transport buttons, scrub slider, position readout, speed and loop.

:class:`PlaybackDriver` turns :class:`callscope.engine.inspector.playback.PlaybackClock`
decisions into cursor moves on a single-shot timer scheduled for exactly when
the next position is due (so 1x reproduces the recording's timing), or on
every event-loop turn for "as fast as possible". Moving the cursor by hand
while playing continues from there. :meth:`PlaybackDriver.run_to` plays until a
step (a debugger's "run to the next violation") and stops there.

Every control is reachable by Tab and shows a focus ring; a focused button or
check box takes Space and Enter itself (they are not the window's play/pause then).
"""

from __future__ import annotations

import math

from PySide6.QtCore import QElapsedTimer, QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import QAbstractButton, QCheckBox, QComboBox, QHBoxLayout, QLabel, QSlider, QToolButton, QWidget

from callscope.engine.inspector.playback import ASAP, SPEEDS, PlaybackClock
from callscope.models.session import InspectorSession
from callscope.ui.icons import transport_icon

SPEED_LABELS = [(f"{s:g}×", s) for s in SPEEDS] + [("max", ASAP)]


class PlaybackDriver(QObject):
    playingChanged = Signal(bool)

    def __init__(self, session: InspectorSession, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.clock: PlaybackClock | None = None
        self.speed = 1.0
        self.loop = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._tick)
        self._elapsed = QElapsedTimer()  # nanosecond reads: whole-ms restarts lose time and can stall
        self._driving = False
        self._stop_at: int | None = None  # run_to: pause once the cursor reaches this step
        self.ticks = 0
        session.analysisChanged.connect(self._rebind)

    @property
    def playing(self) -> bool:
        return self.clock is not None and self.clock.playing

    def _rebind(self) -> None:
        was_playing = self.playing
        self._timer.stop()
        state = self.session.state
        self.clock = PlaybackClock(state.timebase, self.speed, self.loop) if state is not None else None
        if state is not None:
            state.subscribe(self._cursor_moved)
        if was_playing:
            self.playingChanged.emit(False)

    def _cursor_moved(self, what: str) -> None:
        if what == "cursor" and not self._driving and self.clock is not None and self.session.state is not None:
            self.clock.seek(self.session.state.cursor)
            if self.playing:
                self._elapsed.restart()
                self._schedule()

    def toggle(self) -> None:
        self.pause() if self.playing else self.play()

    def play(self) -> None:
        state = self.session.state
        if self.clock is None or state is None or state.live or state.last == 0:
            return
        self.clock.play(state.cursor)
        if self.clock.index != state.cursor:
            self._move(self.clock.index)
        self._elapsed.restart()
        self.playingChanged.emit(True)
        self._schedule()

    def run_to(self, step: int) -> bool:
        """Play from the cursor until ``step`` (at the current speed), then pause there; False if it is behind."""
        state = self.session.state
        if state is None or state.live or step <= state.cursor_step:
            return False
        self._stop_at = step
        if not self.playing:
            self.play()
        return True

    def pause(self) -> None:
        self._stop_at = None
        if self.clock is not None and self.clock.playing:
            self.clock.pause()
            self._timer.stop()
            self.playingChanged.emit(False)

    def set_speed(self, speed: float) -> None:
        self.speed = speed
        if self.clock is not None:
            self.clock.set_speed(speed)
            if self.playing:
                self._schedule()

    def set_loop(self, loop: bool) -> None:
        self.loop = loop
        if self.clock is not None:
            self.clock.loop = loop

    def _schedule(self) -> None:
        assert self.clock is not None
        due = self.clock.next_due_ms()
        if due is None:
            if self.clock.loop and self.clock.playing:
                due = 0.0
            else:
                self.pause()
                return
        self._timer.start(math.ceil(min(due, 1000.0)))

    def _tick(self) -> None:
        if self.clock is None:
            return
        tick = self.clock.advance(self._take_elapsed_ms() if not self.clock.asap else 0.0)
        self.ticks += 1
        if tick.moved:
            self._move(tick.index)
        if tick.stopped:
            self.playingChanged.emit(False)
            return
        self._schedule()

    def _take_elapsed_ms(self) -> float:
        """Wall time since the last tick, with sub-millisecond precision."""
        elapsed = self._elapsed.nsecsElapsed() / 1e6
        self._elapsed.restart()
        return elapsed

    def _move(self, index: int) -> None:
        state = self.session.state
        if state is None:
            return
        stop_at = self._stop_at
        if stop_at is not None and state.timebase.step(index) >= stop_at:
            index = state.timebase.index_of_step(stop_at)  # never run past the target, whatever the speed
        self._driving = True
        try:
            state.set_cursor(index)
        finally:
            self._driving = False
        if stop_at is not None and state.cursor_step >= stop_at:
            self.pause()


class _OwnKeys(QObject):
    """A focused button or check box takes Space and Enter (else they would be the window's play/pause)."""

    KEYS = (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and event.key() in self.KEYS and not event.modifiers():
            event.accept()
            return True
        if (event.type() == QEvent.Type.KeyPress and event.key() in self.KEYS[1:]
                and isinstance(watched, QAbstractButton)):
            watched.click()  # Enter activates a button as Space does
            return True
        return False


def _button(icon: str, tip: str) -> QToolButton:
    button = QToolButton()
    button.setIcon(transport_icon(icon))
    button.setIconSize(QSize(18, 18))
    button.setToolTip(tip)
    button.setObjectName("Transport")
    button.setAutoRaise(False)
    button.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
    button.setAccessibleName(tip.split(" (")[0])
    return button


class PlaybackBar(QWidget):
    def __init__(self, session: InspectorSession, driver: PlaybackDriver, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session = session
        self.driver = driver
        layout = QHBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.setSpacing(4)
        self.home = _button("home", "Start (Home)")
        self.prev_delta = _button("prev_delta", "Previous emitted delta (Shift+Left)")
        self.prev_token = _button("prev_token", "Previous token (, or Left)")
        self.play = _button("play", "Play / pause (Space)")
        self.play.setIcon(transport_icon("play", "#ffffff"))
        self.play.setObjectName("Play")
        self.play.setCheckable(True)
        self.next_token = _button("next_token", "Next token (. or Right)")
        self.next_delta = _button("next_delta", "Next emitted delta (Shift+Right)")
        self.end = _button("end", "End (End)")
        for b in (self.home, self.prev_delta, self.prev_token, self.play, self.next_token, self.next_delta, self.end):
            layout.addWidget(b)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.slider.setToolTip("Scrub")
        layout.addSpacing(6)
        layout.addWidget(self.slider, 1)
        self.position = QLabel("–")
        self.position.setObjectName("Caption")
        self.position.setMinimumWidth(250)
        self.position.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.position)
        self.speed = QComboBox()
        for label, value in SPEED_LABELS:
            self.speed.addItem(label, value)
        self.speed.setCurrentIndex(SPEEDS.index(1.0))
        self.speed.setToolTip("Playback speed ([ and ]); max = as fast as possible")
        self.speed.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.speed.setAccessibleName("Playback speed")
        layout.addWidget(self.speed)
        self.loop = QCheckBox("loop")
        self.loop.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.loop.setToolTip("Loop playback (L)")
        layout.addWidget(self.loop)
        self._own_keys = _OwnKeys(self)
        for widget in (self.home, self.prev_delta, self.prev_token, self.play, self.next_token, self.next_delta,
                       self.end, self.loop):
            widget.installEventFilter(self._own_keys)
        self._setting = False
        self.slider.valueChanged.connect(self._scrubbed)
        self.speed.currentIndexChanged.connect(lambda i: driver.set_speed(self.speed.itemData(i)))
        self.loop.toggled.connect(driver.set_loop)
        self.play.clicked.connect(lambda _c: driver.toggle())
        driver.playingChanged.connect(self._playing)
        session.analysisChanged.connect(self._rebuild)
        session.cursorChanged.connect(self._show)
        # A live growth reaches the panes that show the cursor's step on a later turn (cursorChanged):
        # the transport changes with them, never a token ahead of them.
        session.grew.connect(self._grew)
        self._range_stale = False

    def restyle(self) -> None:
        """The theme changed: icons in its colour (play's stays white on its blue)."""
        for button, icon in ((self.home, "home"), (self.prev_delta, "prev_delta"), (self.prev_token, "prev_token"),
                             (self.next_token, "next_token"), (self.next_delta, "next_delta"), (self.end, "end")):
            button.setIcon(transport_icon(icon))
        self._playing(self.driver.playing)

    def connect_navigation(self, home, prev_delta, prev_token, next_token, next_delta, end) -> None:
        for button, slot in (
            (self.home, home), (self.prev_delta, prev_delta), (self.prev_token, prev_token),
            (self.next_token, next_token), (self.next_delta, next_delta), (self.end, end),
        ):
            button.clicked.connect(slot)

    def step_speed(self, direction: int) -> None:
        self.speed.setCurrentIndex(max(0, min(self.speed.count() - 1, self.speed.currentIndex() + direction)))

    def _rebuild(self) -> None:
        state = self.session.state
        self._range_stale = False
        self._setting = True
        try:
            self.slider.setRange(0, state.last if state else 0)
        finally:
            self._setting = False
        live = state is not None and state.live
        for w in (self.play, self.speed, self.loop):
            w.setEnabled(not live)
        if state is not None:
            self._show(state.cursor)

    def _grew(self, _text: str) -> None:
        self._range_stale = True

    def _show(self, index: int) -> None:
        state = self.session.state
        if state is None:
            return
        if self._range_stale:
            self._rebuild()  # the new range, then this position (it calls back here)
            return
        self._setting = True
        try:
            self.slider.setValue(index)
        finally:
            self._setting = False
        step = state.timebase.step(index)
        unit = state.analysis.unit
        text = f"{unit} {step}" if unit != "byte" else f"byte {step}"
        text += f"  ·  {index}/{state.last}"
        if state.timebase.timed:
            ms = state.timebase.x(index)
            text += f"  ·  {ms / 1000:.3f} s"
        self.position.setText(text)

    def _scrubbed(self, value: int) -> None:
        if not self._setting and self.session.state is not None:
            self.session.state.set_cursor(value)

    def _playing(self, playing: bool) -> None:
        self.play.setChecked(playing)
        self.play.setIcon(transport_icon("pause" if playing else "play", "#ffffff"))
