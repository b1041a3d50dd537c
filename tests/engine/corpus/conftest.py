"""A small corpus generated from the shipped library (every kind callscope check reads), once per session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    """120 recordings: text traces, proxy session folders, SSE dumps, HAR files and byte-prefix fixtures."""
    from callscope.benchmarks.corpus import generate

    out = tmp_path_factory.mktemp("corpus") / "corpus"
    generate(out, 120, seed=7)
    return out
