"""Each protocol's writer (``ProtocolSpec.writer``) says a response the way its reader, and real clients, read it.

Responses go through every protocol's writer and back through callscope's own
reader and client profiles (the official openai SDK for Chat and Responses, the
naive client for all): the same calls, the same content, no violation; the
non-streamed body carries the same message.
"""

from __future__ import annotations

import json

import pytest

from callscope.engine.core.shipped import resolve_recording
from callscope.engine.core.wire import ARGUMENTS, CONTENT, FINISH, HEADER, REASONING, StreamIdentity, WireChunk
from callscope.engine.recordings.replay import load_analyses
from callscope.engine.streams.conformance import analyze_capture_lines
from callscope.engine.streams.protocols import PROTOCOLS, get_protocol
from callscope.engine.streams.writer import final_message, finish_of, write_response

IDENTITY = StreamIdentity("chatcmpl-writer-test", 7, "test-model")


def two_calls() -> list[WireChunk]:
    return [
        WireChunk(1, 10.0, REASONING, "Think."),
        WireChunk(2, 20.0, CONTENT, "Let me check."),
        WireChunk(3, 30.0, HEADER, "", 0, "call_a", "get_weather"),
        WireChunk(4, 40.0, ARGUMENTS, '{"city": ', 0),
        WireChunk(5, 50.0, ARGUMENTS, '"Paris"}', 0),
        WireChunk(6, 60.0, HEADER, '{"path": "a.txt"}', 1, "call_b", "read_file"),
        WireChunk(7, 70.0, FINISH, finish_reason="tool_calls"),
    ]


def read_back(protocol: str, text: str):
    lines = [(float(i), line) for i, line in enumerate(text.split("\n")[:-1])]
    return analyze_capture_lines(lines, protocol=protocol)


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_a_response_written_reads_back_the_same(protocol):
    writer = get_protocol(protocol).writer(IDENTITY)
    analysis = read_back(protocol, write_response(writer, two_calls()))
    assert analysis.violations == [], [v.detail for v in analysis.violations]
    assert [(c.id, c.name, c.streamed_arguments, c.reconstructs) for c in analysis.calls] == [
        ("call_a", "get_weather", '{"city": "Paris"}', True), ("call_b", "read_file", '{"path": "a.txt"}', True)]
    assert analysis.terminal.content == "Let me check." and analysis.terminal.reasoning == "Think."
    assert set(analysis.source.extra["clients"]) >= {"naive"}
    assert analysis.ttfd_streaming.step is not None


@pytest.mark.parametrize("protocol", list(PROTOCOLS))
def test_the_headline_fixture_written_streamed_and_atomic(protocol):
    for policy in ("incremental", "atomic"):
        [source] = load_analyses(resolve_recording("headline_701_tokens"), policy)
        writer = get_protocol(protocol).writer(source.identity)
        analysis = read_back(protocol, write_response(writer, source.chunks))
        assert [(c.name, c.streamed_arguments) for c in analysis.calls] == [
            (c.name, c.streamed_arguments) for c in source.calls]
        assert analysis.violations == [] and analysis.calls[0].reconstructs
        assert (len(analysis.steps) > 100) == (policy == "incremental")  # streamed, or the call in one event


def test_the_non_streamed_bodies():
    chat = final_message(get_protocol("chat").writer(IDENTITY), two_calls())
    message = chat["choices"][0]["message"]
    assert chat["object"] == "chat.completion" and chat["choices"][0]["finish_reason"] == "tool_calls"
    assert message["content"] == "Let me check." and [c["function"]["name"] for c in message["tool_calls"]] == [
        "get_weather", "read_file"]
    responses = final_message(get_protocol("responses").writer(IDENTITY), two_calls())
    assert responses["status"] == "completed"
    assert [item["type"] for item in responses["output"]] == ["reasoning", "message", "function_call", "function_call"]
    assert json.loads(responses["output"][2]["arguments"]) == {"city": "Paris"}
    anthropic = final_message(get_protocol("anthropic").writer(IDENTITY), two_calls())
    assert anthropic["stop_reason"] == "tool_use"
    assert [b["type"] for b in anthropic["content"]] == ["thinking", "text", "tool_use", "tool_use"]
    assert anthropic["content"][2]["input"] == {"city": "Paris"}


def test_the_openai_sdk_parses_the_non_streamed_chat_and_responses_bodies():
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response

    chat = ChatCompletion.model_validate(final_message(get_protocol("chat").writer(IDENTITY), two_calls()))
    assert chat.choices[0].message.tool_calls[1].function.name == "read_file"
    response = Response.model_validate(final_message(get_protocol("responses").writer(IDENTITY), two_calls()))
    assert [o.type for o in response.output][-1] == "function_call"


def test_finishes_are_said_in_each_protocol():
    assert finish_of("tool_use", True) == "tool_calls" and finish_of("max_tokens", False) == "length"
    assert finish_of("tool_calls", False) == "stop" and finish_of(None, True) == "tool_calls"
    cut = [WireChunk(1, 0.0, CONTENT, "abc"), WireChunk(2, 0.0, FINISH, finish_reason="length")]
    for protocol in PROTOCOLS:
        analysis = read_back(protocol, write_response(get_protocol(protocol).writer(IDENTITY), cut))
        assert analysis.finish_cause == "length", protocol
