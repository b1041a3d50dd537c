"""What `callscope check PATH...` names: files, folders, session folders, globs, shipped names, each once."""

from __future__ import annotations

import os

from callscope.engine.corpus.paths import Missing, expand


def _files(corpus, sub: str) -> list[str]:
    return sorted(str(p) for p in (corpus / sub).rglob("*") if p.is_file() and p.name != "turns.jsonl")


def test_a_folder_is_walked_sorted_and_a_session_index_is_not_a_recording(corpus):
    found = list(expand([str(corpus)]))
    assert all(isinstance(p, str) for p in found)
    assert not any(p.endswith("turns.jsonl") for p in found)
    assert len(found) == 120 and found == sorted(found, key=lambda p: os.path.relpath(p, corpus).split(os.sep))
    assert any(os.sep + "sessions" + os.sep in p for p in found)


def test_a_session_folder_alone(corpus):
    session = next(p for p in sorted((corpus / "sessions").iterdir()))
    found = list(expand([str(session)]))
    assert found and all(os.path.basename(p).startswith("turn-") for p in found)


def test_globs_files_and_names_are_each_taken_once(corpus):
    pattern = str(corpus / "**" / "*.sse")
    one = _files(corpus, "dumps")[0]
    found = list(expand([pattern, one, str(corpus / "dumps")]))
    assert found == _files(corpus, "dumps")


def test_names_that_match_nothing_are_listed_not_fatal(tmp_path):
    found = list(expand([str(tmp_path / "gone"), str(tmp_path / "*.nothing"), "headline_701_tokens"]))
    assert found[0] == Missing(str(tmp_path / "gone"), "no such file or folder")
    assert found[1] == Missing(str(tmp_path / "*.nothing"), "no file matches this pattern")
    assert found[2].endswith("headline_701_tokens.jsonl")  # a shipped fixture's name, as `replay` takes it


def test_a_file_is_taken_whatever_its_suffix_and_hidden_files_are_skipped_in_a_walk(tmp_path):
    (tmp_path / "capture.log").write_text("data: {}\n")
    (tmp_path / ".hidden.jsonl").write_text("{}\n")
    (tmp_path / "notes.md").write_text("# notes\n")
    assert list(expand([str(tmp_path)])) == []
    assert list(expand([str(tmp_path / "capture.log")])) == [str(tmp_path / "capture.log")]
