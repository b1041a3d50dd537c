"""What the client sees (engine/inspector/client_view.py) and the animation's frame plan, without a window."""

from __future__ import annotations

import json
import math

import pytest

from callscope.engine.analysis.analyzer import Analyzer, SourceInfo
from callscope.engine.core.wire import ARGUMENTS, CONTENT, HEADER, StreamIdentity
from callscope.engine.formats import make_parser
from callscope.engine.inspector.animation import AnimationError, plan_frames
from callscope.engine.inspector.client_view import (
    DONE,
    RECEIVING,
    SPINNER,
    WAITING,
    ClientView,
    decode_partial_string,
    partial_fields,
    spinner_frame,
)
from callscope.engine.inspector.timebase import Timebase
from callscope.engine.inspector.ttfd import ttfd_label
from callscope.engine.recordings.replay import load_analyses
from tests.support.paths import HEADLINE, PARALLEL, REGRESS


def _view(path, policy="incremental"):
    analysis = load_analyses(path, policy)[0]
    timebase = Timebase(analysis)
    return analysis, timebase, ClientView(analysis, timebase)


def _as_a_client_would(chunks, step):
    """The naive client: every chunk that went out by ``step``, folded by index (no prefix tables)."""
    content, calls = "", {}
    for c in chunks:
        if c.step > step:
            break
        if c.kind == CONTENT:
            content += c.text
        elif c.kind == HEADER:
            calls[c.index] = [c.call_id, c.name, c.text]
        elif c.kind == ARGUMENTS:
            calls[c.index][2] += c.text
    return content, [(i, *calls[i]) for i in sorted(calls)]


