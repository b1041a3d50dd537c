"""TurnQueue: queued stages run one per event-loop turn, in order, and flush() runs them at once."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer

from callscope.ui.turn_queue import TurnQueue

pytestmark = pytest.mark.gui


def test_stages_run_one_per_turn_in_the_order_asked(qtbot):
    ran: list[str] = []
    emptied: list[int] = []
    queue = TurnQueue(lambda: emptied.append(len(ran)))
    turns: list[int] = []
    ticker = QTimer()
    ticker.setInterval(0)
    ticker.timeout.connect(lambda: turns.append(len(ran)))  # what had run when another turn came round
    a, b, c = (queue.stage(lambda n=n: ran.append(n)) for n in "abc")
    b.request()
    a.request()
    b.request()  # already queued: once
    c.request()
    ticker.start()
    qtbot.waitUntil(lambda: bool(emptied), timeout=2000)
    ticker.stop()
    assert ran == ["b", "a", "c"] and emptied == [3]
    assert not queue.pending
    # other events were handled between the stages: some turn saw exactly one, and exactly two, stages run
    assert 1 in turns and 2 in turns


def test_flush_runs_everything_now_including_what_stages_queue(qtbot):
    ran: list[str] = []
    emptied: list[bool] = []
    queue = TurnQueue(lambda: emptied.append(True))
    second = queue.stage(lambda: ran.append("second"))
    first = queue.stage(lambda: (ran.append("first"), second.request()))
    first.request()
    queue.flush()
    assert ran == ["first", "second"] and emptied == [True]
    queue.flush()  # nothing queued: no second on_empty
    assert emptied == [True]


def test_a_cancelled_or_cleared_stage_does_not_run(qtbot):
    ran: list[str] = []
    queue = TurnQueue()
    one, two = queue.stage(lambda: ran.append("one")), queue.stage(lambda: ran.append("two"))
    one.request()
    two.request()
    one.cancel()
    assert two.pending and not one.pending
    queue.clear()
    qtbot.wait(20)
    assert ran == []
    two.request()
    two.flush()
    assert ran == ["two"] and two.ran == 1


def test_a_frame_throttle_request_waits_at_least_what_it_is_told(qtbot):
    from PySide6.QtCore import QElapsedTimer

    from callscope.ui.frame_throttle import FrameThrottle

    fired: list[int] = []
    clock = QElapsedTimer()
    throttle = FrameThrottle(lambda: fired.append(clock.elapsed()), interval_ms=0)
    clock.start()
    throttle.request(at_least_ms=30)
    qtbot.waitUntil(lambda: bool(fired), timeout=2000)
    assert fired[0] >= 29
