"""The corpus summary is a monoid: any split of the recordings, merged in any order, gives the same summary."""

from __future__ import annotations

import math
import random

import pytest

from callscope.engine.corpus.paths import expand
from callscope.engine.corpus.report import RECORDING_COLUMNS, recording_row, summary_text
from callscope.engine.corpus.summary import WORST, LogHistogram, Summary
from callscope.engine.corpus.verdict import RecordingVerdict, RunVerdict, check_recording


@pytest.fixture(scope="module")
def verdicts(corpus):
    found = [check_recording(p) for p in expand([str(corpus)])]
    found.append(RecordingVerdict(str(corpus / "missing.jsonl"), None, error="no such file"))
    return found


def test_merging_any_split_in_any_order_gives_the_same_summary(verdicts):
    whole = Summary.of(verdicts).to_json()
    rng = random.Random(3)
    for _ in range(5):
        shuffled = verdicts[:]
        rng.shuffle(shuffled)
        cuts = sorted(rng.sample(range(1, len(shuffled)), 6))
        parts = [Summary.of(shuffled[a:b]) for a, b in zip([0, *cuts], [*cuts, len(shuffled)])]
        rng.shuffle(parts)
        merged = Summary()
        for part in parts:
            merged.merge(part)
        assert _same(merged.to_json(), whole)


def _same(a: dict, b: dict) -> bool:
    """Equal but for float sums (CPU time added in another order) and the order of the unreadable list."""
    a, b = dict(a), dict(b)
    for doc in (a, b):
        doc.pop("cpu_ms")
        doc["unreadable"] = sorted(doc["unreadable"], key=lambda u: u["path"])
        for section in ("by_model", "by_server", "by_kind"):
            doc[section] = {k: {m: v for m, v in t.items() if m != "cpu_ms"} for k, t in doc[section].items()}
    return a == b


def test_the_summary_counts_what_the_verdicts_say(verdicts):
    s = Summary.of(verdicts)
    readable = [v for v in verdicts if v.error is None]
    assert s.recordings == len(verdicts) and s.unreadable == 1 and s.readable == len(readable)
    assert s.calls == sum(v.calls for v in readable) and s.runs == sum(len(v.runs) for v in readable)
    assert s.clean == sum(1 for v in readable if not v.rules())
    assert s.violations == sum(t.violations for t in s.by_rule.values())
    assert sum(t.recordings for t in s.by_model.values()) == len(readable)
    assert sum(t.violations for t in s.by_server.values()) == s.violations
    assert {"trace", "sse", "har", "fixture"} <= set(s.by_kind)
    assert s.by_client and all(t.recordings for t in s.by_client.values())
    worst = s.worst_first()
    assert len(worst) == min(WORST, s.with_violations)
    ranked = sorted((v for v in readable if v.rules()), key=lambda v: (-len(v.rules()), -v.violation_count, v.path))
    assert [w.path for w in worst] == [v.path for v in ranked[:WORST]]


def test_ttfd_percentiles_are_within_a_percent_of_the_exact_ones(verdicts):
    s = Summary.of(verdicts)
    exact = sorted(r.ttfd_ms for v in verdicts for r in v.runs if r.ttfd_ms is not None)
    assert s.ttfd.count == len(exact) > 20
    for q in (50, 90, 99):
        true = exact[max(1, math.ceil(q / 100 * len(exact))) - 1]
        assert s.ttfd.percentile(q) == pytest.approx(true, rel=0.006, abs=1e-9)
    assert s.ttfd.percentile(50) < s.ttfd_atomic.percentile(50)  # incremental streams sooner


def test_the_histogram_keeps_zeros_and_any_count_in_a_fixed_size():
    h = LogHistogram()
    assert h.percentile(50) is None
    for _ in range(3):
        h.add(0.0)
    for i in range(1, 100_001):
        h.add(i * 0.37)
    assert h.percentile(0.002) == 0.0 and h.percentile(0.004) > 0 and h.count == 100_003
    assert h.percentile(50) == pytest.approx(50_000 * 0.37, rel=0.006)
    assert len(h.bins) < 1400  # five decades at 230 bins a decade, whatever the count


def test_the_text_and_the_tables_name_every_part(verdicts):
    s = Summary.of(verdicts)
    text = summary_text(s, 2.0, "2 worker processes")
    for part in ("violations by rule:", "by model", "by server", "by client profile", "TTFD", "incremental", "atomic",
                 "worst recordings:", "unreadable (1):", "missing.jsonl: no such file", "recordings/s"):
        assert part in text, part
    sections = {row["section"] for row in s.table()}
    assert sections == {"total", "rule", "model", "server", "client", "kind", "ttfd_ms", "worst", "unreadable"}
    row = recording_row(verdicts[0])
    assert tuple(row) == RECORDING_COLUMNS


def test_a_recording_without_calls_adds_no_ttfd():
    v = RecordingVerdict("x", "trace", runs=[RunVerdict("x", 0, 3, {}, None, "stop", True, None, None, None, None)])
    s = Summary.of([v])
    assert s.ttfd.count == 0 and s.untimed_runs == 0 and s.clean == 1
