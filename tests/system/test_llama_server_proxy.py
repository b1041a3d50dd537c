"""The recording proxy in front of a real server: llama-cpp-python's own, on the packaged model, the openai SDK as client.

The SDK, pointed at the proxy, gets what it gets pointed at the server itself
(same seed, temperature 0: the same chunks, except the ids and times the
server mints per request), and the turn's recording replays to the report the
proxy gave live (the repeats this server sends included).
"""

from __future__ import annotations

import pytest

from tests.support.llama_server import BROKEN_BY_CLIENTS, MESSAGES, NAMED, TOOLS
from tests.support.proxy_helpers import ProxyThread, live, replayed

pytestmark = pytest.mark.model


def _minted_out(chunk: dict) -> dict:
    """A chunk without what the server makes up per request (completion id, creation time, call ids)."""
    chunk = {k: v for k, v in chunk.items() if k not in ("id", "created", "system_fingerprint")}
    for choice in chunk.get("choices") or []:
        for call in (choice.get("delta") or {}).get("tool_calls") or []:
            call.pop("id", None)
    return chunk


def _stream(base: str) -> tuple[list[dict], dict]:
    import openai

    client = openai.OpenAI(base_url=f"{base}/v1", api_key="sk-llama-proxy-test-key", max_retries=0)
    with client.chat.completions.stream(model="smollm2", messages=MESSAGES, tools=TOOLS, tool_choice=NAMED,
                                        temperature=0.0, seed=7, max_tokens=48) as stream:
        chunks = [_minted_out(event.chunk.model_dump()) for event in stream if event.type == "chunk"]
        [call] = stream.get_final_completion().choices[0].message.tool_calls
    return chunks, {"name": call.function.name, "arguments": call.function.arguments}


def test_the_sdk_gets_the_same_stream_through_the_proxy_and_the_recording_replays_to_it(llama_server, tmp_path):  # noqa: F811 - the fixture
    direct = _stream(llama_server)
    with ProxyThread(llama_server, tmp_path) as proxy:
        through = _stream(proxy.url)
        [turn] = proxy.wait_turns(1, timeout=120)
    assert through == direct and len(through[0]) >= 6
    assert turn.streaming and turn.protocol == "chat" and turn.model == "smollm2"
    [analysis] = turn.analyses
    assert {v.rule for v in analysis.violations} == BROKEN_BY_CLIENTS  # what this server really sends
    sdk = next(c for c in analysis.calls[0].clients if c["profile"] == "openai-python")
    assert sdk["name"] == through[1]["name"] and sdk["arguments"] == through[1]["arguments"]
    assert replayed(turn) == live(turn)
    assert "sk-llama-proxy-test-key" not in turn.record_path.read_text()
