"""The verdict worker reads a streamed turn while it streams (:mod:`callscope.engine.capture.proxy.judge`).

Its verdict must be the one the whole turn gets when judged at its end (what the window's thread judge
and ``replay`` of the recording give): the same summary line, index record and report, for a clean
stream, a stream cut mid-way, one whose last line has no end, one that echoes the client's key and a
burst of many reads (the worker is handed the decoded bytes of each read: a compressed body is decoded
by the proxy first, as for the recording).
"""

from __future__ import annotations

import dataclasses

import httpx

from callscope.engine.analysis.report import report_json
from callscope.engine.capture.proxy.judge import ProcessJudge
from tests.support.proxy_helpers import ProxyThread
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, Scenario, chunk, clean_call, lines_of, tool

SECRET = "sk-judge-test-0123456789abcdef"
MANY = [f'{{\\"line\\": {i}}} ' for i in range(600)]  # a call in 600 fragments: the body comes in many reads


def _scenarios() -> dict[str, Scenario]:
    clean = lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE)
    return {
        "clean": Scenario(clean),
        "cut": Scenario(lines_of(ROLE, *clean_call()[:2]), end="abort"),
        "echo": Scenario(lines_of(ROLE, chunk({"content": f"your key is {SECRET}"}), *clean_call(), FINISH_TOOLS,
                                  DONE)),
        "tail": Scenario(lines_of(ROLE, *clean_call()), tail=b'data: {"choices": [{"index": 0, "delta": {"con'),
        "many": Scenario(lines_of(ROLE, chunk(tool(0, "call_m", "write_file", '{"content": "')),
                                  *[chunk(tool(0, args=piece)) for piece in MANY], chunk(tool(0, args='"}')),
                                  FINISH_TOOLS, DONE)),
    }


def _whole(turn) -> tuple[str, dict, dict]:
    """The turn judged whole, at its end, from the lines the proxy kept (what the thread judge does)."""
    again = dataclasses.replace(turn, judged_summary=None, judged_index=None, report=None, analyses=[])
    analyses = again.judge(turn_atomic_ms, None)
    return again.summary(), again.index_record(), report_json(analyses)


turn_atomic_ms = 500.0


def test_the_worker_reading_as_it_streams_gives_the_whole_turns_verdict(server, tmp_path):
    scenarios = _scenarios()
    for name, scenario in scenarios.items():
        server.play(f"judge-{name}", scenario)
    with ProxyThread(f"http://127.0.0.1:{server.port}", tmp_path, judge=ProcessJudge(report=True),
                     atomic_silence_ms=turn_atomic_ms) as proxy:
        for name in scenarios:
            try:
                with httpx.stream("POST", f"{proxy.url}/s/judge-{name}/v1/chat/completions",
                                  headers={"Authorization": f"Bearer {SECRET}"},
                                  json={"model": "m", "stream": True, "messages": []}, timeout=30) as response:
                    for _ in response.iter_raw():
                        pass
            except httpx.RemoteProtocolError:
                assert name == "cut"  # the server broke the answer off: the client sees it cut, as it was
        turns = proxy.wait_turns(len(scenarios))
    for name, turn in zip(scenarios, turns, strict=True):
        assert turn.judged_summary is not None, name  # judged by the worker, not in a thread
        summary, index, report = _whole(turn)
        assert turn.judged_summary == summary, name
        assert turn.judged_index == index, name
        assert turn.report == report, name
        assert SECRET not in turn.judged_summary + str(turn.report), name
    assert "cut" in turns[1].judged_summary or turns[1].judged_index["violations"], turns[1].judged_summary
