"""The atomic baseline and llama.cpp server semantics, against the same parse sequences."""

from callscope.engine.core.parse_model import Parse, ParsedCall
from tests.support.parse_sequences import GROWING, PARALLEL, assembled, call, run, tool_deltas


def test_atomic_sends_each_call_whole_at_the_end():
    a = run(GROWING, policy="atomic")
    deltas = tool_deltas(a)
    assert len(deltas) == 1
    step, tc = deltas[0]
    assert step == len(GROWING)
    assert tc["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert a.finish_reason == "tool_calls"
    assert a.ttfd_streaming == a.ttfd_atomic


def test_incremental_first_delta_precedes_atomic():
    a = run(GROWING)
    assert a.ttfd_streaming.step == 1
    assert a.ttfd_atomic.step == len(GROWING)


def test_llama_server_invalid_diff_ends_the_stream():
    parses = [Parse(calls=(call("f", '{"ok": True'),)), Parse(calls=(call("f", '{"ok": true}'),))]
    a = run(parses, policy="llama_server")
    assert [v.rule for v in a.violations if v.rule == "invalid-diff"] == ["invalid-diff"]
    assert a.chunks[-1].kind != "finish"
    assert a.finish_reason is None


def test_llama_server_resends_id_when_the_parser_remints_it():
    parses = [
        Parse(calls=(call("f", '{"a"', id="p1"),)),
        Parse(calls=(call("f", '{"a": 1', id="p2"),)),
        Parse(calls=(call("f", '{"a": 1}', id="p3"),)),
    ]
    a = run(parses, policy="llama_server")
    ids = [tc["id"] for _, tc in tool_deltas(a) if "id" in tc]
    assert ids == ["p1", "p2", "p3"]


def test_llama_server_announces_unnamed_calls():
    parses = [Parse(calls=(ParsedCall(None, "{"),)), Parse(calls=(ParsedCall("f", "{}"),))]
    a = run(parses, policy="llama_server")
    assert tool_deltas(a)[0][1]["function"]["name"] == ""
    assert "invalid-diff" in {v.rule for v in a.violations}


def test_llama_server_streams_clean_parallel_calls():
    a = run(PARALLEL, policy="llama_server")
    assert assembled(a)[1]["arguments"] == '{"y": 2}'
    assert a.finish_reason == "tool_calls"
    assert a.violations == []
