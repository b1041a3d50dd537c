#!/usr/bin/env python3
"""Regenerate the quirks library in ``fixtures/quirks/``: streams real servers send, each a capture trace.

Every quirk is one ``callscope.trace/1`` capture trace (``source: capture``, one
``line`` record per SSE line, blank lines included, so ``callscope replay`` and
``callscope serve`` read it like any capture). Its header says:

- ``description``: what the stream does wrong (or that it is clean);
- ``extra.quirk``: ``{"id", "protocol", "sent_by", "sources": [public issue/PR URLs]}``;
- ``extra.protocol`` / ``extra.sse``: how to read the lines (as a live capture records them);
- ``tools``: the request's tools, so a client that checks names (the AI SDK) sees the names the server was offered;
- ``expect``: callscope's own verdict (the rules it must raise), checked by ``tests/test_fixtures_library.py``;
- ``extra.outcomes``: what every real client library ends with (the calls, or what it raised; an id the library
  made up is ``<generated>``), written by ``--record`` from the differential test's run of the real libraries
  (``tests/system/test_differential.py``), and checked in CI; ``extra.measured_with``: the package versions they were measured with.

Usage: ``python scripts/make_quirks.py [--check] [--record]``. ``--check`` exits 1 if the files differ from
what this script writes; ``--record`` runs every real client on every quirk over HTTP on 127.0.0.1 and stores
what each ended with (needs the ``dev`` extra and ``make node-clients``); without it the stored outcomes are kept.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from callscope.engine.recordings.trace import Trace, TraceEnd, TraceHeader, TraceLine, parse_trace, write_trace  # noqa: E402

QUIRKS = ROOT / "fixtures" / "quirks"
CREATED = "2025-06-01T00:00:00+00:00"
GAP_MS = 20.0
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
                                      "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                     "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "description": "Time in a zone",
                                      "parameters": {"type": "object", "properties": {"zone": {"type": "string"}},
                                                     "required": ["zone"]}}},
]
MESSAGES = [{"role": "user", "content": "Weather in Paris, and the time in Tokyo?"}]
ARGS = ['{"city": ', '"Paris"', "}"]
TIME_ARGS = ['{"zone": ', '"Asia/Tokyo"}']
LLAMA_CPP_PYTHON = "llama-cpp-python's server (named tool_choice), seen by callscope's own capture tests"


# ====================================================================== Chat Completions


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, choice: int = 0) -> dict[str, Any]:
    return {"id": "chatcmpl-quirk", "object": "chat.completion.chunk", "created": 1748736000, "model": "quirk",
            "choices": [{"index": choice, "delta": delta if delta is not None else {}, "finish_reason": finish}]}


def call(index: int | None = 0, cid: str | None = None, name: str | None = None, args: Any = None,
         kind: str | None = None, **extra: Any) -> dict[str, Any]:
    """One tool-call delta entry: only the fields given (``kind`` defaults to ``function`` when an id is sent)."""
    entry: dict[str, Any] = {}
    if index is not None:
        entry["index"] = index
    if cid is not None:
        entry["id"] = cid
    if kind is None and cid is not None:
        kind = "function"
    if kind:
        entry["type"] = kind
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    entry["function"] = function
    entry.update(extra)
    return entry


def tools(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": list(entries)}


ROLE = chunk({"role": "assistant", "content": None})
FINISH = chunk(finish="tool_calls")


def header_then_args(index: int = 0, cid: str = "call_a", name: str = "get_weather",
                     args: list[str] = ARGS) -> list[dict[str, Any]]:
    """A call as OpenAI streams it: the header (index, id, type, name, empty arguments), then fragments."""
    return [chunk(tools(call(index, cid, name, ""))), *[chunk(tools(call(index, args=a))) for a in args]]


def chat(*chunks: dict[str, Any], done: bool = True) -> list[list[str]]:
    events = [[f"data: {json.dumps(c, separators=(',', ':'))}"] for c in chunks]
    return events + ([["data: [DONE]"]] if done else [])


# ====================================================================== Responses


def responses(*events: dict[str, Any]) -> list[list[str]]:
    out = []
    for number, event in enumerate(events):
        event = {"type": event["type"], "sequence_number": number, **{k: v for k, v in event.items() if k != "type"}}
        out.append([f"event: {event['type']}", f"data: {json.dumps(event, separators=(',', ':'))}"])
    return out


def response_object(status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": "resp_quirk", "object": "response", "created_at": 1748736000, "status": status, "model": "quirk",
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
            "incomplete_details": None, "instructions": None, "metadata": {}, "temperature": 1.0, "top_p": 1.0}


def function_item(arguments: str, status: str, item_id: str = "fc_1", call_id: str = "call_a",
                  name: str = "get_weather") -> dict[str, Any]:
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name, "arguments": arguments,
            "status": status}


def responses_call(deltas: list[str], done_arguments: str | None = None, announce: bool = True) -> list[list[str]]:
    """One function call over the Responses API; ``done_arguments`` what its ``.done`` events say."""
    final = "".join(deltas) if done_arguments is None else done_arguments
    events: list[dict[str, Any]] = [{"type": "response.created", "response": response_object("in_progress", [])},
                                    {"type": "response.in_progress", "response": response_object("in_progress", [])}]
    if announce:
        events.append({"type": "response.output_item.added", "output_index": 0,
                       "item": function_item("", "in_progress")})
    events += [{"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": d}
               for d in deltas]
    events += [{"type": "response.function_call_arguments.done", "item_id": "fc_1", "output_index": 0,
                "arguments": final},
               {"type": "response.output_item.done", "output_index": 0, "item": function_item(final, "completed")},
               {"type": "response.completed",
                "response": response_object("completed", [function_item(final, "completed")])}]
    return responses(*events)


# ====================================================================== Anthropic Messages


def anthropic(*events: dict[str, Any]) -> list[list[str]]:
    return [[f"event: {e['type']}", f"data: {json.dumps(e, separators=(',', ':'))}"] for e in events]


MESSAGE_START = {"type": "message_start", "message": {
    "id": "msg_quirk", "type": "message", "role": "assistant", "content": [], "model": "quirk",
    "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 1}}}


def tool_block(index: int = 0, name: str = "get_weather", tool_id: str = "toolu_a") -> dict[str, Any]:
    return {"type": "content_block_start", "index": index,
            "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}}}


def json_delta(index: int, partial: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta",
                                                                     "partial_json": partial}}


def message_end(stop_reason: str = "tool_use") -> list[dict[str, Any]]:
    return [{"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
             "usage": {"output_tokens": 20}},
            {"type": "message_stop"}]


def anthropic_call(stop_reason: str = "tool_use", start: bool = True) -> list[list[str]]:
    events = [MESSAGE_START]
    if start:
        events.append(tool_block(0))
    events += [json_delta(0, a) for a in ARGS]
    events.append({"type": "content_block_stop", "index": 0})
    return anthropic(*events, *message_end(stop_reason))


# ====================================================================== the library


@dataclass(frozen=True)
class Quirk:
    """One stream of the library: its events (each a list of SSE field lines), what it is, who sent it."""

    id: str
    protocol: str
    what: str
    sent_by: str
    sources: tuple[str, ...]
    events: Callable[[], list[list[str]]]



def _q(qid: str, protocol: str, what: str, sent_by: str, sources: tuple[str, ...],
       events: Callable[[], list[list[str]]]) -> Quirk:
    return Quirk(qid, protocol, what, sent_by, sources, events)


LIBRARY: tuple[Quirk, ...] = (
    # ---------------------------------------------------------------- clean, one per protocol
    _q("clean_chat", "chat", "A clean Chat Completions stream: content, then two calls as OpenAI streams them "
       "(header with index, id, type and name, then argument fragments), finish_reason tool_calls, [DONE].",
       "OpenAI's API (the reference shape)", (),
       lambda: chat(ROLE, chunk({"content": "Checking."}), *header_then_args(0, "call_a", "get_weather"),
                    *header_then_args(1, "call_b", "get_time", TIME_ARGS), FINISH)),
    _q("clean_responses", "responses", "A clean Responses stream: one function_call item announced, its "
       "arguments in deltas, .done events that agree, response.completed.",
       "OpenAI's Responses API (the reference shape)", (), lambda: responses_call(ARGS)),
    _q("clean_anthropic", "anthropic", "A clean Anthropic Messages stream: one tool_use block started, its input "
       "in input_json_delta fragments, stopped, stop_reason tool_use.",
       "Anthropic's Messages API (the reference shape)", (), lambda: anthropic_call()),
    # ---------------------------------------------------------------- names
    _q("name_repeated", "chat", "The call's id, type and name are sent again on every chunk, with each argument "
       "fragment.", f"{LLAMA_CPP_PYTHON}; MiniMax M2.7 through NVIDIA NIM",
       ("https://github.com/NousResearch/hermes-agent/pull/11984",
        "https://github.com/SillyTavern/SillyTavern/pull/5811"),
       lambda: chat(ROLE, *[chunk(tools(call(0, "call_a", "get_weather", a))) for a in ARGS], FINISH)),
    _q("name_fragmented", "chat", "The function name is sent in two pieces, 'get_wea' then 'ther', like the "
       "arguments.", "Gemini's OpenAI-compatible endpoint (continue's report); a local server found by hydra",
       ("https://github.com/continuedev/continue/pull/5849", "https://github.com/ankit373/hydra/pull/958"),
       lambda: chat(ROLE, chunk(tools(call(0, "call_a", "get_wea", ""))), chunk(tools(call(0, name="ther"))),
                    *[chunk(tools(call(0, args=a))) for a in ARGS], FINISH)),
    _q("name_late", "chat", "The first delta carries the id and an empty arguments fragment but no name; the name "
       "comes in the next delta.", "OpenAI-compatible providers reported to the AI SDK and opencode",
       ("https://github.com/vercel/ai/pull/14760", "https://github.com/anomalyco/opencode/issues/24137"),
       lambda: chat(ROLE, chunk(tools(call(0, "call_a", args=""))), chunk(tools(call(0, name="get_weather"))),
                    *[chunk(tools(call(0, args=a))) for a in ARGS], FINISH)),
    _q("name_empty_on_continuation", "chat", "Every continuation delta re-sends id and function.name as empty "
       "strings instead of leaving them out.", "DashScope's endpoint serving GLM-5.2; upstreams behind bitrouter",
       ("https://github.com/anomalyco/opencode/issues/37841", "https://github.com/bitrouter/bitrouter/pull/552"),
       lambda: chat(ROLE, chunk(tools(call(0, "call_a", "get_weather", ""))),
                    *[chunk(tools(call(0, "", "", a, kind="function"))) for a in ARGS], FINISH)),
    _q("null_fields_on_continuation", "chat", "Every continuation delta sends id, type and function.name as "
       "explicit nulls.", "opencode's Zen gateway serving deepseek-v4-flash",
       ("https://github.com/anomalyco/opencode/issues/43328",),
       lambda: chat(ROLE, chunk(tools(call(0, "call_a", "get_weather", ""))),
                    *[chunk(tools({"index": 0, "id": None, "type": None,
                                   "function": {"name": None, "arguments": a}})) for a in ARGS], FINISH)),
    _q("role_missing", "chat", "No chunk carries delta.role: the stream opens with the first call's header.",
       "gateways that translate another protocol (agentgateway from Anthropic; LangWatch's gateway)",
       ("https://github.com/agentgateway/agentgateway/pull/3005", "https://github.com/langwatch/langwatch/issues/6196",
        "https://github.com/langchain-ai/langchainjs/pull/11157"),
       lambda: chat(*header_then_args(0, "call_a", "get_weather"), FINISH)),
    # ---------------------------------------------------------------- ids
    _q("id_changed", "chat", "The first chunk carries one id, the later fragments of the same call another.",
       "Poolside's streaming API", ("https://github.com/poolsideai/pool/issues/9",),
       lambda: chat(ROLE, chunk(tools(call(0, "call_a", "get_weather", ARGS[0]))),
                    *[chunk(tools(call(0, "call_b", args=a))) for a in ARGS[1:]], FINISH)),
    _q("id_repeated", "chat", "The call's id (and type) is sent again on every fragment; the name only once.",
       "OpenAI-compatible providers behind JetBrains Koog", ("https://github.com/JetBrains/koog/pull/2052",),
       lambda: chat(ROLE, chunk(tools(call(0, "call_a", "get_weather", ""))),
                    *[chunk(tools(call(0, "call_a", args=a))) for a in ARGS], FINISH)),
    _q("id_missing", "chat", "The call never gets an id.", "a GLM-style provider behind Netcatty; DeepSeek V3 on "
       "SiliconFlow (SillyTavern)", ("https://github.com/binaricat/Netcatty/issues/1007",
                                     "https://github.com/SillyTavern/SillyTavern/issues/3931"),
       lambda: chat(ROLE, chunk(tools(call(0, name="get_weather", args="", kind="function"))),
                    *[chunk(tools(call(0, args=a))) for a in ARGS], FINISH)),
    # ---------------------------------------------------------------- index
    _q("index_missing", "chat", "Tool-call deltas carry no index at all.",
       "Gemini's OpenAI-compatible endpoint (gemini-3-flash-preview)",
       ("https://github.com/openai/openai-python/issues/2806", "https://github.com/AstrBotDevs/AstrBot/pull/6692"),
       lambda: chat(ROLE, chunk(tools(call(None, "call_a", "get_weather", ARGS[0]))),
                    *[chunk(tools(call(None, args=a))) for a in ARGS[1:]], FINISH)),
    _q("index_from_1", "chat", "The only call comes with index 1 (counted with a content block before it).",
       "bedrock-access-gateway with a reasoning block; CLIProxyAPI v7.2.116 on a Claude upstream",
       ("https://github.com/aws-samples/bedrock-access-gateway/issues/134",
        "https://github.com/router-for-me/CLIProxyAPI/issues/5229"),
       lambda: chat(ROLE, *header_then_args(1, "call_a", "get_weather"), FINISH)),
    _q("index_skipping", "chat", "Two calls with indices 0 and 2.", "bridges that number calls by content block "
       "(NVIDIA Switchyard before its fix)", ("https://github.com/NVIDIA-NeMo/Switchyard/pull/712",),
       lambda: chat(ROLE, *header_then_args(0, "call_a", "get_weather"),
                    *header_then_args(2, "call_b", "get_time", TIME_ARGS), FINISH)),
    _q("index_reused", "chat", "Two calls, both on index 0: the second call's header arrives on the index of the "
       "first, complete one.", "Ollama's OpenAI-compatible endpoint; a DeepSeek endpoint (agno)",
       ("https://github.com/ollama/ollama/issues/15457", "https://github.com/agno-agi/agno/issues/8880"),
       lambda: chat(ROLE, *header_then_args(0, "call_a", "get_weather"),
                    *header_then_args(0, "call_b", "get_time", TIME_ARGS), FINISH)),
    # ---------------------------------------------------------------- type
    _q("type_missing", "chat", "The header delta has an id and a name but no type.",
       "Azure AI Foundry and Mistral on Azure; vLLM before a fix",
       ("https://github.com/vercel/ai/pull/12901", "https://github.com/vllm-project/vllm/pull/38609"),
       lambda: chat(ROLE, chunk(tools(call(0, "call_a", "get_weather", "", kind=""))),
                    *[chunk(tools(call(0, args=a))) for a in ARGS], FINISH)),
    # ---------------------------------------------------------------- arguments
    _q("args_before_header", "chat", "An empty arguments fragment arrives on the index before the header (id and "
       "name) does.", "Nebius and Cerebras (dirac); providers reported to the AI SDK",
       ("https://github.com/dirac-run/dirac/issues/215", "https://github.com/vercel/ai/issues/14722"),
       lambda: chat(ROLE, chunk(tools(call(0, args=""))), *header_then_args(0, "call_a", "get_weather"), FINISH)),
    _q("args_object", "chat", "function.arguments is sent as a JSON object, not a string, in one chunk with the "
       "header.", "Zhipu's GLM-4.5 API", ("https://github.com/zai-org/GLM-4.5/issues/17",),
       lambda: chat(ROLE, chunk(tools(call(0, "call_a", "get_weather", {"city": "Paris"}))), FINISH)),
    _q("args_flush_duplicated", "chat", "After the argument fragments, an end-of-stream chunk re-sends the complete "
       "arguments again.", "OpenCodex 2.7.35; elizaOS's cloud proxy (gemma-4-31b)",
       ("https://github.com/lidge-jun/opencodex/issues/361", "https://github.com/elizaOS/eliza/pull/16973"),
       lambda: chat(ROLE, *header_then_args(0, "call_a", "get_weather"),
                    chunk(tools(call(0, args="".join(ARGS)))), FINISH)),
    _q("args_empty_parameterless", "chat", "A call to a tool without parameters whose arguments never arrive "
       "(no fragment, not even '{}').", "vLLM's hermes parser while streaming",
       ("https://github.com/vllm-project/vllm/issues/28806", "https://github.com/vllm-project/vllm/issues/11392"),
       lambda: chat(ROLE, chunk(tools(call(0, "call_a", "get_time"))), FINISH)),
    # ---------------------------------------------------------------- finish, framing
    _q("finish_stop_after_call", "chat", "A complete call, then finish_reason stop instead of tool_calls.",
       "Gemini's OpenAI-compatible endpoint; ollama_chat through LiteLLM",
       ("https://github.com/open-webui/computer/issues/224", "https://github.com/BerriAI/litellm/issues/34692"),
       lambda: chat(ROLE, *header_then_args(0, "call_a", "get_weather"), chunk(finish="stop"))),
    _q("whole_call_final_chunk", "chat", "The whole call (id, name, complete arguments) in one chunk that also "
       "carries finish_reason: nothing streamed before it.", "Ollama's OpenAI-compatible endpoint; Mistral's API",
       ("https://github.com/ollama/ollama/issues/15457", "https://github.com/openclaw/openclaw/pull/130532"),
       lambda: chat(ROLE, chunk(tools(call(0, "call_a", "get_weather", "".join(ARGS))), finish="tool_calls"))),
    _q("choice_index_1", "chat", "A single-choice stream whose chunks say choice index 1.",
       "an OpenAI-compatible gateway (Spring AI's report); Foundry Local v0.7.117",
       ("https://github.com/spring-projects/spring-ai/pull/6221",
        "https://github.com/microsoft/foundry-local/issues/263"),
       lambda: chat(chunk({"role": "assistant", "content": None}, choice=1),
                    *[chunk(c["choices"][0]["delta"], choice=1) for c in header_then_args()],
                    chunk(finish="tool_calls", choice=1))),
    # ---------------------------------------------------------------- Responses
    _q("responses_unannounced", "responses", "Argument deltas for a function_call item whose "
       "response.output_item.added never came.", "third-party Responses upstreams (docker-agent, opencode)",
       ("https://github.com/docker/docker-agent/pull/2976", "https://github.com/anomalyco/opencode/pull/44575"),
       lambda: responses_call(ARGS, announce=False)),
    _q("responses_done_disagrees", "responses", "No argument deltas arrive; the arguments come only in the .done "
       "events, which so disagree with the (empty) deltas.", "gpt-5.3-codex-spark on the Responses API",
       ("https://github.com/BerriAI/litellm/pull/27792", "https://github.com/tailcallhq/forgecode/pull/2558"),
       lambda: responses_call([], done_arguments="".join(ARGS))),
    # ---------------------------------------------------------------- Anthropic
    _q("anthropic_end_turn", "anthropic", "A complete tool_use block, then stop_reason end_turn instead of "
       "tool_use.", "LiteLLM's /v1/messages bridge over ollama_chat (v1.93-1.96); Bifrost v1.6.6-1.6.9",
       ("https://github.com/BerriAI/litellm/issues/34692", "https://github.com/maximhq/bifrost/issues/6123"),
       lambda: anthropic_call("end_turn")),
    _q("anthropic_unstarted_block", "anthropic", "input_json_delta fragments for a content block whose "
       "content_block_start never came.", "Bedrock's converse stream, which can omit contentBlockStart "
       "(seen through LiteLLM)", ("https://github.com/BerriAI/litellm/pull/24767",),
       lambda: anthropic_call(start=False)),
)


# ====================================================================== writing


def trace_of(quirk: Quirk, outcomes: dict[str, Any], measured_with: dict[str, Any], expect: dict[str, Any]) -> Trace:
    lines: list[TraceLine] = []
    ms = 0.0
    for event in quirk.events():
        ms += GAP_MS
        lines += [TraceLine(ms, line) for line in event] + [TraceLine(ms, "")]
    header = TraceHeader(
        source="capture", format=None, tools=TOOLS, messages=MESSAGES, created=CREATED, unit="chunk",
        description=quirk.what, expect=expect,
        extra={"protocol": quirk.protocol, "sse": "events", "request": {"model": quirk.id, "stream": True},
               "quirk": {"id": quirk.id, "protocol": quirk.protocol, "sent_by": quirk.sent_by,
                         "sources": list(quirk.sources)},
               "outcomes": outcomes, "measured_with": measured_with})
    return Trace(header, [], lines, TraceEnd("stop", ms + GAP_MS))


def verdict_of(trace: Trace, path: Path) -> dict[str, Any]:
    """callscope's verdict on the quirk as it is now: the rules it raises and its finish."""
    from callscope.engine.recordings.capture_trace import analyze_capture_trace

    trace.path = str(path)
    analysis = analyze_capture_trace(trace)
    return {"finish_reason": analysis.finish_reason,
            "violations": sorted({v.rule for v in analysis.violations})}


