"""One recording's verdict: a pure function of one file, for every kind `callscope replay` reads, never raising."""

from __future__ import annotations

import json
import pickle
import shutil

import pytest

from callscope.benchmarks.corpus import SERVERS, load_sources, write_capture, write_har, write_sse, write_trace
from callscope.engine.core import rules
from callscope.engine.core.shipped import fixtures_dir
from callscope.engine.corpus import verdict as verdict_module
from callscope.engine.corpus.verdict import check_recording, reason
from callscope.engine.recordings.replay import load_analyses

SERVER = {s.style: s for s in SERVERS}


@pytest.fixture(scope="module")
def sources():
    found, _, _ = load_sources()
    return {s.name: s for s in found}


def test_a_text_trace_is_judged_like_replay_judges_it(tmp_path, sources):
    path = tmp_path / "t.jsonl"
    write_trace(path, sources["hermes_parallel"], 2.0)
    v = check_recording(str(path))
    [analysis] = load_analyses(path)
    assert v.error is None and v.kind == "trace" and v.model == "hermes format" and v.server is None
    [run] = v.runs
    assert run.calls == len(analysis.calls) == 2 and run.violations == {}
    assert run.ttfd_ms == analysis.ttfd_streaming.ms and run.ttfd_atomic_ms == analysis.ttfd_atomic.ms
    assert run.ttfd_ms < run.ttfd_atomic_ms and v.cpu_ms > 0


def test_a_proxy_turn_names_its_model_server_and_client_profiles(tmp_path, sources):
    clean = tmp_path / "turn-0001.jsonl"
    write_capture(clean, sources["hermes_single"], SERVER["clean"], 1.0)
    v = check_recording(str(clean))
    assert v.error is None and v.model == "Qwen/Qwen3-8B" and v.server == "10.0.0.11:8000"
    assert v.rules() == {} and v.clients() and set(v.clients().values()) == {0}  # every profile assembled it


@pytest.mark.parametrize("style, expected", [
    ("repeats", {rules.ID_REPEATED, rules.NAME_REPEATED}),
    ("atomic", {rules.ATOMIC_TOOL_CALL}),
    ("no-index", {rules.INDEX_MISSING}),
])
def test_each_kind_of_server_breaks_its_own_rules(tmp_path, sources, style, expected):
    path = tmp_path / "turn-0001.jsonl"
    write_capture(path, sources["hermes_single"], SERVER[style], 0.5)  # slow: the atomic silence is long
    v = check_recording(str(path))
    assert expected <= set(v.rules()), v.rules()
    [analysis] = load_analyses(path)
    assert v.rules() == {r: sum(x.rule == r for x in analysis.violations) for r in v.rules()}
    assert v.first_violation().split(":")[0] == analysis.violations[0].rule


def test_client_violations_are_counted_by_the_profile_that_raised_them(tmp_path, sources):
    path = tmp_path / "turn-0001.jsonl"
    write_capture(path, sources["hermes_parallel"], SERVER["repeats"], 1.0)
    v = check_recording(str(path))
    [analysis] = load_analyses(path)
    raised = [x for x in analysis.violations if x.rule in verdict_module.CLIENT_RULES]
    assert raised, "a repeated name is concatenated by some profile"
    assert sum(v.clients().values()) == len(raised)
    for profile, count in v.clients().items():
        assert count == sum(x.detail.startswith(profile + " ") for x in raised)


def test_an_sse_dump_is_untimed_and_a_har_file_holds_a_run_per_stream(tmp_path, sources):
    dump = tmp_path / "d.sse"
    write_sse(dump, sources["hermes_single"], SERVER["clean"])
    v = check_recording(str(dump))
    assert v.kind == "sse" and v.runs[0].ttfd_ms is None and v.runs[0].ttfd_step is not None
    har = tmp_path / "x.har"
    write_har(har, [(sources["hermes_single"], SERVER["clean"]), (sources["glm45_single"], SERVER["atomic"])])
    v = check_recording(str(har))
    assert v.kind == "har" and len(v.runs) == 2 and v.server == "10.0.0.11:8000" and v.model == "Qwen/Qwen3-8B"


def test_a_fixture_file_gives_one_run_per_named_fixture(tmp_path):
    path = tmp_path / "f.txt"
    shutil.copyfile(fixtures_dir() / "prefix" / "llama_server_fix.txt", path)
    v = check_recording(str(path))
    assert v.kind == "fixture" and len(v.runs) == 2 and v.model is None and v.server is None
    assert all(r.ttfd_ms is None for r in v.runs)


@pytest.mark.parametrize("content, why", [
    (b"", "empty file"),
    (b"\x00\x01\x02binary", "is not a recording"),
    (b'{"not": "a trace"}\n', "is not a recording"),
    (b'{"type":"header","schema":"callscope.trace/1","source":"text","format":"nope","unit":"char"}\n', "line 1: "),
])
def test_an_unreadable_file_is_a_one_line_reason_never_an_exception(tmp_path, content, why):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    v = check_recording(str(path))
    assert v.error is not None and why in v.error and "\n" not in v.error
    assert not v.error.startswith(str(path)), "the path is shown beside the reason, not in it"
    assert v.to_json() == {"path": str(path), "kind": None, "error": v.error}


def test_a_missing_file_and_a_folder_are_verdicts_too(tmp_path):
    assert check_recording(str(tmp_path / "gone.jsonl")).error == "no such file"
    assert check_recording(str(tmp_path)).error


def test_a_bug_in_the_analysis_is_that_files_verdict(tmp_path, sources, monkeypatch):
    path = tmp_path / "t.jsonl"
    write_trace(path, sources["hermes_single"], 1.0)

    def broken(*_args, **_kwargs):
        raise ZeroDivisionError("division by zero\nsecond line")

    monkeypatch.setattr(verdict_module, "analyze_recording", broken)
    v = check_recording(str(path))
    assert v.error == "analysis failed: ZeroDivisionError: division by zero second line"


def test_a_verdict_is_small_json_and_pickles(tmp_path, sources):
    path = tmp_path / "turn-0001.jsonl"
    write_capture(path, sources["hermes_parallel"], SERVER["repeats"], 1.0)
    v = check_recording(str(path))
    line = json.dumps(v.to_json())
    assert json.loads(line)["violations"] == dict(v.rules()) and len(line) < 2000
    assert pickle.loads(pickle.dumps(v)) == v


def test_reason_drops_the_path_and_names_the_line():
    assert reason("/a/b.jsonl", "/a/b.jsonl:3: bad step") == "line 3: bad step"
    assert reason("/a/b.jsonl", "/a/b.jsonl: empty file") == "empty file"
    assert reason("/a/b.jsonl", "/a/b.jsonl is neither") == "is neither"
    assert reason("/a/b.jsonl", "something\nelse") == "something else"


def test_a_trace_in_a_format_derived_from_its_template_is_derived_again_as_replay_does():
    from callscope.engine.core.shipped import resolve_recording

    path = resolve_recording("families/functools_parallel")
    v = check_recording(path)
    assert v.error is None and v.runs[0].calls == 2 and v.model == "derived_functools format"
    assert v.rules() == {}
