"""The inspector's Qt-free view state: cursor, parse at any step, navigation, playback, lanes, TTFD, spans."""

from __future__ import annotations

import random

import pytest

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.analysis.report import ttfd_gain
from callscope.engine.formats.samples import render
from callscope.engine.inspector.chunks import ChunkIndex
from callscope.engine.inspector.compare import CompareTarget, compare, compare_targets, target_from_label
from callscope.engine.inspector.lanes import ATOMIC, PARSE, TOKENS, VIOLATIONS, WIRE
from callscope.engine.inspector.parse_cursor import ParseCursor
from callscope.engine.inspector.playback import ASAP, PlaybackClock
from callscope.engine.inspector.reconcile import EQUAL, FINAL, STREAMED, char_diff, reconcile
from callscope.engine.inspector.sources import (
    AnalysisSource,
    FileSource,
    SourceError,
    TextSource,
    parse_tools_text,
    reanalyze,
)
from callscope.engine.inspector.state import InspectorState
from callscope.engine.inspector.text_spans import ARGUMENTS, CALL
from callscope.engine.inspector.timebase import Timebase
from callscope.engine.inspector.ttfd import seconds, ttfd_curves, ttfd_label, ttfd_point
from callscope.engine.recordings.replay import load_analyses
from callscope.engine.recordings.replay_text import analyze_text
from tests.support.paths import ROOT

FIXTURES = ROOT / "fixtures"
HEADLINE = FIXTURES / "headline_701_tokens.jsonl"
REGRESS = FIXTURES / "prefix" / "arguments_regress.txt"


def hermes_run(rate: float | None = 40.0, size: int = 3, policy: str = "incremental") -> Analysis:
    text = render(
        "hermes",
        [("get_weather", {"city": "Paris", "unit": "celsius"}), ("read_file", {"path": "/etc/hosts"})],
        content="Let me check.",
    )
    return analyze_text(text, "hermes", policy, size=size, rate=rate, name="hermes-two")


@pytest.fixture(scope="module")
def headline() -> Analysis:
    return load_analyses(HEADLINE)[0]


# ----------------------------------------------------------------- timebase


def test_timebase_positions_are_step_zero_plus_every_step(headline):
    tb = Timebase(headline)
    assert tb.steps[0] == 0 and tb.steps[1:] == headline.step_numbers()
    assert tb.timed and tb.xs[1:] == [s.ms for s in headline.steps]
    assert tb.index_of_step(headline.steps[10].step) == 11
    assert tb.index_at_x(headline.steps[10].ms + 0.01) == 11
    assert tb.nearest_index(headline.steps[10].ms - 0.01) == 11


def test_untimed_x_is_the_step_number():
    a = load_analyses(REGRESS)[0]
    tb = Timebase(a)
    assert not tb.timed
    assert tb.xs == [float(s) for s in tb.steps]
    assert tb.unit_label == "byte"


# ----------------------------------------------------------------- parse cursor


@pytest.mark.parametrize("every", [1, 7, 256])
def test_parse_cursor_matches_analysis_parse_at_everywhere(every):
    a = hermes_run()
    cursor = ParseCursor(a, every=every)
    steps = [0, *a.step_numbers()]
    for step in steps:
        assert cursor.at(step) == a.parse_at(step), step
    rng = random.Random(5)
    for _ in range(200):  # arbitrary jumps, backwards and forwards
        step = rng.choice(steps)
        assert cursor.at(step) == a.parse_at(step)


def test_parse_cursor_on_revisions_and_failures():
    a = load_analyses(REGRESS)[0]
    cursor = ParseCursor(a, every=2)
    for step in reversed([0, *a.step_numbers()]):
        assert cursor.at(step) == a.parse_at(step)
    assert cursor.at(a.last_step).partial is False


def test_delta_at_says_what_the_step_changed():
    a = hermes_run(size=1)
    cursor = ParseCursor(a)
    named = [s for s, e in a.parse_events if type(e).__name__ == "CallNamed"]
    assert cursor.delta_at(named[0]).named == {0}
    grew = next(s for s, e in a.parse_events if type(e).__name__ == "ArgumentsAppended")
    before, after = cursor.at(grew - 1), cursor.at(grew)
    added = cursor.delta_at(grew).arguments[0]
    assert after.calls[0].arguments == (before.calls[0].arguments if len(before.calls) else "") + added


# ----------------------------------------------------------------- navigation


