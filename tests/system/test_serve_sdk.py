"""The official openai SDK against ``callscope serve``: a shipped fixture, a proxy session, and the packaged model live.

The SDK's own streaming helpers (``chat.completions.stream``, ``responses.stream``)
assemble what serve sends: the fixture's call, streamed (hundreds of argument
deltas) or atomic (one), in either protocol; the final message without
``stream``; the model list; a recorded session's turns in order; and the
model answering live, honouring ``tools`` and ``tool_choice``.
"""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from callscope.engine.core.shipped import resolve_recording
from callscope.engine.recordings.replay import load_analyses
from tests.support.proxy_helpers import ProxyThread
from tests.support.serve_helpers import ServeProcess, ServeThread
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, Scenario, chunk, clean_call, lines_of, tool

HEADLINE = resolve_recording("headline_701_tokens")
MESSAGES = [{"role": "user", "content": "write the handler"}]
WEATHER = [{"type": "function", "function": {"name": "get_weather", "description": "weather in a city",
                                             "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                            "required": ["city"]}}}]


def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base, api_key="callscope", max_retries=0, timeout=120)


def chat_deltas(sdk: openai.OpenAI) -> tuple[int, object]:
    """How many argument deltas the SDK's helper saw, and the call it assembled."""
    with sdk.chat.completions.stream(model="m", messages=MESSAGES) as stream:
        deltas = sum(1 for event in stream if event.type == "tool_calls.function.arguments.delta")
        final = stream.get_final_completion()
    return deltas, final.choices[0].message.tool_calls[0]


@pytest.mark.parametrize("policy", ["incremental", "atomic"])
def test_the_sdk_assembles_the_headline_fixture_streamed_or_atomic(policy):
    [expected] = load_analyses(HEADLINE, policy)
    with ServeThread.of(HEADLINE, policy, speed=None) as serve:
        sdk = client(serve.v1)
        deltas, call = chat_deltas(sdk)
        with sdk.responses.stream(model="m", input="write the handler") as stream:
            response_deltas = sum(1 for e in stream if e.type == "response.function_call_arguments.delta")
            response = stream.get_final_response()
        plain = sdk.chat.completions.create(model="m", messages=MESSAGES)
        models = [m.id for m in sdk.models.list()]
        serve.wait_turns(4)
    want = expected.calls[0]
    assert (call.function.name, call.function.arguments) == (want.name, want.streamed_arguments)
    assert [(o.name, o.arguments) for o in response.output] == [(want.name, want.streamed_arguments)]
    assert plain.choices[0].message.tool_calls[0].function.arguments == want.streamed_arguments
    assert models == ["headline_701_tokens"]
    if policy == "atomic":
        assert deltas == response_deltas == 1
    else:
        assert deltas > 300 and response_deltas > 300


def test_the_sdk_gets_a_proxy_sessions_turns_in_order(server, tmp_path):
    second = lines_of(ROLE, chunk(tool(0, "call_b", "read_file", '{"path": "a.txt"}')), FINISH_TOOLS, DONE)
    server.play("sdk-one", Scenario(lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE)))
    server.play("sdk-two", Scenario(second))
    with ProxyThread(f"http://127.0.0.1:{server.port}", tmp_path) as proxy:
        for name in ("sdk-one", "sdk-two"):
            httpx.post(f"{proxy.url}/s/{name}/v1/chat/completions", json={"stream": True, "messages": MESSAGES},
                       timeout=30)
        proxy.wait_turns(2)
    [session] = [p for p in tmp_path.iterdir() if p.is_dir()]
    with ServeThread.of(str(session)) as serve:
        sdk = client(serve.v1)
        calls = [chat_deltas(sdk)[1] for _ in range(2)]
        turns = serve.wait_turns(2)
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("call_a", "get_weather", {"city": "Paris", "days": 3}), ("call_b", "read_file", {"path": "a.txt"})]
    assert [t.served for t in turns] == ["turn-0001", "turn-0002"]


@pytest.mark.model
def test_the_sdk_against_the_model_live():
    with ServeProcess(["--model", "--temp", "0", "--max-tokens", "96"]) as serve:
        sdk = client(serve.v1)
        with sdk.chat.completions.stream(model="smol", messages=[{"role": "user", "content": "Weather in Paris?"}],
                                         tools=WEATHER, tool_choice={"type": "function",
                                                                     "function": {"name": "get_weather"}}) as stream:
            deltas = sum(1 for event in stream if event.type == "tool_calls.function.arguments.delta")
            final = stream.get_final_completion()
        call = final.choices[0].message.tool_calls[0]
        answered = [{"role": "user", "content": "Weather in Paris?"},
                    {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                    {"role": "tool", "tool_call_id": call.id, "content": "sunny"}]
        text = sdk.chat.completions.create(model="smol", messages=answered, tools=WEATHER, tool_choice="auto")
        with sdk.responses.stream(model="smol", input="Weather in Paris?", tools=[
                {"type": "function", "name": "get_weather", "parameters": WEATHER[0]["function"]["parameters"]}],
                tool_choice="required") as stream:
            response = stream.get_final_response()
        with pytest.raises(openai.BadRequestError, match="not among the request's tools"):
            sdk.chat.completions.create(model="smol", messages=MESSAGES, tools=WEATHER,
                                        tool_choice={"type": "function", "function": {"name": "nope"}})
        assert serve.wait_for(lambda: len(serve.turn_lines()) >= 4, 60), serve.lines
    assert call.function.name == "get_weather" and "city" in json.loads(call.function.arguments)
    assert deltas > 1  # streamed in fragments, as the incremental policy emits them
    assert final.choices[0].finish_reason == "tool_calls"
    assert text.choices[0].message.tool_calls is None and text.choices[0].message.content
    assert [o.type for o in response.output] == ["function_call"] and response.output[0].name == "get_weather"
    assert any("chat · 1 call" in line and "0 violations" in line for line in serve.turn_lines()), serve.lines


def test_the_sdk_loops_over_the_shipped_quirks_library():
    """``serve --quirks``: the model list names every quirk; the SDK gets each chat quirk by name (it assembles it or
    raises, as the real library does), and a quirk asked in another protocol is a clear 400."""
    from callscope.engine.serve import quirks_folder, serve_quirks

    if not quirks_folder().is_dir():
        pytest.skip("the quirks library (fixtures/quirks) is not in this checkout yet")
    replier = serve_quirks()
    chat = [s.name for s in replier.source.streams if s.protocol == "chat"]
    with ServeThread(replier, speed=None) as serve:
        sdk = client(serve.v1)
        assert [m.id for m in sdk.models.list()] == replier.names()
        outcomes = {}
        for name in chat:
            try:
                with sdk.chat.completions.stream(model=name, messages=MESSAGES) as stream:
                    for _ in stream:
                        pass
                    outcomes[name] = stream.get_final_completion().choices[0].message.tool_calls
            except Exception as exc:  # noqa: BLE001 - a real client raising on a quirk is an outcome
                outcomes[name] = exc
        with pytest.raises(openai.BadRequestError, match="served only as recorded"):
            sdk.responses.create(model=chat[0], input="x", stream=True)
        serve.wait_turns(len(chat) + 2)
    assert "clean_chat" in outcomes and [c.function.name for c in outcomes["clean_chat"]] == ["get_weather", "get_time"]
    assert len(outcomes) >= 10
