"""``repeat``: large GBNF repetitions nested under llama.cpp's limit, matching exactly the same strings."""

from __future__ import annotations

import re

import pytest

from callscope.engine.decode.demos import DEMOS
from callscope.engine.decode.grammar import build_tool_grammar, forceable_formats
from callscope.engine.formats._kit.gbnf import MAX_REPETITION, repeat

_COUNTS = re.compile(r"\{(\d+)(?:,(\d+))?\}")


def _largest_count(gbnf: str) -> int:
    return max((int(n) for m in _COUNTS.finditer(gbnf) for n in m.groups() if n), default=0)


@pytest.mark.parametrize(("low", "high"), [(0, 0), (0, 24), (3, 3), (2599, 2999), (0, 2500), (1000, 1000),
                                           (2000, 2001), (0, 3001), (4321, 4321)])
def test_repeat_matches_exactly_low_to_high_items_with_no_large_count(low, high):
    expression = repeat("[a]", low, high)
    assert _largest_count(expression) <= MAX_REPETITION
    # the GBNF of a character class, groups, alternatives and counts reads as a Python regex
    pattern = re.compile(expression.replace('""', "").replace(" ", ""))
    lengths = {n for n in range(0, high + 1200) if pattern.fullmatch("a" * n)}
    assert lengths == set(range(low, high + 1))


@pytest.mark.llama  # the grammar is built with llama-cpp-python's schema converter
@pytest.mark.parametrize("demo_name", list(DEMOS))
@pytest.mark.parametrize("format_id", forceable_formats())
def test_no_demo_grammar_carries_a_count_over_the_limit(demo_name, format_id):
    demo = DEMOS[demo_name]
    options = demo.run_options(demo.tools())
    grammar = build_tool_grammar(format_id, demo.tools(), max_calls=options["max_calls"],
                                 content_chars=options["content_chars"], max_string=options["max_string"])
    assert _largest_count(grammar.gbnf) <= MAX_REPETITION
