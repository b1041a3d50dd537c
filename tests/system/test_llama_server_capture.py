"""Capture against a real OpenAI-compatible server: llama-cpp-python's own, with the packaged model.

Started once for the module on 127.0.0.1 and a free port. What it really sends
(checked by hand, and pinned here): with ``--chat_format chatml-function-calling``
and a *named* ``tool_choice`` it streams the call, grammar-constrained, one
fragment per token, but repeats ``id`` and ``function.name`` on every fragment
(plus a legacy ``delta.function_call``): callscope must report exactly
``id-repeated``, ``name-repeated``, ``legacy-function-call``, and ``client-mismatch``
(the official SDK, pointed at the same server, builds the name and id once per
fragment), and must not call the call reconstructed. With ``tool_choice: auto`` it refuses to
stream ("Automatic streaming tool choice is not supported") *after* sending
200 and the event-stream headers: an empty stream, which callscope must report
as truncated.
"""

from __future__ import annotations

import json

import pytest

from callscope.cli import main as cli_main
from callscope.engine.capture import CaptureRequest, analyze_capture_result, capture_sync, endpoint_url
from tests.support.llama_server import (
    BROKEN_BY_CLIENTS,
    MESSAGES,
    NAMED,
    TOOLS,
)

pytestmark = pytest.mark.model


def request(base: str, **body) -> CaptureRequest:
    payload = {"messages": MESSAGES, "temperature": 0.0, "seed": 7, "max_tokens": 48, **body, "stream": True}
    return CaptureRequest(endpoint_url(base), payload, connect_timeout=10, read_timeout=60)


def test_named_tool_choice_streams_a_call_with_repeated_id_and_name(llama_server):
    result = capture_sync(request(llama_server, tools=TOOLS, tool_choice=NAMED))
    assert result.error is None and result.status == 200 and result.done
    analysis = analyze_capture_result(result)
    assert {v.rule for v in analysis.violations} == BROKEN_BY_CLIENTS
    assert analysis.finish_reason == "tool_calls" and not analysis.truncated
    [call] = analysis.calls
    assert call.name == "get_weather" and call.id.startswith("call_")
    assert "city" in json.loads(call.streamed_arguments) and not call.reconstructs
    sdk = next(c for c in call.clients if c["profile"] == "openai-python")
    fragments_sent = sdk["name"].count("get_weather")
    assert fragments_sent >= 4 and sdk["name"] == "get_weather" * fragments_sent and not sdk["matches"]
    # streamed, not atomic: the header right after the role chunk, then one fragment per token
    assert call.first_delta.step == 2
    fragments = [c for c in analysis.chunks if c.is_tool_call and c.text]
    assert len(fragments) >= 4
    assert analysis.ttfd_streaming.ms < analysis.ttfd_atomic.ms
    # the repeats are really on the wire, on every later fragment
    data = [line for _, line in result.lines if line.startswith("data: ")]
    later = [json.loads(line[6:]) for line in data[2:-2]]
    assert all(c["choices"][0]["delta"]["tool_calls"][0]["id"] == call.id for c in later)
    assert all(c["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "get_weather" for c in later)


def test_plain_chat_stream_is_clean(llama_server):
    result = capture_sync(request(llama_server, max_tokens=6))
    analysis = analyze_capture_result(result)
    assert analysis.violations == []
    assert analysis.terminal.content and analysis.calls == []
    assert analysis.finish_reason == "length" and analysis.finish_cause == "length"


def test_auto_tool_choice_stream_is_reported_truncated(llama_server):
    result = capture_sync(request(llama_server, tools=TOOLS, tool_choice="auto"))
    # No event at all. On a loaded machine the server may first send its keep-alive comment
    # (": ping - <time>", after 15 s): a comment is recorded, but it is not data.
    assert result.status == 200
    assert all(line.startswith(":") for _, line in result.lines), result.lines
    analysis = analyze_capture_result(result)
    assert analysis.steps == []
    assert [v.rule for v in analysis.violations] == ["stream-truncated"]
    assert "without sending a single data line" in analysis.violations[0].detail


def test_cli_capture_of_the_real_server_records_and_replays(llama_server, tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    out = tmp_path / "llama.jsonl"
    code = cli_main(["capture", llama_server, "--prompt", "Weather in Paris?", "--tools", str(tools),
                     "--tool-choice", "get_weather", "--max-tokens", "48", "--record", str(out), "--strict", "--json"])
    live = json.loads(capsys.readouterr().out)["runs"][0]
    assert code == 1  # --strict: the repeats are violations
    assert {v["rule"] for v in live["violations"]} == BROKEN_BY_CLIENTS
    assert cli_main(["replay", str(out), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)["runs"][0]
    live["source"].pop("path"), replayed["source"].pop("path")
    assert replayed == live


def test_the_official_sdk_on_the_real_server_gets_what_the_profile_says(llama_server):
    """The openai SDK as an application uses it, against the same server: it builds exactly what the
    openai-python profile says it builds from callscope's capture (same seed, temperature 0)."""
    import openai

    client = openai.OpenAI(base_url=llama_server + "/v1", api_key="unused", max_retries=0)
    with client.chat.completions.stream(model="x", messages=MESSAGES, tools=TOOLS, tool_choice=NAMED,
                                        temperature=0.0, seed=7, max_tokens=48) as stream:
        for _ in stream:
            pass
        [got] = stream.get_final_completion().choices[0].message.tool_calls
    analysis = analyze_capture_result(capture_sync(request(llama_server, tools=TOOLS, tool_choice=NAMED)))
    sdk = next(c for c in analysis.calls[0].clients if c["profile"] == "openai-python")
    assert got.function.name == sdk["name"] != analysis.calls[0].name  # the SDK's name is not the one meant
    assert got.function.arguments == sdk["arguments"]
    assert len(got.id) == len(sdk["id"]) and got.id != analysis.calls[0].id  # ids are minted per request