def test_the_streaming_client_fills_in_while_the_atomic_one_waits():
    analysis, tb, view = _view(HEADLINE)
    first = tb.index_of_step(analysis.ttfd_streaming.step)
    start = view.at(0)
    assert start.streaming.state == start.atomic.state == WAITING
    assert start.streaming.spinner in SPINNER and start.streaming.calls == ()
    before = view.at(first - 1)
    assert before.streaming.waiting, "nothing reaches the client before the first delta"
    middle = view.at(tb.last // 2)
    assert middle.streaming.state == RECEIVING and middle.atomic.state == WAITING
    (call,) = middle.streaming.calls
    assert call.name == "write_file" and 0 < len(call.arguments) < len(analysis.calls[0].streamed_arguments)
    assert middle.streaming.clock == f"{tb.x(tb.last // 2) / 1000:.1f} s" == middle.atomic.clock
    assert middle.atomic.spinner and middle.streaming.spinner == ""
    assert middle.streaming.status.startswith("first delta at 0.542 s") and "characters so far" in middle.streaming.status
    end = view.at(tb.last)
    assert end.streaming.state == end.atomic.state == DONE
    assert end.streaming.finish_reason == end.atomic.finish_reason == "tool_calls"
    streamed = [(c.name, c.arguments) for c in end.streaming.calls]
    assert streamed == [(c.name, c.arguments) for c in end.atomic.calls] == [("write_file", analysis.calls[0].final_arguments)]
    assert end.atomic.status.startswith("whole call at 29.2 s")
    assert end.headline == ttfd_label(analysis) and end.headline.startswith("first delta 0.542 s vs 29.2 s atomic")


@pytest.mark.parametrize("path", [PARALLEL, HEADLINE])
def test_every_position_shows_what_a_client_assembles_from_the_chunks_so_far(path):
    analysis, tb, view = _view(path)
    for index in range(0, tb.last + 1, max(1, tb.last // 97)):
        step = tb.step(index)
        scene = view.at(index)
        for panel, chunks in ((scene.streaming, analysis.chunks), (scene.atomic, analysis.baseline_chunks)):
            content, calls = _as_a_client_would(chunks, step)
            assert panel.content == content
            assert [(c.index, c.id, c.name, c.arguments) for c in panel.calls] == calls
            assert panel.chunks == sum(1 for c in chunks if c.step <= step)


def test_parallel_calls_keep_their_index_and_id_and_content_comes_first():
    analysis, tb, view = _view(PARALLEL)
    end = view.at(tb.last).streaming
    assert [c.index for c in end.calls] == [0, 1] and len({c.id for c in end.calls}) == 2
    assert [c.name for c in end.calls] == [c.name for c in analysis.calls]
    assert end.content == analysis.content_streamed


def test_a_byte_prefix_fixture_counts_steps_not_seconds():
    _, tb, view = _view(REGRESS, "atomic")
    scene = view.at(tb.last // 2)
    assert scene.streaming.clock.startswith("byte ") and scene.streaming.elapsed_ms is None
    assert scene.streaming.title == "Atomic (shown policy)" and scene.atomic.title == "Atomic"
    assert scene.streaming.spinner == SPINNER[0]  # untimed: a still spinner


def test_a_live_analysis_grows_under_the_view():
    tools = [{"type": "function", "function": {"name": "write_file", "parameters": {"type": "object"}}}]
    analyzer = Analyzer("live", SourceInfo("text", None, "hermes", "incremental"), "char", True,
                        make_parser("hermes", tools), StreamIdentity.for_run("live"))
    analysis = analyzer.provisional()
    tb = Timebase(analysis)
    view = ClientView(analysis, tb)
    text = '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.txt", "content": "hello\\nworld"}}\n</tool_call>'
    for i, ch in enumerate(text):
        analyzer.feed_text(ch, ms=10.0 * (i + 1))
        if i % 9 == 0:
            tb.sync()
            view.sync()
            scene = view.at(tb.last)
            assert scene.live and scene.headline == "generating…"
            assert scene.atomic.waiting, "the atomic client gets nothing while the call is written"
    tb.sync()
    view.sync()
    call = view.at(tb.last).streaming.calls[0]
    assert call.name == "write_file"
    assert [(f.key, f.value) for f in call.fields()] == [("path", "a.txt"), ("content", "hello\nworld")]


def test_partial_fields_decode_strings_as_a_client_ui_shows_them():
    fields = partial_fields('{"path": "a.txt", "n": 3, "o": {"a": [1, {"b": "}"}]}, "s": "tab\\tline\\nnext \\u00e')
    assert [(f.key, f.value, f.is_string, f.complete) for f in fields] == [
        ("path", "a.txt", True, True),
        ("n", "3", False, True),
        ("o", '{"a": [1, {"b": "}"}]}', False, True),
        ("s", "tab\tline\nnext ", True, False),  # a cut \u escape is not shown half-way
    ]
    assert partial_fields('{"pa') == [] and partial_fields("") == [] and partial_fields("[1, 2]") == []
    assert partial_fields('{"path": ') == [partial_fields('{"path": ')[0]] and partial_fields('{"path": ')[0].value == ""
    assert partial_fields('{"n": 12') == [partial_fields('{"n": 12')[0]] and not partial_fields('{"n": 12')[0].complete
    assert decode_partial_string("a\\") == "a" and decode_partial_string('q \\"x\\" \\ud83d\\ude00') == 'q "x" 😀'
    assert json.loads('"' + "\\u00e9" + '"') == decode_partial_string("\\u00e9")


def test_the_spinner_turns_with_the_elapsed_time_only():
    assert spinner_frame(None) == spinner_frame(0) == SPINNER[0]
    assert spinner_frame(149) == SPINNER[0] and spinner_frame(150) == SPINNER[1]
    assert spinner_frame(150 * len(SPINNER)) == SPINNER[0]


# ------------------------------------------------------------------ the animation's frames


def test_frames_follow_the_recorded_timing_and_hold_the_end():
    analysis, tb, _ = _view(HEADLINE)
    plan = plan_frames(tb, fps=10, speed=1, hold_ms=2000)
    assert plan.indices[0] == 0 and plan.indices[-1] == tb.last
    assert list(plan.indices) == sorted(plan.indices)
    assert plan.hold_frames == 20 and plan.indices[-21:] == (tb.last,) * 21
    moving = plan.count - plan.hold_frames
    assert moving == math.ceil((tb.x(tb.last) - tb.x(0)) / 100) + 1  # one frame per 100 ms of the 29.2 s run
    for k in (30, 100, 250):  # frame k shows the last position at or before k * 100 ms
        assert tb.x(plan.indices[k]) <= k * 100 < tb.x(plan.indices[k] + 1)
    fast = plan_frames(tb, fps=10, speed=2, hold_ms=0)
    assert abs(fast.count - moving / 2) <= 1


def test_a_long_replay_lowers_the_frame_rate_not_the_duration():
    _, tb, _ = _view(HEADLINE)
    plan = plan_frames(tb, fps=30, speed=1, hold_ms=0, max_frames=100)
    assert plan.count <= 101 and plan.fps < 30
    assert abs(plan.duration_ms - tb.x(tb.last)) < 2 * plan.frame_ms


def test_untimed_sources_play_at_thirty_steps_a_second_and_bad_rates_are_refused():
    _, tb, _ = _view(REGRESS)
    plan = plan_frames(tb, fps=10, hold_ms=0)
    assert plan.indices[1] == 3 and plan.indices[-1] == tb.last
    for fps, speed in ((0, 1), (float("nan"), 1), (10, 0), (10, -1)):
        with pytest.raises(AnimationError):
            plan_frames(tb, fps=fps, speed=speed)
