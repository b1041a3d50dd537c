"""The incremental policy keeps the streaming contract of the original fix, one behaviour per test.

Sources here are sequences of whole parses (as the original fix's byte-prefix
fixtures carry), so each test states exactly what the parser saw at each step.
"""

from __future__ import annotations

import json

import pytest

from callscope.engine.analysis.analyzer import Analyzer, SourceInfo
from callscope.engine.core.parse_model import Parse
from callscope.engine.core.wire import chunk_json
from tests.support.parse_sequences import GROWING, PARALLEL, assembled, call, run, tool_deltas


def test_several_deltas_for_one_call():
    a = run(GROWING)
    assert len(tool_deltas(a)) == 4
    assert a.finish_reason == "tool_calls"


def test_first_delta_per_index_carries_id_type_name():
    (_, first), *_ = tool_deltas(run(GROWING))
    assert first["index"] == 0
    assert first["id"].startswith("call_")
    assert first["type"] == "function"
    assert first["function"]["name"] == "get_weather"
    assert first["function"]["arguments"] == '{"ci'


def test_later_deltas_carry_only_argument_fragments():
    for _, tc in tool_deltas(run(GROWING))[1:]:
        assert set(tc) == {"index", "function"}
        assert set(tc["function"]) == {"arguments"}


def test_concatenated_fragments_equal_terminal_arguments():
    a = run(GROWING)
    assert assembled(a)[0]["arguments"] == '{"city": "Paris"}'
    assert a.calls[0].streamed_arguments == a.calls[0].final_arguments
    assert a.calls[0].reconstructs


def test_parallel_calls_keep_their_own_index_and_id():
    a = run(PARALLEL)
    calls = assembled(a)
    assert calls[0] == {"id": a.calls[0].id, "name": "a", "arguments": '{"x": 1}'}
    assert calls[1] == {"id": a.calls[1].id, "name": "b", "arguments": '{"y": 2}'}
    assert calls[0]["id"] != calls[1]["id"]
    assert a.finish_reason == "tool_calls"


def test_second_call_delta_never_labelled_with_first_index():
    a = run(PARALLEL)
    for step, tc in tool_deltas(a):
        fragment = tc["function"].get("arguments", "")
        if "y" in fragment:
            assert tc["index"] == 1, (step, tc)
        if "x" in fragment or fragment == " 1}":
            assert tc["index"] == 0, (step, tc)


def test_unnamed_index_withheld_and_later_call_waits():
    parses = [
        Parse(calls=(call(None, '{"q": 1'), call("later", "{}"))),
        Parse(calls=(call(None, '{"q": 1}'), call("later", "{}"))),
        Parse(calls=(call("first", '{"q": 1}'), call("later", "{}"))),
    ]
    a = run(parses)
    deltas = tool_deltas(a)
    assert all(step == 3 for step, _ in deltas), deltas
    assert [tc["index"] for _, tc in deltas] == [0, 1]
    assert assembled(a)[0]["name"] == "first"
    assert a.finish_reason == "tool_calls"


def test_regressing_arguments_are_not_reemitted():
    parses = [
        Parse(calls=(call("f", '{"ok": True'),)),
        Parse(calls=(call("f", '{"ok": true'),)),
        Parse(calls=(call("f", '{"ok": true}'),)),
    ]
    a = run(parses)
    assert assembled(a)[0]["arguments"] == '{"ok": True'
    assert len(tool_deltas(a)) == 1
    assert [v.rule for v in a.violations if v.rule == "arguments-diverged"] == ["arguments-diverged"]
    assert a.violations[0].step == 2


def test_diverged_call_is_not_reported_complete():
    parses = [Parse(calls=(call("f", '{"ok": True'),)), Parse(calls=(call("f", '{"ok": true}'),))]
    a = run(parses)
    assert not a.calls[0].reconstructs
    assert a.finish_reason == "stop"
    assert "not-reconstructed" in {v.rule for v in a.violations}


def test_renamed_call_is_not_reported_complete():
    parses = [Parse(calls=(call("read", '{"p": 1'),)), Parse(calls=(call("read_file", '{"p": 1}'),))]
    a = run(parses)
    assert assembled(a)[0]["name"] == "read"
    assert not a.calls[0].reconstructs
    assert a.finish_reason == "stop"
    assert "name-revised" in {v.rule for v in a.violations}


def test_terminal_only_call_is_delivered():
    a = run([Parse(content="thinking about it")], terminal=Parse(content="thinking about it", calls=(call("f", '{"a": 1}'),)))
    deltas = tool_deltas(a)
    assert len(deltas) == 1
    assert deltas[0][1]["function"] == {"name": "f", "arguments": '{"a": 1}'}
    assert a.finish_reason == "tool_calls"


def test_shrinking_count_is_not_complete():
    parses = [
        Parse(calls=(call("a", "{}"), call("b", '{"y": 1'))),
        Parse(calls=(call("a", "{}"),)),
    ]
    a = run(parses)
    assert a.finish_reason == "stop"
    assert {"calls-dropped", "not-reconstructed"} <= {v.rule for v in a.violations}