def test_step_by_token_and_by_delta_land_on_the_right_steps():
    a = hermes_run()
    state = InspectorState(a)
    state.home()
    assert state.cursor == 0 and state.cursor_step == 0
    state.step_token(1)
    assert state.cursor_step == a.steps[0].step
    state.step_token(-5)
    assert state.cursor == 0
    emitting = sorted({c.step for c in a.chunks if c.kind != "role"})
    seen = []
    state.home()
    while state.next_delta():
        seen.append(state.cursor_step)
    assert seen == emitting
    back = []
    while state.previous_delta():
        back.append(state.cursor_step)
    assert back == emitting[-2::-1]
    state.end()
    assert state.cursor == state.last and state.cursor_step == a.last_step
    assert not state.next_delta()


def test_listeners_hear_cursor_and_hover_but_not_no_ops():
    state = InspectorState(hermes_run())
    heard = []
    state.subscribe(heard.append)
    state.set_cursor(3)
    state.set_cursor(3)
    state.set_hover(5)
    state.set_hover(5)
    state.set_hover(None)
    assert heard == ["cursor", "hover", "hover"]
    assert state.cursor == 3  # hovering never moves the cursor


def test_view_at_a_step_has_parse_chunks_and_token():
    a = hermes_run()
    state = InspectorState(a)
    for index in (0, 5, state.last):
        view = state.view(index)
        assert view.parse == a.parse_at(view.step)
        assert view.chunk_count == len(a.chunks_until(view.step))
        assert state.spans.text[: view.cut] == a.text_until(view.step)


def test_preview_describes_a_position_without_moving_the_cursor(headline):
    state = InspectorState(headline)
    state.set_cursor(3)
    text = state.preview(200)
    assert "token 200 · " in text and " s · " in text and "arguments" in text
    assert state.cursor == 3


# ----------------------------------------------------------------- playback


def test_playback_at_1x_reproduces_recorded_timing(headline):
    tb = Timebase(headline)
    clock = PlaybackClock(tb, speed=1.0)
    clock.play(0)
    wall = 0.0
    shown = {}
    while clock.playing:
        due = clock.next_due_ms()
        assert due is not None
        wall += due
        tick = clock.advance(due)
        if tick.moved:
            shown[tick.index] = wall
    assert clock.index == tb.last
    for index in (1, 100, 400, tb.last):
        assert shown[index] == pytest.approx(tb.x(index), abs=1e-6)


def test_playback_speed_scales_wall_time(headline):
    tb = Timebase(headline)
    clock = PlaybackClock(tb, speed=10.0)
    clock.play(0)
    clock.advance(tb.x(300) / 10.0 + 1e-6)
    assert clock.index == 300
    clock.set_speed(0.25)
    clock.advance((tb.x(301) - tb.x(300)) * 4)
    assert clock.index == 301


def test_playback_as_fast_as_possible_visits_every_position_and_stops():
    a = hermes_run()
    tb = Timebase(a)
    clock = PlaybackClock(tb, speed=ASAP)
    clock.play(0)
    visited = []
    while clock.playing:
        visited.append(clock.advance(1000.0).index)
    assert visited == list(range(1, tb.last + 1))


def test_playback_loops_and_restarts_from_the_end():
    a = hermes_run(rate=None)
    tb = Timebase(a)
    clock = PlaybackClock(tb, speed=ASAP, loop=True)
    clock.play(tb.last)  # playing from the end restarts
    assert clock.index == 0
    for _ in range(tb.last):
        clock.advance(0)
    assert clock.index == tb.last and clock.playing
    assert clock.advance(0).index == 0
    untimed = PlaybackClock(tb, speed=1.0, untimed_rate=10.0)
    untimed.play(0)
    assert untimed.next_due_ms() == pytest.approx(100.0)
    assert untimed.advance(250.0).index == 2


# ----------------------------------------------------------------- lanes


def test_lanes_hold_tokens_events_chunks_baseline_and_violations():
    a = load_analyses(REGRESS)[0]
    state = InspectorState(a)
    lanes = state.lanes
    assert len(lanes[TOKENS].kind("token")) == a.step_count
    assert lanes[PARSE].count == len(a.parse_events)
    assert lanes[WIRE].count == len(a.chunks)
    assert len(lanes[ATOMIC].kind("header")) == 1
    assert len(lanes[VIOLATIONS].kind("violation")) == len(a.violations) > 0
    assert 0 in lanes.calls and lanes.calls[0].name


