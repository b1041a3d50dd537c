"""The differential test: every quirk served over HTTP on 127.0.0.1 to every real client library.

For each (quirk, library) the profile must predict exactly what the library ends with
(the calls: id, name, arguments as JSON, flagged invalid or not; or that it raises), and
the outcome stored with the fixture (``extra.outcomes``) must be what the library does
today. The npm libraries come from ``make node-clients`` (a lockfile-keyed cache), the
Python ones from the ``dev`` extra; without them the test skips locally and fails in CI (its `node` need).
"""

from __future__ import annotations

import json

import pytest

from callscope.cli import main as cli_main
from callscope.engine.streams.clients import PROFILES, default_profiles
from tests.support import client_libraries as harness

STREAMS = harness.quirks()
BY_ID = {s.id: s for s in STREAMS}
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def real_libraries() -> dict[str, dict[str, harness.Outcome]]:
    """What every real library ends with on every quirk (needs `node`: skipped without them, failed in CI)."""
    return harness.real_outcomes(STREAMS)


def _stored(stream: harness.QuirkStream) -> dict[str, harness.Outcome]:
    return stream.trace.header.extra.get("outcomes", {})


def test_the_library_covers_the_issue_and_every_client():
    assert len([s for s in STREAMS if not s.id.startswith("clean_")]) >= 20
    assert {"clean_chat", "clean_responses", "clean_anthropic"} <= set(BY_ID)
    for stream in STREAMS:
        quirk = stream.trace.header.extra["quirk"]
        assert stream.trace.header.description and quirk["sent_by"], stream.id
        assert stream.id.startswith("clean_") or quirk["sources"], f"{stream.id} cites no public report"
        readers = {p for p, (protocols, _) in harness.PYTHON_CLIENTS.items() if stream.protocol in protocols}
        readers |= {p for p, protocols in harness.NODE_CLIENTS.items() if stream.protocol in protocols}
        assert set(_stored(stream)) == readers, stream.id
        assert set(stream.trace.header.extra["measured_with"]) == readers, stream.id


def test_every_profile_predicts_what_the_stored_outcome_says():
    """Fast, no library needed: each profile against the outcomes the real libraries gave when recorded."""
    wrong = []
    for stream in STREAMS:
        sent = harness.wire_ids(stream)
        for profile, outcome in _stored(stream).items():
            found = harness.differences(harness.predicted(stream, profile), outcome, sent)
            if found:
                wrong.append(f"{stream.id} / {profile}: {found}")
    assert not wrong, "\n".join(wrong)


def test_every_profile_predicts_what_the_real_library_ends_with(real_libraries):
    wrong = []
    for stream in STREAMS:
        sent = harness.wire_ids(stream)
        for profile, outcome in real_libraries[stream.id].items():
            found = harness.differences(harness.predicted(stream, profile), outcome, sent)
            if found:
                wrong.append(f"{stream.id} / {profile}: {found}")
    assert not wrong, "\n".join(wrong)


def test_the_stored_outcomes_are_what_the_real_libraries_do_today(real_libraries):
    wrong = []
    for stream in STREAMS:
        sent = harness.wire_ids(stream)
        for profile, outcome in real_libraries[stream.id].items():
            found = harness.differences(_stored(stream)[profile], outcome, sent)
            if found:
                wrong.append(f"{stream.id} / {profile}: {found}")
    assert not wrong, "run scripts/make_quirks.py --record, and read the diff:\n" + "\n".join(wrong)


def test_the_comparison_can_fail():
    """A prediction that is off in any field is told apart (ids made up by a library excepted)."""
    stream = BY_ID["name_fragmented"]
    sent = harness.wire_ids(stream)
    node = _stored(stream)["openai-node"]
    assert harness.differences(node, _stored(stream)["openai-python"], sent)  # 'ther' vs 'get_weather'
    assert harness.differences({"raises": "TypeError: x"}, node, sent)
    bent = {"calls": [{**node["calls"][0], "arguments": '{"city": "Lyon"}'}]}
    assert harness.differences(bent, node, sent)
    flagged = {"calls": [{**node["calls"][0], "invalid": True}]}
    assert harness.differences(flagged, node, sent)
    made_up = {"calls": [{**node["calls"][0], "id": "<generated>"}]}
    assert harness.differences(made_up, {"calls": [{**node["calls"][0], "id": "call_x1"}]}, sent) == []
    assert harness.differences(made_up, node, sent)  # call_a was sent: a library that kept it made nothing up


def _breaks_a_default_client(stream: harness.QuirkStream, analysis) -> bool:
    meant = {"calls": [{"id": c.id, "name": c.name, "arguments": c.streamed_arguments} for c in analysis.calls]}
    sent = harness.wire_ids(stream)
    defaults = set(default_profiles()) - {"naive"}
    return any(harness.differences(outcome, meant, sent) for profile, outcome in _stored(stream).items()
               if profile in defaults)


def test_strict_fails_every_quirk_that_breaks_a_default_client_and_passes_a_clean_stream(server, capsys):
    from callscope.engine.recordings.capture_trace import analyze_capture_trace
    from tests.support.sse_server import Scenario

    breaking = 0
    for stream in STREAMS:
        analysis = analyze_capture_trace(stream.trace)
        url = server.play(f"strict-{stream.id}", Scenario([(0.0, r.line) for r in stream.trace.lines]))
        args = ["capture", url, "--prompt", "x", "--protocol", stream.protocol, "--strict", "--json"]
        code = cli_main(args)
        report = json.loads(capsys.readouterr().out)
        if stream.id.startswith("clean_"):
            assert code == 0 and report["runs"][0]["violations"] == [], stream.id
        elif _breaks_a_default_client(stream, analysis):
            breaking += 1
            assert code == 1, f"{stream.id} breaks a default client but passes --strict"
            assert not all(c["reconstructs"] for c in report["runs"][0]["calls"]) or not report["runs"][0]["calls"]
    assert breaking >= 15


def test_every_default_library_has_a_default_profile():
    libraries = set(harness.PYTHON_CLIENTS) | set(harness.NODE_CLIENTS)
    assert libraries <= set(default_profiles()) and libraries <= set(PROFILES)