def test_call_still_growing_at_terminal_is_completed_by_final_suffix():
    parses = [Parse(calls=(call("f", '{"path": "/tm'),))]
    a = run(parses, terminal=Parse(calls=(call("f", '{"path": "/tmp/x"}'),)))
    deltas = tool_deltas(a)
    assert deltas[-1][1]["function"] == {"arguments": 'p/x"}'}
    assert deltas[-1][0] == 1  # the terminal parse belongs to the last step
    assert a.finish_reason == "tool_calls"


def test_changing_parser_id_is_emitted_once():
    parses = [
        Parse(calls=(call("f", '{"a"', id="parser-1"),)),
        Parse(calls=(call("f", '{"a": 1', id="parser-2"),)),
        Parse(calls=(call("f", '{"a": 1}', id="parser-3"),)),
    ]
    a = run(parses)
    ids = [tc["id"] for _, tc in tool_deltas(a) if "id" in tc]
    assert ids == ["parser-1"]
    assert a.calls[0].id == "parser-1"
    assert assembled(a)[0]["arguments"] == '{"a": 1}'
    assert a.finish_reason == "tool_calls"


def test_model_supplied_id_is_kept():
    a = run([Parse(calls=(call("f", "{}", id="abc123XYZ"),))])
    assert tool_deltas(a)[0][1]["id"] == "abc123XYZ"


def test_streaming_alone_never_marks_completion():
    analyzer = Analyzer("t", SourceInfo("fixture", None, None, "incremental"), "byte", False, None)
    for step, parse in enumerate(GROWING, start=1):
        analyzer.feed_parse(parse, step=step)
    assert all(c.finish_reason is None for c in analyzer.chunks)
    assert analyzer.chunks[-1].kind != "finish"


def test_terminal_parse_emits_nothing_new_when_streaming_caught_up():
    a = run(GROWING)
    last_step = len(GROWING)
    at_end = [c.kind for c in a.chunks if c.step == last_step]
    assert at_end == ["arguments", "finish"]  # the last fragment was streamed by the partial parse
    b = run(GROWING, terminal=GROWING[-1])
    assert [c.kind for c in b.chunks] == [c.kind for c in a.chunks]


def test_truncation_mid_call_finishes_length():
    parses = [Parse(calls=(call("f", '{"a": "lo'),)), Parse(calls=(call("f", '{"a": "long'),))]
    a = run(parses, cause="length")
    assert a.finish_reason == "length"
    assert "invalid-json-arguments" in {v.rule for v in a.violations}


def test_content_only_turn_streams_exactly_as_before():
    parses = [Parse(content="Hel"), Parse(content="Hello"), Parse(content="Hello there.")]
    streaming = run(parses)
    baseline = run(parses, policy="atomic")
    as_wire = lambda a: [chunk_json(c, a.identity)["choices"][0] for c in a.chunks]  # noqa: E731
    assert as_wire(streaming) == as_wire(baseline)
    assert streaming.finish_reason == "stop"
    assert streaming.content_streamed == "Hello there."
    assert streaming.ttfd_streaming.step is None and streaming.ttfd_atomic.step is None


@pytest.mark.parametrize("policy", ["incremental", "atomic", "llama_server"])
def test_every_chunk_is_valid_openai_chunk(policy):
    a = run(PARALLEL, policy=policy)
    ids = {chunk_json(c, a.identity)["id"] for c in a.chunks}
    assert len(ids) == 1
    first = chunk_json(a.chunks[0], a.identity)
    assert first["choices"][0]["delta"]["role"] == "assistant"
    last = chunk_json(a.chunks[-1], a.identity)
    assert last["choices"][0]["finish_reason"] == "tool_calls"
    for c in a.chunks:
        for tc in chunk_json(c, a.identity)["choices"][0]["delta"].get("tool_calls", []):
            assert isinstance(tc["index"], int)
    json.dumps([chunk_json(c, a.identity) for c in a.chunks])


def test_arguments_that_shrink_then_regrow_resume_without_resending():
    """A partial-JSON parser can drop a trailing token for a step (``12.`` -> ``12``): withhold, then resume."""
    parses = [
        Parse(calls=(call("f", '{"x": 12.'),)),
        Parse(calls=(call("f", '{"x": 12'),)),
        Parse(calls=(call("f", '{"x": 12.5'),)),
        Parse(calls=(call("f", '{"x": 12.5}'),)),
    ]
    a = run(parses)
    assert [tc["function"]["arguments"] for _, tc in tool_deltas(a)] == ['{"x": 12.', "5", "}"]
    assert a.calls[0].reconstructs and a.finish_reason == "tool_calls"
    assert [v.rule for v in a.violations] == ["arguments-diverged"]
    assert "regressed" in a.violations[0].detail


def test_content_revision_is_withheld_and_reported_once():
    parses = [Parse(content="Hello wor"), Parse(content="Hello, wor"), Parse(content="Hello, world")]
    a = run(parses)
    assert a.content_streamed == "Hello wor"
    assert [v.rule for v in a.violations] == ["content-diverged"]