# ----------------------------------------------------------------- TTFD


def test_ttfd_label_and_curves_match_the_report(headline):
    label = ttfd_label(headline)
    s, a = headline.ttfd_streaming, headline.ttfd_atomic
    assert label == f"first delta {seconds(s.ms)} vs {seconds(a.ms)} atomic, {ttfd_gain(headline)}"
    assert "x sooner" in label
    curves = ttfd_curves(headline, Timebase(headline))
    assert curves.policy.xs[1] == pytest.approx(s.ms) and curves.atomic.xs[1] == pytest.approx(a.ms)
    assert curves.policy.chars == sorted(curves.policy.chars) and curves.policy.chars[-1] > 0  # a ramp
    assert curves.atomic.chars[0] == 0
    assert curves.policy.total == curves.atomic.total  # both deliver the same call in the end
    point = ttfd_point(headline)
    assert point.streaming == pytest.approx(s.ms) and point.atomic == pytest.approx(a.ms)
    assert point.call_chars == len(headline.calls[0].final_arguments)


def test_seconds_formatting():
    assert seconds(410) == "0.41 s"
    assert seconds(29300) == "29.3 s"
    assert seconds(42) == "42 ms"


# ----------------------------------------------------------------- text spans


def test_token_spans_cover_the_text_and_colour_arguments_and_markup():
    a = hermes_run(size=1)
    state = InspectorState(a)
    spans = state.spans
    assert spans.text == "".join(s.data.decode() for s in a.steps)
    assert spans.ends[-1] == len(spans.text)
    kinds = {spans.span(p).kind for p in range(1, len(spans))}
    assert ARGUMENTS in kinds and CALL in kinds
    marker = spans.text.index("<tool_call>")
    assert spans.span(spans.position_at_char(marker)).kind == CALL


def test_a_character_split_across_steps_belongs_to_the_later_token():
    a = analyze_text("é", "hermes", unit="byte")
    state = InspectorState(a)
    assert state.spans.span(1).start == state.spans.span(1).end == 0  # first byte: no character yet
    assert (state.spans.span(2).start, state.spans.span(2).end) == (0, 1)


def test_chunk_span_is_the_text_that_produced_it():
    a = hermes_run(size=1)
    state = InspectorState(a)
    header = next(i for i, c in enumerate(a.chunks) if c.kind == "header")
    start, end = state.spans.chunk_span(a.chunks, header)
    assert "<tool_call>" in state.spans.text[start:end] and "get_weather" in state.spans.text[start:end]
    fragments = [i for i, c in enumerate(a.chunks) if c.kind == "arguments"]
    for i in fragments[:10]:
        start, end = state.spans.chunk_span(a.chunks, i)
        assert state.spans.text[start:end].endswith(a.chunks[i].text)  # the tokens since the previous fragment


# ----------------------------------------------------------------- chunks


def test_chunk_index_rows_json_and_arguments_so_far():
    a = hermes_run()
    index = ChunkIndex(a)
    assert len(index) == len(a.chunks)
    assert index.row(0).kind == "role"
    assert '"chat.completion.chunk"' in index.raw_json(1)
    final = index.call_arguments_until(len(a.chunks))
    assert [args for _, _, _, args in final] == [c.streamed_arguments for c in a.calls]
    first_header = next(i for i, c in enumerate(a.chunks) if c.kind == "header")
    partial = index.call_arguments_until(first_header + 1)
    assert len(partial) == 1 and partial[0][3] == a.chunks[first_header].text


# ----------------------------------------------------------------- reconciliation


def test_char_diff_marks_what_differs():
    pieces = char_diff('{"a": True}', '{"a": true}')
    assert [p.tag for p in pieces] == [EQUAL, STREAMED, FINAL, EQUAL]
    assert "".join(p.text for p in pieces if p.tag != FINAL) == '{"a": True}'
    assert "".join(p.text for p in pieces if p.tag != STREAMED) == '{"a": true}'
    big = "x" * 100_000
    assert [p.tag for p in char_diff(big + "a", big + "b")] == [EQUAL, STREAMED, FINAL]


def test_reconciliation_of_a_regressing_call():
    a = load_analyses(REGRESS)[0]
    result = reconcile(a)
    assert not result.ok
    assert result.calls[0].reconstructs is False and result.calls[0].diff
    assert {v.rule for v in result.violations} == {v.rule for v in a.violations}
    assert "finish_reason stop" in result.headline