def stored(path: Path) -> Trace | None:
    return parse_trace(path.read_bytes(), str(path)) if path.exists() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with fixtures/quirks/ instead of writing")
    parser.add_argument("--record", action="store_true", help="run the real clients and store their outcomes")
    parser.add_argument("--verdicts", action="store_true",
                        help="store callscope's current verdict as each quirk's expect (review the diff)")
    args = parser.parse_args(argv)
    QUIRKS.mkdir(exist_ok=True)
    recorded: dict[str, dict[str, Any]] = {}
    if args.record:
        from tests.support.client_libraries import record_outcomes

        recorded = record_outcomes([q.id for q in LIBRARY])
    differ = []
    for quirk in LIBRARY:
        path = QUIRKS / f"{quirk.id}.jsonl"
        old = stored(path)
        kept = {k: old.header.extra.get(k, {}) for k in ("outcomes", "measured_with")} if old else {}
        stored_now = recorded.get(quirk.id) or kept
        expect = old.header.expect if old is not None and old.header.expect else {"violations": []}
        trace = trace_of(quirk, stored_now.get("outcomes", {}), stored_now.get("measured_with", {}), expect)
        if args.verdicts:
            trace.header.expect = verdict_of(trace, path)
        if args.check:
            tmp = path.with_suffix(".check")
            write_trace(tmp, trace)
            if not path.exists() or tmp.read_bytes() != path.read_bytes():
                differ.append(path.name)
            tmp.unlink()
        else:
            write_trace(path, trace)
    if args.check and differ:
        print("differ from the generator: " + ", ".join(differ), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
