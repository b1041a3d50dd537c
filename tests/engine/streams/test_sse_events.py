"""Server-sent events as the spec says: callscope's stamped line reader plus its event layer, against httpx-sse.

The property test feeds the same bytes, cut at random places, to callscope's
real capture reader (:class:`StreamCapture`, over an in-memory transport:
TCP on loopback cannot be made to cut a stream at chosen bytes) and to
httpx-sse's ``EventSource``, and requires the same events. The loopback tests
send CR-only endings, a byte-order mark and multi-line data over real HTTP.
"""

from __future__ import annotations

import asyncio
import json

import httpx
import httpx_sse
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callscope.engine.capture import CaptureRecorder, CaptureRequest, StreamCapture, capture_sync, endpoint_url
from callscope.engine.capture.recording import analyze_capture_result
from callscope.engine.recordings.replay import load_analyses
from callscope.engine.streams.conformance import analyze_capture_lines
from callscope.engine.streams.sse import LINES, EventReader, read_events
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

#: Rule-by-rule expectations pinned with the profiles they were written for (see conftest.legacy_profiles).
pytestmark = pytest.mark.usefixtures("legacy_profiles")

BODY = {"messages": [{"role": "user", "content": "x"}], "stream": True}
HEADERS = {"content-type": "text/event-stream"}


def ours(pieces: list[bytes]) -> list[tuple[str, str, str]]:
    """The events callscope's real reader and event layer make of ``pieces`` (each one network read)."""

    async def body():
        for piece in pieces:
            yield piece

    transport = httpx.MockTransport(lambda request: httpx.Response(200, headers=HEADERS, content=body()))
    capture = StreamCapture(CaptureRequest("http://127.0.0.1:9/v1/chat/completions", dict(BODY)), transport=transport)
    result = asyncio.run(capture.run())
    assert result.status == 200
    # (the reader stops at data: [DONE], maybe before the blank line that would end its event)
    return [(e.type, e.data, e.id) for e in read_events(result.lines)
            if e.data and (e.terminated or e.data == "[DONE]")]


def theirs(pieces: list[bytes]) -> list[tuple[str, str, str]]:
    """httpx-sse's events with data (it also dispatches data-less ones when an id is set, which the spec does
    not; events with empty data are no chunks either way)."""
    response = httpx.Response(200, headers=HEADERS, content=iter(pieces))
    return [(e.event, e.data, e.id) for e in httpx_sse.EventSource(response).iter_sse() if e.data]


TEXT = st.text(alphabet=st.sampled_from(list("abc xyz:{}\",é€0123456789")), max_size=12)
ENDING = st.sampled_from(["\n", "\r", "\r\n"])


@st.composite
def streams(draw) -> bytes:
    out = []
    for _ in range(draw(st.integers(1, 6))):
        lines = []
        if draw(st.booleans()):
            lines.append("event: " + draw(st.sampled_from(["message", "delta", "response.created"])))
        if draw(st.booleans()):
            lines.append("id:" + draw(st.sampled_from(["1", " 7", "abc"])))
        if draw(st.booleans()):
            lines.append(": " + draw(TEXT))
        for _ in range(draw(st.integers(1, 3))):
            lines.append(draw(st.sampled_from(["data: ", "data:", "data:  "])) + draw(TEXT))
        lines.append("")
        out += [line + draw(ENDING) for line in lines]
        if draw(st.booleans()):  # an extra blank line between events changes nothing
            out.append(draw(ENDING))
    data = "".join(out).encode()
    if b"\r" in data[-1:]:
        data += b"\n"  # (a stream ending in a lone CR: both flush it, but httpx-sse only at close)
    return data


@settings(max_examples=120, deadline=None)
@given(data=streams(), cuts=st.lists(st.integers(0, 400), max_size=8))
def test_random_rechunkings_give_the_events_httpx_sse_gives(data, cuts):
    points = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    pieces = [data[a:b] for a, b in zip(points, points[1:]) if data[a:b]]
    expected = theirs([data])
    assert theirs(pieces) == expected  # (httpx-sse itself is chunking-proof)
    assert ours(pieces) == expected


