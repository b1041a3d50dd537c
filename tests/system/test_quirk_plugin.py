"""Adding a quirk is one stream with a quirk's header: a test-only quirk, served and read like a shipped one.

``tests/support/plugin_quirk.py`` writes ``calls_interleaved`` into a folder of its own (the
recipe writes into ``fixtures/quirks/`` with scripts/make_quirks.py). From there it replays to
its expected verdict, ``callscope clients`` says what every profile ends with, ``callscope serve
--quirks FOLDER`` serves it by name to a real client, and, with the real libraries installed,
every one of them ends with the outcome the quirk stores and its profile predicts. Nothing
outside the test suite is edited for it.
"""

from __future__ import annotations

import json

import pytest

from callscope.cli import main as cli_main
from callscope.engine.analysis.expectations import check_verdict, verdicts_by_policy
from callscope.engine.recordings.replay import analyze_recording, load_recording
from callscope.engine.recordings.trace import read_trace
from tests.support import client_libraries as harness
from tests.support import plugin_quirk


@pytest.fixture
def quirk(tmp_path) -> harness.QuirkStream:
    path = plugin_quirk.write(tmp_path)
    return harness.QuirkStream(plugin_quirk.QUIRK_ID, "chat", read_trace(path))


def _path(tmp_path):
    return tmp_path / f"{plugin_quirk.QUIRK_ID}.jsonl"


def test_it_replays_to_its_expected_verdict(quirk, tmp_path):
    recording = load_recording(_path(tmp_path))
    (analysis,) = analyze_recording(recording)
    (verdict,) = verdicts_by_policy(quirk.trace.header.expect).values()
    assert check_verdict(analysis, verdict) == []


def test_callscope_clients_reads_it_and_each_profile_predicts_its_stored_outcome(quirk, tmp_path, capsys):
    assert cli_main(["clients", str(_path(tmp_path)), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["streams"]
    assert {p: c["outcome"] for p, c in row["clients"].items()} == {p: "ok" for p in row["clients"]}
    sent = harness.wire_ids(quirk)
    for profile, stored in plugin_quirk.OUTCOMES.items():
        assert harness.differences(harness.predicted(quirk, profile), stored, sent) == [], profile


def test_serve_quirks_plays_it_by_name_to_the_official_sdk(quirk, tmp_path):
    real = harness.real_outcomes([quirk], profiles=["openai-python"], folder=tmp_path)
    assert real[plugin_quirk.QUIRK_ID]["openai-python"] == plugin_quirk.OUTCOMES["openai-python"]


@pytest.mark.node
def test_every_real_library_ends_with_what_it_stores(quirk, tmp_path):
    real = harness.real_outcomes([quirk], folder=tmp_path)[plugin_quirk.QUIRK_ID]
    sent = harness.wire_ids(quirk)
    assert set(real) == set(plugin_quirk.OUTCOMES)
    for profile, outcome in real.items():
        assert harness.differences(plugin_quirk.OUTCOMES[profile], outcome, sent) == [], profile
        assert harness.differences(harness.predicted(quirk, profile), outcome, sent) == [], profile
