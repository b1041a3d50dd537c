"""The client profiles' fast lane and fragment batching change nothing a profile ends with.

Every stream is judged three ways, each profile's result compared: the fast lane off (every chunk read in
full by every library's emulation), the fast lane on with no batching (one fragment at a time), and as
shipped (consecutive fragments of one call joined, :class:`~callscope.engine.streams.clients.ProfileRuns`).
The streams: the quirks library, and made-up ones that sit on the lane's edges (extra top-level keys,
usage and error keys, two calls interleaved, a second choice, a fragment after the finish, a long call
that crosses many batches).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from callscope.engine.analysis.report import report_json
from callscope.engine.recordings import quirks
from callscope.engine.recordings.capture_trace import analyze_capture_traces
from callscope.engine.streams import clients as clients_module
from callscope.engine.streams import conformance
from callscope.engine.streams.clients import PROFILES, plain_fragment
from callscope.engine.streams.conformance import analyze_capture_streams

ALL = tuple(PROFILES)
BASE = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m"}


def _chunk(delta: dict[str, Any], finish: str | None = None, choice: int = 0, **top: Any) -> dict[str, Any]:
    return {**BASE, **top, "choices": [{"index": choice, "delta": delta, "finish_reason": finish}]}


def _header(index: int, name: str, args: str = "") -> dict[str, Any]:
    return {"tool_calls": [{"index": index, "id": f"call_{index}", "type": "function",
                            "function": {"name": name, "arguments": args}}]}


def _args(index: int, text: str) -> dict[str, Any]:
    return {"tool_calls": [{"index": index, "function": {"arguments": text}}]}


def _stream(chunks: list[dict[str, Any]], done: bool = True) -> list[tuple[float | None, str]]:
    lines: list[tuple[float | None, str]] = []
    for i, chunk in enumerate(chunks):
        lines += [(float(i), "data: " + json.dumps(chunk)), (float(i), "")]
    if done:
        lines += [(float(len(chunks)), "data: [DONE]"), (float(len(chunks)), "")]
    return lines


def _pieces(text: str, size: int = 3) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def _made_up() -> dict[str, list[tuple[float | None, str]]]:
    long_args = json.dumps({"content": "x" * 3000})
    two_a, two_b = json.dumps({"a": 1, "b": "two"}), json.dumps({"path": "/tmp/f", "n": [1, 2, 3]})
    return {
        "extra_top_keys": _stream([_chunk({"role": "assistant", **_header(0, "get_weather")}, t=0.5)]
                                  + [_chunk(_args(0, p), t=0.1 * i, x_groq={"id": "q"})
                                     for i, p in enumerate(_pieces('{"city": "Paris"}'))]
                                  + [_chunk({}, "tool_calls", t=9.0)]),
        "usage_mid_call": _stream([_chunk({"role": "assistant", **_header(0, "f")}),
                                   _chunk(_args(0, '{"a"')),
                                   _chunk(_args(0, ': 1'), usage={"prompt_tokens": 1, "completion_tokens": 2,
                                                                  "total_tokens": 3}),
                                   _chunk(_args(0, '}')), _chunk({}, "tool_calls")]),
        "error_key_mid_call": _stream([_chunk({"role": "assistant", **_header(0, "f")}),
                                       _chunk(_args(0, '{"a"')),
                                       _chunk(_args(0, ': 1'), error={"message": "overloaded"}),
                                       _chunk(_args(0, '}')), _chunk({}, "tool_calls")]),
        "two_calls_interleaved": _stream(
            [_chunk({"role": "assistant", **_header(0, "a")}), _chunk(_header(1, "b"))]
            + [_chunk(_args(i % 2, p)) for i, p in enumerate(
                sum(zip(_pieces(two_a), _pieces(two_b), strict=False), ()))]
            + [_chunk(_args(1, p)) for p in _pieces(two_b)[len(_pieces(two_a)):]]
            + [_chunk({}, "tool_calls")]),
        "two_calls_in_turn": _stream(
            [_chunk({"role": "assistant", **_header(0, "a")})] + [_chunk(_args(0, p)) for p in _pieces(two_a)]
            + [_chunk(_header(1, "b"))] + [_chunk(_args(1, p)) for p in _pieces(two_b)]
            + [_chunk({}, "tool_calls")]),
        "second_choice": _stream(
            [_chunk({"role": "assistant", **_header(0, "a")}), _chunk({"role": "assistant", **_header(0, "b")}, choice=1)]
            + [_chunk(_args(0, p), choice=c) for p in _pieces(two_a) for c in (0, 1)]
            + [_chunk({}, "tool_calls"), _chunk({}, "tool_calls", choice=1)]),
        "fragment_after_finish": _stream([_chunk({"role": "assistant", **_header(0, "f", '{"a"')}),
                                          _chunk(_args(0, ': 1')), _chunk({}, "tool_calls"),
                                          _chunk(_args(0, '}')), _chunk(_args(0, ' '))]),
        "fragment_before_header": _stream([_chunk({"role": "assistant"}), _chunk(_args(0, '{"a": 1}')),
                                           _chunk(_args(0, ' ')), _chunk(_header(0, "f")),
                                           _chunk({}, "tool_calls")]),
        "long_call": _stream([_chunk({"role": "assistant", **_header(0, "write_file")})]
                             + [_chunk(_args(0, p)) for p in _pieces(long_args, 2)]
                             + [_chunk({}, "tool_calls")]),
        "long_call_cut": _stream([_chunk({"role": "assistant", **_header(0, "write_file")})]
                                 + [_chunk(_args(0, p)) for p in _pieces(long_args, 2)][:900], done=False),
        "content_then_call": _stream([_chunk({"role": "assistant", "content": "Let me check."}),
                                      _chunk({"content": " One moment."}), _chunk(_header(0, "f"))]
                                     + [_chunk(_args(0, p)) for p in _pieces(two_b)]
                                     + [_chunk({}, "tool_calls")]),
    }


def _clients(lines: list[tuple[float | None, str]], protocol: str | None = None) -> dict[str, Any]:
    """The whole report (every call's client verdicts, every violation), every profile judging."""
    return report_json(analyze_capture_streams(lines, "s", protocol=protocol, clients=ALL))


@pytest.fixture(params=["lane-off", "no-batching", "small-batches"])
def reference(request: pytest.FixtureParameterRequest, monkeypatch: pytest.MonkeyPatch):
    """A way of judging to compare the shipped one with: a function from a stream to every choice's clients."""
    def judged(judge):
        with monkeypatch.context() as patch:
            if request.param == "lane-off":
                patch.setattr(conformance, "plain_fragment", lambda obj: None)
            else:
                patch.setattr(clients_module, "BATCH_FRAGMENTS", 1 if request.param == "no-batching" else 3)
            return judge()
    return judged


@pytest.mark.parametrize("name", sorted(_made_up()))
def test_made_up_streams_end_the_same(name: str, reference) -> None:
    lines = _made_up()[name]
    shipped = _clients(lines, "chat")
    assert shipped == reference(lambda: _clients(lines, "chat"))
    assert "clients" in json.dumps(shipped), "the profiles judged"


@pytest.mark.parametrize("quirk", quirks.library(), ids=lambda q: q.id)
def test_quirks_end_the_same(quirk: quirks.Quirk, reference) -> None:
    def judge() -> dict[str, Any]:
        return report_json(analyze_capture_traces(quirk.trace, clients=ALL))
    assert judge() == reference(judge)


def test_the_lane_is_taken_and_batched(monkeypatch: pytest.MonkeyPatch) -> None:
    """The long call's fragments go through the lane, joined: not one full read per fragment per profile."""
    full_reads: list[str] = []
    lane_calls: list[int] = []
    for profile in PROFILES.values():
        for assembler in set(profile.assemblers.values()):
            original_event, original_fragment = assembler.event, assembler.fragment
            monkeypatch.setattr(assembler, "event", lambda self, event, obj, _o=original_event: (
                full_reads.append(event.data), _o(self, event, obj))[1])
            monkeypatch.setattr(assembler, "fragment", lambda self, c, i, t, _o=original_fragment: (
                lane_calls.append(len(t)), _o(self, c, i, t))[1])
    lines = _made_up()["long_call"]
    _clients(lines, "chat")
    fragments = sum(1 for _, line in lines if line.startswith("data: {") and '"arguments": "' in line) - 1
    assert fragments > 1000
    assert len(full_reads) < 10 * len(PROFILES)  # the header, the finish and [DONE] per profile, not every fragment
    assert len(lane_calls) <= len(PROFILES) * (fragments // clients_module.BATCH_FRAGMENTS + 2)


@pytest.mark.parametrize("top, plain", [
    ({}, True), ({"t": 1.5}, True), ({"x_groq": {"id": "q"}}, True), ({"usage": None}, True),
    ({"usage": {"total_tokens": 1}}, False), ({"error": {"message": "x"}}, False), ({"error": None}, True),
    ({"id": 5}, False), ({"created": "now"}, False), ({"model": None}, False),
])
def test_what_counts_as_a_plain_fragment(top: dict[str, Any], plain: bool) -> None:
    chunk = {**_chunk(_args(0, "ab")), **top}
    assert (plain_fragment(chunk) == (0, 0, "ab")) is plain