def test_canned_and_real_streams_split_anywhere_give_the_same_events():
    real = "".join(line + "\n" for _, line in lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE)).encode()
    for data in (real, real.replace(b"\n", b"\r\n"), real.replace(b"\n", b"\r")):
        expected = theirs([data])
        assert len(expected) == 6
        for size in (1, 2, 3, 7, 64):
            pieces = [data[i:i + size] for i in range(0, len(data), size)]
            assert ours(pieces) == expected, (size, data[:20])


def test_the_event_rules():
    reader = EventReader()
    fed = ["\ufeffdata: one", "data:two", "", ": a comment", "event: delta", "id: 7", "retry: 30", "data", "",
           "event: lonely", "", "data: three"]
    events = [e for line in fed if (e := reader.feed(1.0, line)) is not None]
    assert [(e.data, e.event, e.id, e.retry) for e in events] == [("one\ntwo", "", "", None), ("", "delta", "7", 30)]
    assert events[0].lines == ("data: one", "data:two")  # the BOM is stripped once, the lines kept as received
    last = reader.finish()
    assert last.data == "three" and last.id == "7" and not last.terminated  # the id carries over; never dispatched
    old = [e.data for e in read_events([(0.0, "data: a"), (0.0, "data: b")], LINES)]
    assert old == ["a", "b"]  # recordings without blank lines: one event per data line


def test_multi_line_data_cr_endings_and_a_bom_over_http(server, tmp_path):
    """A valid event whose JSON spans data lines, a stream with CR-only line ends, and one with a leading BOM."""
    whole = json.loads(chunk(tool(0, "call_a", "get_weather", "".join(ARGS)))[6:])
    text = json.dumps(whole, indent=1)  # the JSON over many lines: one data: line each
    multi = "\n".join("data: " + part for part in text.split("\n"))
    for name, scenario in {
        "multi": Scenario(lines_of(ROLE, multi, FINISH_TOOLS, DONE)),
        "cr": Scenario(tail=("\r\r".join([ROLE, chunk(tool(0, "call_a", "get_weather", "".join(ARGS))), FINISH_TOOLS,
                                          DONE]) + "\r\r").encode()),
        "bom": Scenario(tail=("\ufeff" + "\n\n".join([chunk(tool(0, "call_a", "get_weather", "".join(ARGS))),
                                                     FINISH_TOOLS, DONE]) + "\n\n").encode()),
    }.items():
        url = server.play(f"sse-{name}", scenario)
        request = CaptureRequest(endpoint_url(url), dict(BODY), read_timeout=5.0)
        recorder = CaptureRecorder(tmp_path / f"{name}.jsonl", request)
        result = capture_sync(request, recorder.write)
        recorder.finish(result)
        assert result.error is None, (name, result.error)
        analysis = analyze_capture_result(result)
        assert [(c.id, c.name, c.streamed_arguments) for c in analysis.calls] == [
            ("call_a", "get_weather", "".join(ARGS))], name
        # the BOM stream has no role chunk: clients that need one fail, and that is flagged
        expected = ["role-missing"] if name == "bom" else []
        assert [v.rule for v in analysis.violations] == expected, (name, analysis.violations)
        assert analysis.calls[0].reconstructs, name  # the profiles this module pins need no role
        # the recording keeps the event boundaries: its replay reads the same events
        [replayed] = load_analyses(tmp_path / f"{name}.jsonl")
        assert replayed.violations == analysis.violations and replayed.step_count == analysis.step_count


def test_an_event_with_empty_data_is_not_a_chunk():
    a = analyze_capture_lines(lines_of("data:", ROLE, "event: ping", chunk(finish="stop"), DONE))
    assert a.step_count == 3 and a.violations == []


@pytest.mark.parametrize("framing", ["events", "lines"])
def test_old_recordings_without_blank_lines_still_read(framing):
    lines = [(0.0, line) for _, line in lines_of(ROLE, *clean_call(), FINISH_TOOLS, DONE) if line]
    a = analyze_capture_lines(lines, framing=framing)
    if framing == "lines":
        assert a.violations == [] and a.calls[0].reconstructs
    else:  # read as the spec says, those lines are one event of many data lines: not JSON, nothing judged
        assert {v.rule for v in a.violations} == {"protocol-unknown"}
    assert STREAM_ID
