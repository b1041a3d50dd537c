"""The three streaming protocols: OpenAI Responses and Anthropic Messages next to Chat Completions.

Canned streams written from each API's public description of its streaming
events, played by the loopback server (tests/support/sse_server.py); captured by the
CLI, recorded, and replayed to the same report. The Responses streams are also
read by the official openai SDK (the openai-python profile).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from callscope.cli import main as cli_main
from callscope.engine.capture.request import RequestError, build_body, resolve_endpoint
from callscope.engine.streams.conformance import analyze_capture_lines
from tests.support.protocol_streams import ARGUMENTS, anthropic_stream, event, responses_stream
from tests.support.schema import validate_report
from tests.support.sse_server import ROLE, Scenario, chunk, lines_of

#: Rule-by-rule expectations pinned with the profiles they were written for (see conftest.legacy_profiles).
pytestmark = pytest.mark.usefixtures("legacy_profiles")


def rules(analysis) -> set[str]:
    return {v.rule for v in analysis.violations}


# ====================================================================== OpenAI Responses


def test_a_clean_responses_stream_captures_records_and_replays(server, tmp_path, capsys):
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]))
    url = server.play("resp-clean", Scenario(lines_of(*responses_stream()))) + "/v1/responses"
    out = tmp_path / "resp.jsonl"
    code = cli_main(["capture", url, "--prompt", "weather?", "--tools", str(tools), "--tool-choice", "get_weather",
                     "--max-tokens", "64", "--record", str(out), "--json", "--strict"])
    live = json.loads(capsys.readouterr().out)
    assert code == 0, live
    validate_report(live)
    body = server.requests[-1]["body"]
    assert body["input"] == [{"role": "user", "content": "weather?"}] and "messages" not in body
    assert body["tools"] == [{"type": "function", "name": "get_weather", "parameters": {}}]
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"} and body["max_output_tokens"] == 64
    run = live["runs"][0]
    assert run["source"]["protocol"] == "responses" and run["violations"] == [] and run["finish_reason"] == "completed"
    [call] = run["calls"]
    assert (call["id"], call["name"], call["streamed_arguments"], call["reconstructs"]) == (
        "call_1", "get_weather", "".join(ARGUMENTS), True)
    assert {c["profile"]: c["matches"] for c in call["clients"]} == {"openai-python": True, "naive": True}
    assert cli_main(["replay", str(out), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)["runs"][0]
    run["source"].pop("path"), replayed["source"].pop("path")
    assert replayed == run


@pytest.mark.parametrize("case, expected", [
    ("unannounced", {"delta-unannounced", "client-error"}),  # naive: KeyError
    ("after-done", {"delta-after-done", "done-mismatch", "client-mismatch"}),
    ("done-differs", {"done-mismatch", "client-mismatch"}),
    # the SDK raises at the end (no response.completed): the truncation says it, no client-error on top
    ("cut", {"stream-truncated"}),
    ("completed-but-cut", {"invalid-json-arguments", "finish-reason-mismatch"}),
])
def test_responses_contract_rules(case, expected):
    if case == "unannounced":
        lines = responses_stream(extra=[event("response.function_call_arguments.delta", sequence_number=50,
                                              item_id="fc_9", output_index=1, delta='{"x": 1}')])
    elif case == "after-done":
        lines = responses_stream()
        lines.insert(-2, event("response.function_call_arguments.delta", sequence_number=60, item_id="fc_1",
                               output_index=0, delta=" "))
    elif case == "done-differs":
        lines = responses_stream(done='{"city": "Lyon", "days": 3}')
    elif case == "cut":
        lines = responses_stream(end=False)[:-2]
    else:
        lines = responses_stream(deltas=['{"city"', ': "Par'])
    a = analyze_capture_lines(lines_of(*lines), protocol="responses")
    assert rules(a) == expected, [v.to_json() for v in a.violations]
    assert not a.calls[-1].reconstructs


# ====================================================================== Anthropic Messages


def test_a_clean_anthropic_stream_captures_records_and_replays(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-very-secret-42")
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"type": "function", "function": {
        "name": "get_weather", "description": "weather", "parameters": {"type": "object", "properties": {}}}}]))
    url = server.play("ant-clean", Scenario(lines_of(*anthropic_stream())))
    out = tmp_path / "ant.jsonl"
    code = cli_main(["capture", url, "--protocol", "anthropic", "--messages", str(_messages(tmp_path)),
                     "--prompt", "weather?", "--tools", str(tools), "--tool-choice", "required",
                     "--record", str(out), "--json", "--strict"])
    captured = capsys.readouterr()
    assert code == 0, captured.out
    request = server.requests[-1]
    assert request["path"].endswith("/v1/messages")
    assert request["headers"]["x-api-key"] == "sk-ant-very-secret-42" and "authorization" not in request["headers"]
    assert request["headers"]["anthropic-version"]
    body = request["body"]
    assert body["system"] == "Be brief." and [m["role"] for m in body["messages"]] == ["user"]
    assert body["tools"] == [{"name": "get_weather", "description": "weather",
                              "input_schema": {"type": "object", "properties": {}}}]
    assert body["tool_choice"] == {"type": "any"} and body["max_tokens"] > 0
    for text in (captured.out, captured.err, out.read_text()):
        assert "sk-ant-very-secret" not in text
    run = json.loads(captured.out)["runs"][0]
    assert run["source"]["protocol"] == "anthropic" and run["violations"] == []
    assert run["content"]["final"] == "Checking." and run["finish_reason"] == "tool_use"
    [call] = run["calls"]
    assert (call["id"], call["name"], call["streamed_arguments"], call["reconstructs"]) == (
        "toolu_1", "get_weather", "".join(ARGUMENTS), True)
    assert cli_main(["replay", str(out), "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)["runs"][0]
    run["source"].pop("path"), replayed["source"].pop("path")
    assert replayed == run


def _messages(folder) -> Any:
    path = folder / "messages.json"
    path.write_text(json.dumps([{"role": "system", "content": "Be brief."}]))
    return path


@pytest.mark.parametrize("case, expected", [
    ("bad-json", {"invalid-json-arguments", "finish-reason-mismatch"}),
    ("end-turn", {"finish-reason-mismatch"}),
    ("after-stop", {"delta-after-done"}),
    ("unannounced", {"delta-unannounced", "client-error"}),
    ("no-stop", {"stream-truncated"}),
])
def test_anthropic_contract_rules(case, expected):
    if case == "bad-json":
        lines = anthropic_stream(pieces=['{"city"', ': "Par'])
    elif case == "end-turn":
        lines = anthropic_stream(stop_reason="end_turn")
    elif case == "after-stop":
        lines = anthropic_stream(extra=[event("content_block_delta", index=1,
                                              delta={"type": "input_json_delta", "partial_json": " "})])
    elif case == "unannounced":
        lines = anthropic_stream(extra=[event("content_block_delta", index=5,
                                              delta={"type": "input_json_delta", "partial_json": "{}"})])
    else:
        lines = anthropic_stream(stop=False)
    a = analyze_capture_lines(lines_of(*lines))  # recognised from its events: no protocol given
    assert a.source.extra["protocol"] == "anthropic"
    assert rules(a) == expected, [v.to_json() for v in a.violations]


def test_a_tool_use_block_without_input_deltas_has_empty_arguments():
    lines = [line for line in anthropic_stream(pieces=[]) if "input_json_delta" not in line]
    a = analyze_capture_lines(lines_of(*lines))
    assert a.violations == [] and a.calls[0].streamed_arguments == "{}" and a.calls[0].reconstructs


# ====================================================================== which protocol


def test_urls_name_their_protocol():
    assert resolve_endpoint("http://h:1") == ("http://h:1/v1/chat/completions", "chat")
    assert resolve_endpoint("http://h:1/v1", "responses") == ("http://h:1/v1/responses", "responses")
    assert resolve_endpoint("http://h:1", "anthropic") == ("http://h:1/v1/messages", "anthropic")
    assert resolve_endpoint("https://h/x/v1/messages") == ("https://h/x/v1/messages", "anthropic")
    assert resolve_endpoint("https://h/v1/responses/") == ("https://h/v1/responses", "responses")
    with pytest.raises(RequestError, match="the URL is the responses endpoint"):
        resolve_endpoint("http://h/v1/responses", "chat")


def test_an_endpoint_url_is_used_as_given_not_appended_to(server, capsys):
    url = server.play("resp-url", Scenario(lines_of(*responses_stream()))) + "/v1/responses"
    assert cli_main(["capture", url, "--prompt", "x"]) == 0
    assert server.requests[-1]["path"].endswith("/v1/responses") and "chat/completions" not in capsys.readouterr().out


def test_a_stream_of_an_unknown_protocol_is_reported_as_unknown_not_truncated(server, capsys):
    unknown = lines_of('data: {"token": "hi", "seq": 1}', 'data: {"token": "!", "seq": 2}')
    a = analyze_capture_lines(unknown)
    assert rules(a) == {"protocol-unknown"} and not a.truncated and a.source.extra["protocol"] == "unknown"
    url = server.play("unknown", Scenario(unknown))
    assert cli_main(["capture", url, "--prompt", "x", "--json"]) == 0  # a complete stream of something else
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert [v["rule"] for v in run["violations"]] == ["protocol-unknown"]


def test_the_protocol_is_recognised_from_the_events():
    assert analyze_capture_lines(lines_of(*responses_stream())).source.extra["protocol"] == "responses"
    assert analyze_capture_lines(lines_of(ROLE, chunk(finish="stop"), "data: [DONE]")).source.extra["protocol"] == "chat"


def test_request_bodies_per_protocol(tmp_path):
    body = build_body(prompt="hi", max_tokens=5, protocol="responses")
    assert body == {"input": [{"role": "user", "content": "hi"}], "max_output_tokens": 5, "stream": True}
    body = build_body(prompt="hi", tool_choice="auto", protocol="anthropic")
    assert body["tool_choice"] == {"type": "auto"} and body["max_tokens"] == 1024
    assert build_body(prompt="hi", max_tokens=7, protocol="anthropic")["max_tokens"] == 7
