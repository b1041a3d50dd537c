"""Executors map the same per-file function; their summaries merge to the one this process makes alone."""

from __future__ import annotations

import os

import pytest

from callscope.engine.corpus import executors
from callscope.engine.corpus.executors import DIED, CheckOptions, run_inline, run_pool
from callscope.engine.corpus.paths import expand
from callscope.engine.corpus.summary import Summary
from tests.engine.corpus.test_summary import _same


def collect(batches) -> tuple[Summary, dict[str, object]]:
    summary, verdicts = Summary(), {}
    for batch in batches:
        summary.merge(batch.summary)
        assert batch.size == len(batch.verdicts) or not batch.verdicts
        verdicts.update((v.path, v) for v in batch.verdicts)
    return summary, verdicts


@pytest.fixture(scope="module")
def paths(corpus):
    return list(expand([str(corpus)]))


@pytest.fixture(scope="module")
def alone(paths):
    return collect(run_inline(paths, CheckOptions(batch=7)))


def test_the_pool_gives_what_one_process_gives(paths, alone):
    summary, verdicts = collect(run_pool(paths, CheckOptions(jobs=2, batch=5)))
    assert _same(summary.to_json(), alone[0].to_json())
    assert verdicts.keys() == alone[1].keys() == set(paths)
    for path, verdict in verdicts.items():
        expected = alone[1][path]
        assert (verdict.rules(), verdict.model, verdict.server, verdict.error) == \
            (expected.rules(), expected.model, expected.server, expected.error)


def test_without_keep_only_the_summaries_travel(paths, alone):
    summary, verdicts = collect(run_pool(paths, CheckOptions(jobs=2, keep=False)))
    assert verdicts == {} and summary.recordings == len(paths)
    assert _same(summary.to_json(), alone[0].to_json())


def _dies_on_some(path: str, policy: str = "incremental"):
    """A recording that kills its worker process (what a crash in a C extension or the OOM killer does)."""
    if path.endswith("000002.har"):
        os._exit(3)
    return REAL_CHECK(path, policy)


REAL_CHECK = executors.check_recording


def test_a_worker_that_dies_costs_only_its_recordings_verdict(paths, alone, monkeypatch):
    monkeypatch.setattr(executors, "check_recording", _dies_on_some)  # forked workers inherit the patch
    summary, verdicts = collect(run_pool(paths, CheckOptions(jobs=2, batch=4, start_method="fork")))
    killer = next(p for p in paths if p.endswith("000002.har"))
    assert verdicts.keys() == set(paths) and summary.recordings == len(paths)
    assert verdicts[killer].error == DIED and summary.unreadable == alone[0].unreadable + 1
    others = {p: v for p, v in verdicts.items() if p != killer}
    assert all(v.rules() == alone[1][p].rules() and v.error == alone[1][p].error for p, v in others.items())


def test_forkserver_workers_give_the_same_verdicts(paths, alone):
    summary, _ = collect(run_pool(paths[:30], CheckOptions(jobs=2, start_method="forkserver")))
    expected = Summary.of([alone[1][p] for p in paths[:30]])
    assert _same(summary.to_json(), expected.to_json())