# ----------------------------------------------------------------- compare, sources


def test_compare_aligns_policies_by_step():
    left, right = hermes_run(), hermes_run(policy="atomic")
    c = compare(left, right)
    steps = [r.step for r in c.rows]
    assert steps == sorted({ch.step for ch in left.chunks} | {ch.step for ch in right.chunks})
    assert c.differing > 0
    assert c.rows[-1].left_chars == c.rows[-1].right_chars > 0


@pytest.mark.parametrize("path", [HEADLINE, REGRESS])
def test_reanalyze_reproduces_the_same_stream(path):
    original = load_analyses(path)[0]
    again = reanalyze(original, original.source.policy)
    assert [(c.step, c.kind, c.text, c.index) for c in again.chunks] == [
        (c.step, c.kind, c.text, c.index) for c in original.chunks
    ]
    assert again.finish_reason == original.finish_reason
    other = reanalyze(original, "atomic")
    assert other.source.policy == "atomic" and other.ttfd_streaming == original.ttfd_atomic


def test_reanalyze_keeps_thinking_mode():
    """A run whose prompt opened <think> is re-analysed with a parser that starts in reasoning too."""
    text = "Let me check the weather.</think>\n" + render("hermes", [("get_weather", {"city": "Oslo"})])
    original = analyze_text(text, "hermes", thinking=True, size=3)
    assert original.source.extra["thinking"] and original.chunks[1].kind == "reasoning"
    again = reanalyze(original, "incremental")
    assert [(c.step, c.kind, c.text) for c in again.chunks] == [(c.step, c.kind, c.text) for c in original.chunks]
    other = reanalyze(original, "atomic")
    expected = analyze_text(text, "hermes", "atomic", thinking=True, size=3)
    assert [(c.step, c.kind, c.text) for c in other.chunks] == [(c.step, c.kind, c.text) for c in expected.chunks]
    assert not any(c.kind == "content" and "check" in c.text for c in other.chunks)


def test_compare_offers_other_parsers_only_for_a_source_that_carries_text():
    text_run = hermes_run()
    labels = [t.label for t in compare_targets(text_run)]
    assert labels[:3] == ["policy: incremental", "policy: atomic", "policy: llama_server"]
    assert "format: qwen3_coder" in labels and "format: hermes" not in labels
    fixture = load_analyses(REGRESS)[0]  # a byte-prefix fixture carries parses
    assert [t.kind for t in compare_targets(fixture)] == ["policy"] * 3
    for target in compare_targets(text_run):
        assert target_from_label(target.label) == target
    assert target_from_label("atomic") == CompareTarget("policy", "atomic")
    assert target_from_label("colour: red") is None


def test_every_text_source_reparses_with_another_format():
    """Pasted text, a trace and a live run give the same stream when re-parsed by another wire format."""
    from callscope.engine.recordings.trace import parse_trace
    from callscope.engine.recordings.trace_io import analyze_trace

    path = FIXTURES / "formats" / "hermes_single.jsonl"
    trace_run = FileSource(str(path)).analyses("incremental", "qwen3_coder")[0]
    expected = analyze_trace(parse_trace(path.read_bytes(), str(path)), "incremental", "qwen3_coder", path.stem)
    shape = lambda a: [(c.step, c.kind, c.text, c.index, c.name) for c in a.chunks]  # noqa: E731
    assert shape(trace_run) == shape(expected) and trace_run.source.format == "qwen3_coder"
    original = FileSource(str(path)).analyses("incremental")[0]
    live = AnalysisSource([original], None)
    again = live.analyses("atomic", "qwen3_coder")[0]
    assert again.source.format == "qwen3_coder" and again.source.policy == "atomic"
    assert shape(again) == shape(FileSource(str(path)).analyses("atomic", "qwen3_coder")[0])
    assert live.analyses("incremental", "hermes")[0] is original  # its own format: nothing to redo
    c = compare(original, trace_run)
    assert c.differing > 0 and c.title("left") == "hermes · incremental" and c.title("right") == "qwen3_coder · incremental"
    text = "Let me check.</think>\n" + render("hermes", [("get_weather", {"city": "Oslo"})])
    pasted = TextSource(text, "hermes", size=3, thinking=True)
    assert pasted.analyses("incremental")[0].chunks[1].kind == "reasoning"
    as_qwen = pasted.analyses("incremental", "qwen3_coder")[0]
    assert as_qwen.source.format == "qwen3_coder" and as_qwen.chunks[1].kind == "reasoning"  # thinking carries over
    with pytest.raises(SourceError, match="carries parses, not text"):
        reanalyze(load_analyses(REGRESS)[0], "incremental", None, "hermes")
    with pytest.raises(SourceError, match="fixture carries parses"):
        FileSource(str(REGRESS)).analyses("incremental", "hermes")


