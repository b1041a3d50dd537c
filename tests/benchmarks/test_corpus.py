"""The corpus generator: every kind `callscope check` reads, from the shipped library, the same for the same seed."""

from __future__ import annotations

import hashlib

from callscope.benchmarks.corpus import SERVERS, generate, load_sources, plan
from callscope.engine.corpus.paths import expand
from callscope.engine.recordings.replay import load_recording


def _digest(folder) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_corpus_has_every_kind_in_its_share_and_is_the_same_for_the_same_seed(tmp_path):
    kinds = generate(tmp_path / "a", 200, seed=4)
    assert kinds == plan(200) and sum(kinds.values()) == 200
    found = list(expand([str(tmp_path / "a")]))
    assert len(found) == 200
    read = [load_recording(p) for p in found]
    assert {r.kind for r in read} == {"trace", "sse", "har", "fixture"}
    captures = [r for r in read if r.kind == "trace" and r.holds_captures]
    assert len(captures) == kinds["capture"]
    sessions = sorted((tmp_path / "a" / "sessions").iterdir())
    assert sessions and all((s / "turns.jsonl").is_file() for s in sessions)
    generate(tmp_path / "b", 200, seed=4)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")


def test_the_sources_are_the_shipped_library():
    sources, captures, fixtures = load_sources()
    assert len(sources) >= 60 and fixtures  # a text trace per format and case; the byte-prefix fixture files
    assert all(load_recording(p).holds_captures for p in captures)  # shipped capture traces, copied as recorded
    assert len({s.style for s in SERVERS}) == len(SERVERS) == 4
