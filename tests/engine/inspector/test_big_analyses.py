"""A long call in the inspector: what is kept per step stays small, and the short ways give the long ways' answers."""

from __future__ import annotations

import tracemalloc

import pytest

from callscope.engine.analysis.report import report_json
from callscope.engine.inspector.parse_cursor import ParseCursor
from callscope.engine.policies.base import StreamingPolicy
from callscope.engine.recordings.replay import load_analyses
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def long_call(tmp_path_factory):
    from callscope.benchmarks.gui import make_trace

    path = tmp_path_factory.mktemp("long") / "long.jsonl"
    make_trace(path, 20_000)  # one write_file call of 80,000 characters, 4 a step
    return load_analyses(path)[0]


def test_parse_checkpoints_keep_no_copy_of_the_text(long_call):
    """A checkpoint every 256 events used to hold the whole parse as strings: 3.3 MB for an 80 KB call here
    (80 MB for the 400 KB call of a 100,000-step trace). Prefixes of the folding lists are a few bytes each."""
    text = len(long_call.terminal.calls[0].arguments)
    tracemalloc.start()
    try:
        cursor = ParseCursor(long_call)
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept < 10 * text, f"{kept:,} bytes kept for a {text:,}-character call"
    steps = [0, 1, 5000, 12345, long_call.last_step - 1, long_call.last_step, 77, 19999]
    for step in steps:  # far jumps both ways still give the fold from the start
        assert cursor.at(step) == long_call.parse_at(step), step


def _reports(paths, policy):
    reports = []
    for path in paths:
        try:
            reports.append(report_json(load_analyses(path, policy), include_chunks=True))
        except ValueError as exc:  # a recording this checkout cannot read alone (a derived format's family)
            reports.append(str(exc))
    return reports


@pytest.mark.parametrize("policy", ["incremental", "atomic", "llama_server"])
def test_the_policies_short_way_sends_what_the_long_way_sends(monkeypatch, policy):
    """Steps of one event take a short way (:meth:`StreamingPolicy.quick_step`); turned off, every chunk,
    verdict and reconciliation of the shipped library is the same."""
    paths = sorted((ROOT / "fixtures").glob("**/*.jsonl"))
    paths = [p for p in paths if "quirks" not in p.parts][:60]
    quick = _reports(paths, policy)
    assert sum(isinstance(r, dict) for r in quick) >= 40
    monkeypatch.setattr(StreamingPolicy, "quick_step", lambda self, step, ms, event: False)
    for cls in StreamingPolicy.__subclasses__():
        monkeypatch.setattr(cls, "quick_step", lambda self, step, ms, event: False, raising=False)
    assert _reports(paths, policy) == quick