def test_reconciliation_carries_why_the_stream_ended():
    a = hermes_run()
    plain = reconcile(a)
    assert plain.end_detail is None and plain.finish_sentence == "tool_calls (generation ended: stop)"
    a.source.extra["end_detail"] = "connection lost after 3 lines"
    told = reconcile(a)
    assert told.end_detail == "connection lost after 3 lines"
    assert told.finish_sentence == "tool_calls (generation ended: stop: connection lost after 3 lines)"


def test_sources_report_user_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a recording\n")
    with pytest.raises(SourceError, match="callscope reads: callscope traces"):
        FileSource(str(bad)).analyses("incremental")
    with pytest.raises(SourceError, match="no such file"):
        FileSource(str(tmp_path / "missing.jsonl")).analyses("incremental")
    with pytest.raises(SourceError, match="unknown format"):
        TextSource("hi", "nope").analyses("incremental")
    with pytest.raises(SourceError, match="tools JSON"):
        parse_tools_text("[{")
    with pytest.raises(SourceError):
        parse_tools_text('[{"type": "function"}]')
    assert parse_tools_text("  ") is None
    source = AnalysisSource([hermes_run()])
    assert source.analyses("atomic")[0].source.policy == "atomic"
    assert source.analyses("incremental")[0] is source.items[0]


# ----------------------------------------------------------------- live growth


def test_a_live_analysis_grows_and_every_structure_follows():
    from callscope.engine.analysis.analyzer import RUNNING, Analyzer, SourceInfo
    from callscope.engine.formats import make_parser

    text = render("hermes", [("get_weather", {"city": "Paris"})], content="ok").encode()
    analyzer = Analyzer("live", SourceInfo("model", None, "hermes", "incremental"), "token", True, make_parser("hermes"))
    live = analyzer.provisional()
    state = InspectorState(live)
    assert state.live and live.finish_cause == RUNNING and state.last == 0
    shown = []
    for i in range(0, len(text), 5):
        analyzer.feed_bytes(text[i : i + 5], float(i))
        analyzer.refresh(live)
        shown.append(state.sync())
        step = state.timebase.steps[-1]
        assert state.parse_cursor.at(step).calls == analyzer.parser.snapshot().calls
        assert state.chunk_index.count_until(step) == len(analyzer.chunks)
    assert "".join(shown) == text.decode()
    assert state.lanes[TOKENS].kind("token").xs == [float(i) for i in range(0, len(text), 5)]
    assert live.ttfd_streaming.step is not None
    final = analyzer.finish("stop")
    done = InspectorState(final)
    assert done.parse_cursor.at(final.last_step) == final.parse_at(final.last_step)
    assert not done.live


