"""Verdicts by client: what real clients assemble from a stream, and the bug classes the lenient reading missed.

The openai-python profile is the official SDK itself, run on the recorded
events; these tests also point the SDK, as an application would, at the
canned loopback server (tests/support/sse_server.py) and check that what it assembles
over HTTP is what callscope's profile says it assembles, crash for crash.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from callscope.cli import main as cli_main
from callscope.engine.capture import analyze_capture_result, capture_sync
from callscope.engine.capture.request import CaptureRequest, endpoint_url
from callscope.engine.streams.clients import PROFILES, default_profiles, parse_profiles
from callscope.engine.streams.conformance import analyze_capture_lines, analyze_capture_streams
from tests.support.schema import validate_report
from tests.support.sse_server import (
    ARGS,
    DONE,
    FINISH_TOOLS,
    ROLE,
    STREAM_ID,
    Scenario,
    chunk,
    clean_call,
    lines_of,
    tool,
)

BODY = {"messages": [{"role": "user", "content": "weather in Paris?"}], "stream": True}
#: The profiles these bug classes were written for (every default profile is judged in tests/system/test_differential.py).
SDK = ("openai-python", "naive")


def rules(analysis) -> set[str]:
    return {v.rule for v in analysis.violations}


def raw(obj: dict[str, Any]) -> str:
    return "data: " + json.dumps(obj)


def choice_chunk(choices: Any, **fields: Any) -> str:
    return raw({"id": STREAM_ID, "object": "chat.completion.chunk", "created": 1, "model": "canned",
                "choices": choices, **fields})


def on_choice(index: int, delta: dict[str, Any], finish: str | None = None) -> str:
    return choice_chunk([{"index": index, "delta": delta, "finish_reason": finish}])


def sdk(profile_calls: list[dict[str, Any]], name: str = "openai-python") -> dict[str, Any]:
    return next(c for c in profile_calls if c["profile"] == name)


# ====================================================================== the bug classes, one stream each

#: name -> (lines, the rules it must raise). Every one of them is a stream the official SDK mis-assembles
#: or crashes on (checked for real below), so none may reconstruct and each must fail --strict.
BROKEN: dict[str, tuple[list[tuple[float, str]], set[str]]] = {
    "name and id on every chunk (llama-cpp-python)": (
        lines_of(ROLE, *[chunk(tool(0, "call_a", "get_weather", a)) for a in ARGS], FINISH_TOOLS, DONE),
        {"id-repeated", "name-repeated", "client-mismatch"}),
    "no index": (
        lines_of(ROLE, chunk(tool(None, "call_a", "get_weather", ARGS[0])), chunk(tool(None, args=ARGS[1])),
                 chunk(tool(None, args=ARGS[2])), FINISH_TOOLS, DONE),
        {"index-missing", "client-error"}),
    "indices 1 and 3": (
        lines_of(ROLE, *clean_call(1, "call_a"), *clean_call(3, "call_b", "get_time"), FINISH_TOOLS, DONE),
        {"index-not-sequential", "client-error"}),
    "indices 0 and 2": (
        lines_of(ROLE, *clean_call(0, "call_a"), *clean_call(2, "call_b", "get_time"), FINISH_TOOLS, DONE),
        {"index-not-sequential", "client-error"}),
    "choices[0].index = 1": (
        lines_of(on_choice(1, {"role": "assistant", "content": None}),
                 *[on_choice(1, tool(0, "call_a", "get_weather", a) if i == 0 else tool(0, args=a))
                   for i, a in enumerate(ARGS)],
                 on_choice(1, {}, "tool_calls"), DONE),
        {"choice-index-unexpected", "client-error"}),
    "first delta without an id": (
        lines_of(ROLE, chunk(tool(0, None, "get_weather", ARGS[0])), chunk(tool(0, args=ARGS[1])),
                 chunk(tool(0, args=ARGS[2])), FINISH_TOOLS, DONE),
        {"header-incomplete"}),
    "tool_calls on arguments cut by max_tokens": (
        lines_of(ROLE, *clean_call(args=['{"city": ', '"Par']), FINISH_TOOLS, DONE),
        {"invalid-json-arguments", "finish-reason-mismatch"}),
    "legacy function_call only": (
        lines_of(ROLE, chunk({"function_call": {"name": "get_weather", "arguments": ARGS[0]}}),
                 chunk({"function_call": {"arguments": ARGS[1] + ARGS[2]}}), chunk(finish="function_call"), DONE),
        {"legacy-function-call", "client-mismatch"}),
    "arguments as an object": (
        lines_of(ROLE, chunk(tool(0, "call_a", "get_weather")),
                 chunk({"tool_calls": [{"index": 0, "function": {"arguments": {"city": "Paris"}}}]}),
                 FINISH_TOOLS, DONE),
        {"arguments-not-string", "client-mismatch", "client-error"}),
    "choices a string": (
        lines_of(ROLE, choice_chunk("oops"), chunk(finish="stop"), DONE),
        {"malformed-chunk", "client-error"}),
}

#: Wrong shapes the SDK survives, still flagged: a negative index, an unknown finish_reason.
ODD: dict[str, tuple[list[tuple[float, str]], set[str]]] = {
    "index -1": (lines_of(ROLE, *clean_call(-1), FINISH_TOOLS, DONE), {"malformed-chunk"}),
    "finish_reason banana": (lines_of(ROLE, chunk({"content": "hi"}), chunk(finish="banana"), DONE),
                             {"malformed-chunk"}),
    "index 70000": (lines_of(ROLE, *clean_call(70000), FINISH_TOOLS, DONE), {"malformed-chunk", "client-error"}),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_every_stream_the_sdk_mis_assembles_is_caught(case):
    lines, expected = BROKEN[case]
    a = analyze_capture_lines(lines, clients=SDK)
    assert rules(a) == expected, [v.to_json() for v in a.violations]
    assert not any(c.reconstructs for c in a.calls)
    assert all(v.call_index is None or v.call_index >= 0 for v in a.violations)


@pytest.mark.parametrize("case", sorted(ODD))
def test_wrong_shapes_are_flagged(case):
    lines, expected = ODD[case]
    assert rules(analyze_capture_lines(lines, clients=SDK)) == expected


def test_what_each_client_ends_with_is_in_the_report():
    a = analyze_capture_lines(BROKEN["name and id on every chunk (llama-cpp-python)"][0])
    [call] = a.calls
    assert (call.id, call.name, call.streamed_arguments) == ("call_a", "get_weather", "".join(ARGS))
    by = {c["profile"]: c for c in call.clients}
    assert by["openai-python"]["name"] == "get_weather" * 3 and by["openai-python"]["id"] == "call_a" * 3
    assert by["naive"]["name"] == "get_weather" * 3 and not by["naive"]["matches"]
    assert by["openai-python"]["arguments"] == "".join(ARGS)
    crashed = analyze_capture_lines(BROKEN["no index"][0]).calls[0].clients
    assert sdk(crashed)["error"].startswith("TypeError") and sdk(crashed, "naive")["error"].startswith("KeyError")
    error = next(v for v in analyze_capture_lines(BROKEN["no index"][0]).violations if v.rule == "client-error")
    assert error.step == 2 and "openai-python raised TypeError" in error.detail


def test_a_split_name_is_shown_whole_and_flagged_and_only_a_repeat_is_name_repeated():
    split = lines_of(ROLE, chunk(tool(0, "call_a", "get_", ARGS[0])), chunk(tool(0, name="weather", args=ARGS[1])),
                     chunk(tool(0, args=ARGS[2])), FINISH_TOOLS, DONE)
    a = analyze_capture_lines(split)
    assert a.calls[0].name == "get_weather" and not a.calls[0].reconstructs
    assert a.parse_at(2).calls[0].name == "get_" and a.parse_at(3).calls[0].name == "get_weather"
    # the bug the old verdict missed: clients that overwrite the name keep its last piece, the AI SDK makes two calls
    assert "name-fragmented" in rules(a)
    by = {c["profile"]: c for c in a.calls[0].clients}
    assert by["openai-node"]["name"] == "weather" and by["langchain-js"]["name"] == "weather"
    assert by["openai-python"]["matches"] and not by["ai-sdk"]["matches"]
    resent = lines_of(ROLE, chunk(tool(0, "call_a", "get_weather", ARGS[0])),
                      chunk(tool(0, name="get_weather", args=ARGS[1])), FINISH_TOOLS, DONE)
    assert "name-repeated" in rules(analyze_capture_lines(resent))
    assert "name-fragmented" not in rules(analyze_capture_lines(resent))


def test_n_choices_are_each_analysed():
    lines = lines_of(
        on_choice(0, {"role": "assistant"}), on_choice(1, {"role": "assistant"}),
        *clean_call(), on_choice(1, {"content": "no tool"}),
        FINISH_TOOLS, on_choice(1, {}, "stop"), DONE)
    first, second = analyze_capture_streams(lines, expected_choices=2, clients=SDK)
    assert first.violations == [] and first.calls[0].reconstructs and first.finish_reason == "tool_calls"
    assert second.name == "capture#choice1" and second.source.extra["choice"] == 1
    assert second.terminal.content == "no tool" and second.finish_reason == "stop" and second.violations == []
    # asked for one choice: the second is unexpected, and still analysed
    _, again = analyze_capture_streams(lines)
    assert "choice-index-unexpected" in rules(again)
    # the AI SDK reads choices[0] of every chunk, whichever choice it is: n > 1 mixes the choices (vercel/ai#543)
    mixed, _ = analyze_capture_streams(lines, expected_choices=2, clients=("ai-sdk",))
    assert any(v.rule == "client-mismatch" and "ai-sdk assembles content 'no tool'" in v.detail
               for v in mixed.violations)


def test_legacy_function_call_next_to_tool_calls_is_judged():
    both = lines_of(ROLE, *[chunk({**tool(0, "call_a", "get_weather" if i == 0 else None, a),
                                   "function_call": {**({"name": "get_weather"} if i == 0 else {}), "arguments": a}})
                            for i, a in enumerate(ARGS)], FINISH_TOOLS, DONE)
    a = analyze_capture_lines(both)
    [legacy] = [v for v in a.violations if v.rule == "legacy-function-call"]
    assert "agrees with tool call 0" in legacy.detail
    assert a.calls[0].name == "get_weather" and len(a.calls) == 1


def test_clean_streams_pass_every_client():
    clean = lines_of(ROLE, *clean_call(0, "call_a"), *clean_call(1, "call_b", "get_time"), FINISH_TOOLS, DONE)
    a = analyze_capture_lines(clean)
    assert a.violations == [] and all(c.reconstructs for c in a.calls)
    assert all(v["matches"] for c in a.calls for v in c.clients)
    chat_defaults = [p for p in default_profiles() if PROFILES[p].reads("chat")]
    assert [v["profile"] for v in a.calls[0].clients] == chat_defaults and len(chat_defaults) == 6


def test_client_selection():
    lines = BROKEN["name and id on every chunk (llama-cpp-python)"][0]
    naive_only = analyze_capture_lines(lines, clients=("naive",))
    assert [v["profile"] for v in naive_only.calls[0].clients] == ["naive"]
    none = analyze_capture_lines(lines, clients=())
    assert none.calls[0].clients == [] and rules(none) == {"id-repeated", "name-repeated"}
    assert parse_profiles("openai-python, naive") == ("openai-python", "naive") and parse_profiles("none") == ()
    with pytest.raises(ValueError, match="unknown client profile 'nope'"):
        parse_profiles("nope")


# ====================================================================== the real SDK over HTTP, side by side


def sdk_over_http(base_url: str) -> tuple[Any, str | None]:
    """What an application using the official SDK gets from the server: its final message, or the exception."""
    client = openai.OpenAI(base_url=base_url + "/v1", api_key="unused", max_retries=0)
    try:
        with client.chat.completions.stream(model="canned", messages=[{"role": "user", "content": "x"}]) as stream:
            for _ in stream:
                pass
            return stream.get_final_completion().choices[0].message, None
    except Exception as exc:  # the crash is the finding
        return None, type(exc).__name__


@pytest.mark.parametrize("case", sorted(BROKEN) + ["clean"])
def test_the_sdk_over_http_assembles_what_the_profile_says(server, case):
    lines = lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE) if case == "clean" else BROKEN[case][0]
    url = server.play(f"sdk-{abs(hash(case))}", Scenario([(0.0, line) for _, line in lines if line]))
    message, crashed = sdk_over_http(url)
    result = capture_sync(CaptureRequest(endpoint_url(url), dict(BODY), read_timeout=5.0))
    analysis = analyze_capture_result(result)
    verdicts = [sdk(call.clients) for call in analysis.calls]
    if crashed is not None:
        assert "client-error" in rules(analysis)
        assert all(v["error"] and v["error"].startswith(crashed) for v in verdicts)
        return
    got = [(c.id, c.function.name, c.function.arguments) for c in (message.tool_calls or [])]
    said = [(v["id"], v["name"], v["arguments"]) for v in verdicts if v != {**v, "id": None, "name": None,
                                                                               "arguments": None}]
    assert said == [g if isinstance(g[2], str) else (g[0], g[1], json.dumps(g[2])) for g in got][: len(said)]
    if case == "clean":
        assert analysis.violations == [] and all(v["matches"] for v in verdicts)


def test_strict_fails_on_every_stream_the_sdk_breaks_on(server, capsys):
    for i, case in enumerate(sorted(BROKEN)):
        url = server.play(f"strict-{i}", Scenario([(0.0, line) for _, line in BROKEN[case][0] if line]))
        assert cli_main(["capture", url, "--prompt", "x", "--strict", "--json"]) == 1, case
        report = json.loads(capsys.readouterr().out)
        validate_report(report)
        assert not any(c["reconstructs"] for run in report["runs"] for c in run["calls"]), case
    clean = server.play("strict-clean", Scenario(lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE)))
    assert cli_main(["capture", clean, "--prompt", "x", "--strict", "--client", "openai-python,naive"]) == 0
    assert "violations: none" in capsys.readouterr().out
    assert cli_main(["capture", clean, "--prompt", "x", "--client", "nope"]) == 2
    assert "--client" in capsys.readouterr().err


def test_chunks_show_every_field_as_sent(server, capsys):
    lines = BROKEN["name and id on every chunk (llama-cpp-python)"][0]
    url = server.play("chunks", Scenario([(0.0, line) for _, line in lines if line]))
    assert cli_main(["capture", url, "--prompt", "x", "--chunks", "--json"]) == 0
    run = json.loads(capsys.readouterr().out)["runs"][0]
    later = run["chunks"][2]["chunk"]["choices"][0]["delta"]["tool_calls"][0]
    assert later["id"] == "call_a" and later["function"]["name"] == "get_weather"  # re-sent, and shown
    assert run["chunks"][-1]["chunk"] == {"data": "[DONE]"}
    assert cli_main(["capture", url, "--prompt", "x", "--chunks"]) == 0
    text = capsys.readouterr().out
    assert "arguments index=0 id=call_a name='get_weather'" in text
