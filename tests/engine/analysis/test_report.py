"""The JSON report validates against the shared contract and says what the analysis found."""

import json

import pytest

from callscope.engine.analysis.report import report_json, summary_text
from tests.support.parse_sequences import GROWING, PARALLEL, run
from tests.support.schema import validate_report


@pytest.mark.parametrize("policy", ["incremental", "atomic", "llama_server"])
@pytest.mark.parametrize("chunks", [False, True])
def test_report_validates(policy, chunks):
    doc = report_json([run(GROWING, policy=policy), run(PARALLEL, policy=policy)], include_chunks=chunks)
    validate_report(json.loads(json.dumps(doc)))
    assert ("chunks" in doc["runs"][0]) is chunks


def test_report_fields_follow_the_analysis():
    a = run(GROWING)
    r = report_json([a], include_chunks=True)["runs"][0]
    assert r["source"] == {"kind": "fixture", "path": None, "format": None, "policy": "incremental"}
    assert r["steps"] == 4 and r["unit"] == "byte" and r["timed"] is False
    assert r["calls"][0]["name"] == "get_weather"
    assert r["calls"][0]["reconstructs"] is True
    assert r["calls"][0]["first_delta"] == {"step": 1, "ms": None}
    assert r["ttfd"] == {"streaming": {"step": 1, "ms": None}, "atomic": {"step": 4, "ms": None}}
    assert r["finish_reason"] == "tool_calls"
    assert r["chunks"][0]["chunk"]["choices"][0]["delta"]["role"] == "assistant"
    assert r["chunks"][-1]["chunk"]["choices"][0]["finish_reason"] == "tool_calls"


def test_summary_names_calls_ttfd_and_violations():
    text = summary_text(run(GROWING))
    assert "get_weather" in text and "reconstructs" in text
    assert "byte 1 incremental vs byte 4 atomic" in text
    assert "violations: none" in text
