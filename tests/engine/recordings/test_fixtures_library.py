"""The shipped fixture library: every recording in fixtures/ replays to the verdict it states.

A parser or policy change that alters what a fixture demonstrates fails here,
and so does a broken fixture file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from callscope.engine.analysis.expectations import check_verdict, verdicts_by_policy
from callscope.engine.analysis.report import report_json
from callscope.engine.formats import BUILTIN
from callscope.engine.recordings.replay import analyze_recording, load_recording
from callscope.engine.templates.families import FAMILIES
from callscope.engine.templates.recorded import recorded_format
from tests.support.paths import ROOT
from tests.support.schema import validate_report

pytestmark = pytest.mark.usefixtures("forget_derived")  # derived formats are forgotten after each test

FIXTURES = ROOT / "fixtures"
FILES = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".txt"))


def _streams(path: Path):
    """(name, description, expect) of every stream in the recording at ``path``."""
    recording = load_recording(path)
    if recording.fixtures is not None:
        return recording, [(f.name, f.description, f.expect) for f in recording.fixtures]
    header = recording.trace.header
    recorded_format(header.format, header.template)  # a format derived from the template it names: derived again
    return recording, [(recording.names()[0], header.description, header.expect)]


def test_the_library_is_there():
    assert len(FILES) >= 30, [str(p) for p in FILES]


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_every_recording_replays_to_its_expected_verdict(path):
    recording, streams = _streams(path)
    for name, description, expect in streams:
        assert description, f"{path.name}:{name} has no description"
        assert expect, f"{path.name}:{name} has no expected verdict"
        for policy, verdict in verdicts_by_policy(expect).items():
            (analysis,) = analyze_recording(recording, policy, name=name if recording.fixtures else None)
            problems = check_verdict(analysis, verdict)
            assert not problems, f"{path.name}:{name} under {policy}: " + "; ".join(problems)
            validate_report(json.loads(json.dumps(report_json([analysis], include_chunks=True))))


def test_every_wire_format_has_a_single_call_with_content_and_parallel_calls():
    for format_id in BUILTIN:
        single = load_recording(FIXTURES / "formats" / f"{format_id}_single.jsonl")
        parallel = load_recording(FIXTURES / "formats" / f"{format_id}_parallel.jsonl")
        assert single.trace.header.format == parallel.trace.header.format == format_id
        (a,) = analyze_recording(single)
        assert a.terminal.content.strip() and len(a.calls) == 1, format_id
        (b,) = analyze_recording(parallel)
        assert [c.index for c in b.calls] == [0, 1], format_id


TRACES = [p for p in FILES if p.suffix == ".jsonl" and load_recording(p).trace.header.template]


def test_every_format_and_family_fixture_names_its_template():
    named = {p.relative_to(FIXTURES).parts[0] for p in TRACES}
    assert named == {"formats", "families"}
    assert {f.name for f in FAMILIES} == {p.stem.rsplit("_", 1)[0] for p in TRACES if p.parent.name == "families"}


@pytest.mark.parametrize("path", TRACES, ids=[str(p.relative_to(FIXTURES)) for p in TRACES])
def test_format_auto_and_the_named_format_agree(path):
    """``replay --format auto`` reads the fixture with the parser of the template it names: the same format."""
    header = load_recording(path).trace.header
    chosen, choice = recorded_format(header.format, header.template, "auto")
    assert chosen == header.format, choice.reason


def test_headline_scenario_29_seconds_of_silence_against_a_first_delta_within_a_second():
    recording = load_recording(FIXTURES / "headline_701_tokens.jsonl")
    assert len(recording.trace.steps) == 701
    assert 28_500 <= recording.trace.steps[-1].ms <= 29_500  # 701 tokens at ~24 tok/s
    (run,) = analyze_recording(recording, "incremental")
    assert run.ttfd_streaming.ms < 1000
    assert run.ttfd_atomic.ms >= 29_000
    assert run.calls[0].reconstructs and run.finish_reason == "tool_calls"
    tool_chunks = [c for c in run.chunks if c.is_tool_call]
    assert len(tool_chunks) > 500  # streamed as written, not in one piece
    assert len([c for c in run.baseline_chunks if c.is_tool_call]) == 1


def test_failure_classes_are_covered():
    """The parse-carrying failure classes the issue lists each have a recording that shows them."""
    seen: dict[str, set[str]] = {}
    for path in FILES:
        _, streams = _streams(path)
        for _name, _, expect in streams:
            for policy, verdict in verdicts_by_policy(expect).items():
                seen.setdefault(policy, set()).update(verdict.get("violations", []))
    for rule in ("arguments-diverged", "name-revised", "calls-dropped", "parse-error", "invalid-json-arguments"):
        assert rule in seen["incremental"], rule
    assert "invalid-diff" in seen["llama_server"]


def test_a_wrong_expectation_is_caught(tmp_path):
    """The check itself can fail: a copy of a fixture that claims the wrong verdict is reported."""
    source = (FIXTURES / "prefix" / "name_revised.txt").read_text()
    wrong = source.replace('"finish_reason":"stop"', '"finish_reason":"tool_calls"', 1)
    assert wrong != source
    path = tmp_path / "wrong.txt"
    path.write_text(wrong)
    recording = load_recording(path)
    (fixture,) = recording.fixtures
    verdict = verdicts_by_policy(fixture.expect)["incremental"]
    (analysis,) = analyze_recording(recording, "incremental")
    assert check_verdict(analysis, verdict) == ["finish_reason: expected 'tool_calls', got 'stop'"]
