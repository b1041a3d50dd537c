"""The corpus table's engine: rows, cells, sort keys, filters and the TTFD histogram, without a window."""

from __future__ import annotations

import pytest

from callscope.engine.core import rules
from callscope.engine.corpus.browse import (
    ANY_VIOLATION,
    CLEAN,
    COLUMNS,
    UNREADABLE,
    CorpusFilter,
    CorpusRows,
    ttfd_histogram,
)
from callscope.engine.corpus.paths import expand
from callscope.engine.corpus.verdict import RecordingVerdict, check_recording


@pytest.fixture(scope="module")
def rows(corpus):
    found = CorpusRows(str(corpus))
    verdicts = [check_recording(p) for p in expand([str(corpus)])]
    assert found.add(verdicts[:10])
    found.add(verdicts[10:])
    found.add([RecordingVerdict(str(corpus / "gone.jsonl"), None, error="no such file")])
    return found


def test_filters_offer_what_arrived_and_keep_what_they_name(rows):
    assert rows.rule_choices()[:3] == [ANY_VIOLATION, CLEAN, UNREADABLE]
    assert {rules.ID_REPEATED, rules.ATOMIC_TOOL_CALL, rules.INDEX_MISSING} <= set(rows.rule_choices())
    assert "Qwen/Qwen3-8B" in rows.model_choices() and rows.client_choices()
    every = rows.rows

    def kept(f: CorpusFilter) -> list[RecordingVerdict]:
        return [v for v in every if f.matches(v)]

    assert len(kept(CorpusFilter())) == len(every)
    assert kept(CorpusFilter(rule=UNREADABLE)) == [every[-1]]
    bad, clean = kept(CorpusFilter(rule=ANY_VIOLATION)), kept(CorpusFilter(rule=CLEAN))
    assert len(bad) + len(clean) + 1 == len(every) and bad and clean
    repeated = kept(CorpusFilter(rule=rules.ID_REPEATED))
    assert repeated and all(rules.ID_REPEATED in v.rules() for v in repeated)
    qwen = kept(CorpusFilter(model="qwen3-8b-q4_k_m.gguf", rule=rules.NAME_REPEATED))
    assert qwen and all(v.model == "qwen3-8b-q4_k_m.gguf" for v in qwen)
    profile = rows.client_choices()[0]
    failing = kept(CorpusFilter(client=profile))
    assert all(v.clients()[profile] for v in failing)
    assert kept(CorpusFilter(text=".HAR")) == [v for v in every if v.path.endswith(".har")]


def test_cells_are_relative_and_sort_keys_put_missing_values_last(rows):
    titles = [c.title for c in COLUMNS]
    assert titles[:2] == ["Recording", "Violations"] and "TTFD" in titles and "Atomic TTFD" in titles
    first = rows.cell(0, 0)
    assert not first.startswith("/") and rows.rows[0].path.endswith(first)
    ttfd = titles.index("TTFD")
    keys = [rows.key(i, ttfd) for i in range(len(rows.rows))]
    timed = [k for k in keys if k != float("inf")]
    assert timed and len(timed) < len(keys)  # fixtures and SSE dumps have no clock
    assert rows.cell(len(rows.rows) - 1, titles.index("First violation / why unreadable")) == "no such file"
    assert rows.counts()[2] == 1


def test_the_histogram_counts_every_timed_run_in_bins_covering_both_curves(rows):
    h = ttfd_histogram(rows.rows)
    runs = [r for v in rows.rows for r in v.runs if r.ttfd_ms is not None]
    assert sum(h.incremental) == len(runs) and sum(h.atomic) == sum(r.ttfd_atomic_ms is not None for r in runs)
    assert len(h.edges) == len(h.incremental) + 1 and h.edges == sorted(h.edges)
    assert h.edges[0] <= min(r.ttfd_ms for r in runs) and h.edges[-1] > max(r.ttfd_atomic_ms or 0 for r in runs)
    assert ttfd_histogram([]).empty
