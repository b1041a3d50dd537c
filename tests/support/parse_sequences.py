"""Sequences of whole parses (as a byte-prefix fixture gives them) and what a policy makes of them."""

from __future__ import annotations

from callscope.engine.analysis.analyzer import Analysis, Analyzer, SourceInfo
from callscope.engine.core.parse_model import Parse, ParsedCall
from callscope.engine.core.wire import chunk_json


def call(name, arguments="", id=None):
    return ParsedCall(name, arguments, id)


def run(parses, terminal=None, cause="stop", policy="incremental") -> Analysis:
    analyzer = Analyzer("t", SourceInfo("fixture", None, None, policy), "byte", False, None)
    for step, parse in enumerate(parses, start=1):
        analyzer.feed_parse(parse, step=step)
    final = terminal if terminal is not None else (parses[-1] if parses else Parse())
    return analyzer.finish(cause, terminal=final)


def tool_deltas(analysis: Analysis):
    """(step, tool_call delta dict) for every tool-call chunk, as a client receives them."""
    out = []
    for c in analysis.chunks:
        delta = chunk_json(c, analysis.identity)["choices"][0]["delta"]
        for tc in delta.get("tool_calls", []):
            out.append((c.step, tc))
    return out


def assembled(analysis: Analysis) -> dict[int, dict]:
    """What an OpenAI client assembles: per index, id/name from the first delta, arguments concatenated."""
    calls: dict[int, dict] = {}
    for _, tc in tool_deltas(analysis):
        entry = calls.setdefault(tc["index"], {"id": None, "name": None, "arguments": ""})
        if "id" in tc:
            entry["id"] = entry["id"] or tc["id"]
        fn = tc.get("function", {})
        if fn.get("name"):
            entry["name"] = fn["name"]
        entry["arguments"] += fn.get("arguments", "")
    return calls


GROWING = [
    Parse(calls=(call("get_weather", '{"ci'),)),
    Parse(calls=(call("get_weather", '{"city": "Par'),)),
    Parse(calls=(call("get_weather", '{"city": "Paris"'),)),
    Parse(calls=(call("get_weather", '{"city": "Paris"}'),)),
]


PARALLEL = [
    Parse(calls=(call("a", '{"x":'),)),
    Parse(calls=(call("a", '{"x": 1}'), call("b", '{"y'))),
    Parse(calls=(call("a", '{"x": 1}'), call("b", '{"y": 2}'))),
]