def test_utf16_offsets_count_astral_characters_twice():
    """Qt positions are UTF-16 units: an emoji before a token shifts it by two, a CJK character by one."""
    text = 'Hi 😀😀 雨 there\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "🌧️ 東京"}}\n</tool_call>'
    a = analyze_text(text, "hermes", unit="char")
    spans = InspectorState(a).spans
    assert spans.text == text
    for position in range(1, len(spans)):
        token = spans.span(position)
        start16, end16 = spans.span16(position)
        assert (start16, end16) == (len(text[: token.start].encode("utf-16-le")) // 2,
                                    len(text[: token.end].encode("utf-16-le")) // 2)
        assert spans.cut16(position) == end16
    for offset in range(len(text) + 1):
        units = len(text[:offset].encode("utf-16-le")) // 2
        assert spans.utf16_offset(offset) == units
        assert spans.char_offset(units) == offset


def test_utf16_offsets_follow_bytes_split_across_steps():
    text = "😀é東"
    a = analyze_text(text, "hermes", unit="byte")
    spans = InspectorState(a).spans
    assert spans.ends16[-1] == 4 and spans.ends[-1] == 3
    assert spans.span16(4) == (0, 2)  # the emoji's 4th byte completes it: two UTF-16 units


def test_call_verdicts_and_finish_badges_read_as_sentences():
    from callscope.engine.core.wire import Violation
    from callscope.engine.inspector.reconcile import calls_verdict, finish_badge

    assert calls_verdict([True]) == "1 call · reconstructs"
    assert calls_verdict([True, True]) == "2 calls · all reconstruct"
    assert calls_verdict([False]) == "1 call · does not reconstruct"
    assert calls_verdict([True, False, True]) == "3 calls · 1 does not reconstruct"
    assert calls_verdict([False, False, True]) == "3 calls · 2 do not reconstruct"
    assert calls_verdict([]) == "no calls"
    assert finish_badge("tool_calls", "stop", []) == "finish_reason tool_calls"
    ended = [Violation("invalid-diff", 4, "revised", 0)]
    assert finish_badge(None, "stop", ended) == "no finish_reason (stream ended: invalid-diff)"
    assert finish_badge(None, "cancelled", []) == "no finish_reason (generation cancelled)"
    assert "null" not in finish_badge(None, "stop", [])


# ----------------------------------------------------------------- QA pass 2: marker colouring


@pytest.mark.parametrize(
    "fixture, markers, arguments",
    [
        ("qwen3_coder_single", ["<tool_call>", "<function=get_weather>", "<parameter=city>", "</parameter>",
                                "<parameter=unit>", "</function>", "</tool_call>"], ["Paris", "celsius"]),
        ("hermes_single", ["<tool_call>", "</tool_call>"], ['{"city": "Paris", "unit": "celsius"}']),
        ("gpt_oss_single", ["<|start|>", "<|constrain|>", "<|call|>"], ['{"city": "Paris", "unit": "celsius"}']),
        ("deepseek_v31_single", ["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>",
                                 "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"], ['{"city": "Paris", "unit": "celsius"}']),
    ],
)
def test_markers_are_marker_coloured_and_arguments_argument_coloured(fixture, markers, arguments):
    """Colour per character, not per token: a token carrying ``>`` and a newline is split at the marker's end."""
    state = InspectorState(load_analyses(FIXTURES / "formats" / f"{fixture}.jsonl")[0])
    spans = state.spans
    text = spans.text
    kinds = spans.char_kinds()
    assert len(kinds) == len(text)
    for marker in markers:
        at = text.index(marker)
        assert {k for k, _ in kinds[at: at + len(marker)]} == {CALL}, (marker, kinds[at: at + len(marker)])
    for argument in arguments:
        at = text.index(argument)
        assert set(kinds[at: at + len(argument)]) == {(ARGUMENTS, 0)}, (argument, kinds[at: at + len(argument)])
    assert kinds[text.index("Let")][0] == "content"


def test_a_cancelled_run_shows_no_finish_reason_and_no_finish_glyph():
    """A stopped stream sent no finish_reason: the table says so in words, the lanes draw no finish star."""
    a = analyze_text('Hi <tool_call>\n{"name": "f", "arguments": {"a": 1', "hermes", cause="cancelled", size=3)
    index = ChunkIndex(a)
    finish_rows = [index.row(n) for n in range(len(index)) if a.chunks[n].kind == "finish"]
    assert finish_rows and all("None" not in r.fragment for r in finish_rows)
    assert finish_rows[-1].fragment == "no finish_reason (stream cancelled)"
    state = InspectorState(a)
    for lane in (WIRE, ATOMIC):
        assert not len(state.lanes[lane].series.get("finish", ())), lane


def test_times_use_one_format_and_the_hover_counts_in_the_analysis_unit():
    """"0.0 ms" next to "1.104 s" in one column reads as a bug; the hover says "char 5" like the window."""
    from callscope.engine.inspector.chunks import time_text

    assert time_text(0.0) == "0.000 s" and time_text(41.667) == "0.042 s" and time_text(1104.0) == "1.104 s"
    a = hermes_run()
    state = InspectorState(a)
    index = next(i for i in range(1, len(state.timebase)) if "chunk" in state.preview(i))
    text = state.preview(index)
    assert text.startswith(f"{a.unit} {state.timebase.step(index)} · ") and " ms" not in text
    assert "chunk(s)" not in text and ("1 chunk:" in text or "chunks:" in text)


def test_lane_titles_are_distinct_under_every_policy():
    for policy in ("incremental", "atomic", "llama_server"):
        lanes = InspectorState(hermes_run(policy=policy)).lanes
        titles = [lanes[key].title for key in (TOKENS, PARSE, WIRE, ATOMIC, VIOLATIONS)]
        assert len(set(titles)) == len(titles), (policy, titles)
