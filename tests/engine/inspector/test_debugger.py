"""The inspector as a debugger, without a window: marker spans from parse events, held text and why,
the parse diff of a step, jumps between marks, and what a cancelled stream may (not) claim."""

from __future__ import annotations

import json

import pytest

from callscope.engine.analysis.report import ttfd_gain
from callscope.engine.formats.samples import render
from callscope.engine.inspector.reconcile import reconcile
from callscope.engine.inspector.state import BOOKMARK, CALL, EVENT, REVISION, VIOLATION, InspectorState
from callscope.engine.inspector.text_spans import ARGUMENTS
from callscope.engine.recordings.replay import load_analyses
from callscope.engine.recordings.replay_text import analyze_text
from tests.support.paths import ROOT

FIXTURES = ROOT / "fixtures"

STRING_TOOL = [{"type": "function", "function": {"name": "write_file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}}}]


def kinds_of(state: InspectorState, needle: str, start: int = 0) -> set:
    text = state.spans.text
    at = text.index(needle, start)
    return set(state.spans.char_kinds()[at: at + len(needle)])


# ----------------------------------------------------------------- defect 4: markers are what the parser says


def test_a_closing_marker_inside_a_json_string_is_argument_text():
    state = InspectorState(load_analyses(FIXTURES / "cases" / "closing_marker_in_string.jsonl")[0])
    text = state.spans.text
    inside = text.index("</tool_call>")  # the first one is inside the "content" string
    assert inside < text.rindex("</tool_call>")
    assert kinds_of(state, "</tool_call>") == {(ARGUMENTS, 0)}
    assert kinds_of(state, "<tool_call> again") == {(ARGUMENTS, 0)}
    assert {k for k, _ in kinds_of(state, "</tool_call>", text.rindex("</tool_call>"))} == {"call"}  # the real closer


def test_a_parameter_closer_quoted_in_a_qwen3_coder_value_is_argument_text():
    text = render("qwen3_coder", [("write_file", {"path": "a.xml", "content": "write </parameter> here"})])
    state = InspectorState(analyze_text(text, "qwen3_coder", tools=STRING_TOOL, size=3))
    assert json.loads(state.analysis.calls[0].final_arguments)["content"] == "write </parameter> here"
    assert kinds_of(state, "write </parameter> here") == {(ARGUMENTS, 0)}
    last = text.rindex("</parameter>")
    assert {k for k, _ in kinds_of(state, "</parameter>", last)} == {"call"}
    assert {k for k, _ in kinds_of(state, "<parameter=content>")} == {"call"}


def test_another_formats_marker_read_as_content_is_content():
    text = render("mistral", [("get_weather", {"city": "Paris"})], content="Checking.")
    state = InspectorState(analyze_text(text, "hermes", size=4))  # hermes reads Mistral's markup as plain text
    assert state.analysis.calls == []
    assert {k for k, _ in kinds_of(state, "[TOOL_CALLS]")} == {"content"}


def test_a_format_unknown_to_the_pane_is_coloured_from_its_events(testfmt):
    """A format registered elsewhere needs no pattern for the pane: its events say what is markup."""
    from tests.support import plugin_format

    text = plugin_format.write([("get_weather", {"city": "Paris"})], "ok ", "")
    state = InspectorState(analyze_text(text, plugin_format.FORMAT_ID, size=2))
    assert state.analysis.calls and {k for k, _ in kinds_of(state, "Paris")} == {ARGUMENTS}
    assert {k for k, _ in kinds_of(state, "ok")} == {"content"}
    assert {k for k, _ in kinds_of(state, plugin_format.OPEN + "get_weather")} == {"call"}


@pytest.fixture
def testfmt():
    from callscope.engine.formats import register_format, unregister_format
    from tests.support import plugin_format

    register_format(plugin_format.SPEC, replace=True)
    yield plugin_format.SPEC
    unregister_format(plugin_format.FORMAT_ID)


# ----------------------------------------------------------------- held text and why


def test_a_half_typed_marker_is_held_with_its_reason():
    state = InspectorState(analyze_text('Hi <tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>', "hermes",
                                        size=4))
    index = next(i for i in range(1, len(state.timebase)) if state.spans.text[: state.spans.cut(i)].endswith("<tool"))
    held = state.held_text(index)
    assert held is not None and held.text == "<tool"
    assert "<tool_call>" in held.reason and "half-typed" in held.reason
    assert state.held_text(state.last) is None  # a finished stream holds nothing at its end


def test_a_value_of_undeclared_type_is_held_until_complete():
    text = "<tool_call>\n<function=f>\n<parameter=n>\n12345\n</parameter>\n</function>\n</tool_call>"
    state = InspectorState(analyze_text(text, "qwen3_coder", size=2))  # no tools: the type of n is unknown
    index = next(i for i in range(1, len(state.timebase)) if state.spans.text[: state.spans.cut(i)].endswith("123"))
    held = state.held_text(index)
    assert held is not None and "123" in held.text
    assert "'n'" in held.reason and "type" in held.reason


# ----------------------------------------------------------------- defect 2: a cancelled stream


def cancelled_mistral():
    return analyze_text('Sure.[TOOL_CALLS][{"name": "get_', "mistral", size=3, rate=20.0, cause="cancelled")


def test_a_cancelled_stream_never_flushes_a_held_call_as_content():
    a = cancelled_mistral()
    sent = "".join(c.text for c in a.chunks if c.kind == "content")
    assert sent == "Sure." and "[TOOL_CALLS]" not in sent and '{"name"' not in sent
    assert a.terminal.content == "Sure."
    state = InspectorState(a)
    held = state.held_text(state.last)
    assert held is not None and held.text == '[TOOL_CALLS][{"name": "get_'
    assert "cancelled" in held.reason and "never went out" in held.reason
    assert {k for k, _ in kinds_of(state, '[{"name"')} == {"held"}


def test_a_cancelled_streams_baseline_never_emits_and_no_gain_is_claimed():
    a = analyze_text('<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par', "hermes", size=3, rate=20.0,
                     cause="cancelled")
    assert a.ttfd_streaming.step is not None  # the incremental policy did stream the header
    assert [c for c in a.baseline_chunks if c.is_tool_call] == [] and a.ttfd_atomic.step is None
    assert ttfd_gain(a) is None


def test_a_cancelled_stream_is_not_a_green_verdict():
    a = cancelled_mistral()
    state = InspectorState(a)
    result = reconcile(a, state.held_text(state.last))
    assert not result.ok and result.cut
    assert "never sent" in result.held_sentence and "get_" in result.held_sentence


# ----------------------------------------------------------------- the parse diff of a step


def test_the_step_diff_says_what_was_added_sent_and_withheld():
    state = InspectorState(load_analyses(FIXTURES / "prefix" / "unnamed_holds_back.txt")[0])
    first = state.step_diff(2)
    assert any("call 1 named open_url" in line for line in first.added)
    reasons = {w.what: w.why for w in first.withheld}
    assert "name is not complete" in reasons["call 0"]
    assert "behind call 0" in reasons["call 1 open_url"]
    named = next(i for i in range(1, len(state.timebase)) if any("named search" in x for x in state.step_diff(i).added))
    assert any(line.startswith("header[0] search") for line in state.step_diff(named).sent)
    assert not state.step_diff(named).withheld


def test_the_step_diff_names_a_broken_append_only_rule():
    state = InspectorState(load_analyses(FIXTURES / "prefix" / "arguments_regress.txt")[0])
    step = next(v.step for v in state.analysis.violations if v.rule == "arguments-diverged")
    diff = state.step_diff(state.timebase.index_of_step(step))
    assert any("no longer extend what was sent" in w.why and "append-only" in w.why for w in diff.withheld)


def test_the_atomic_baseline_withholds_every_call_until_the_end():
    text = render("hermes", [("get_weather", {"city": "Paris"})])
    state = InspectorState(analyze_text(text, "hermes", "atomic", size=4))
    middle = state.step_diff(state.last // 2)
    assert any("atomic" in w.why for w in middle.withheld)
    assert not any("atomic" in w.why for w in state.step_diff(state.last).withheld)


# ----------------------------------------------------------------- jumps


def test_jumps_between_violations_revisions_calls_events_and_bookmarks():
    state = InspectorState(load_analyses(FIXTURES / "prefix" / "arguments_regress.txt")[0])
    state.home()
    violations = state.mark_steps(VIOLATION)
    assert violations and state.next_mark(VIOLATION) and state.cursor_step == violations[0]
    revisions = state.mark_steps(REVISION)
    state.home()
    assert revisions and state.next_mark(REVISION) and state.cursor_step == revisions[0]
    state.end()
    assert state.next_mark(CALL, -1) and state.cursor_step == state.mark_steps(CALL)[-1]
    events = state.mark_steps(EVENT)
    state.home()
    state.next_mark(EVENT)
    assert state.cursor_step == events[0]
    assert state.toggle_bookmark(events[0]) and state.mark_steps(BOOKMARK) == [events[0]]
    state.end()
    assert state.next_mark(BOOKMARK, -1) and state.cursor_step == events[0]
    assert not state.toggle_bookmark(events[0]) and state.mark_steps(BOOKMARK) == []
