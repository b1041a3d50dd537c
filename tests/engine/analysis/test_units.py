"""Labels on big traces: steps are not characters, times are never in scientific notation, numbers are never cut.

One engine wording (:mod:`callscope.engine.analysis.units`, ``short_seconds``) serves the CLI
report, the window's labels and the proxy's lines; the window's tables and axes show it whole.
"""

from __future__ import annotations

import re

import pytest

from callscope.engine.analysis.analyzer import Analyzer, SourceInfo
from callscope.engine.analysis.report import plural, short_seconds, summary_text, ttfd_gain
from callscope.engine.analysis.units import position_text, step_noun, steps_text, tick_texts
from callscope.engine.formats import make_parser
from callscope.engine.inspector.ttfd import ttfd_label
from callscope.engine.recordings.replay_text import analyze_text

SCIENTIFIC = re.compile(r"\b\d(?:\.\d+)?[eE][+-]\d")  # 2e+03, 1.84e+03 (not the hex of a call id)
CALL = '<tool_call>\n{"name": "write_file", "arguments": {"path": "a.py", "content": "' + "x" * 400 + '"}}\n</tool_call>'


def _long_run(steps: int = 40, last_step: int = 100_000, ms_per_step: float = 50_000.0):
    """A hermes call whose steps are far apart (the atomic emission ~2,000 s in) and whose last step is 100,000."""
    analyzer = Analyzer("long", SourceInfo("trace", None, "hermes", "incremental"), "token", True,
                        make_parser("hermes", None))
    size = -(-len(CALL) // steps)
    pieces = [CALL[i:i + size] for i in range(0, len(CALL), size)]
    for i, piece in enumerate(pieces, start=1):
        step = last_step if i == len(pieces) else i
        analyzer.feed_bytes(piece.encode(), i * ms_per_step, step=step)
    return analyzer.finish("stop")


def test_steps_of_several_characters_are_counted_as_steps_not_characters():
    text = "word " * 35_419  # 177,095 characters
    four = analyze_text(text, "hermes", unit="char", size=4)
    assert four.step_count == 44_274
    assert step_noun(four) == "step"
    assert steps_text(four) == "44,274 steps (177,095 chars)"
    assert "44,274 chars" not in summary_text(four)
    assert position_text(four, 12) == "step 12"
    one = analyze_text("héllo", "hermes", unit="char", size=1)
    assert (step_noun(one), steps_text(one)) == ("char", "5 chars")
    byte = analyze_text("héllo", "hermes", unit="byte", size=1)
    assert (step_noun(byte), steps_text(byte)) == ("byte", "6 bytes")


def test_counts_are_grouped():
    assert plural(100_000, "token") == "100,000 tokens"
    assert plural(1, "call") == "1 call"


@pytest.mark.parametrize("ms, expected", [
    (40, "40 ms"), (410, "0.41 s"), (9_994, "9.99 s"), (29_300, "29.3 s"), (412_000, "412 s"),
    (1_840_000, "30 min 40 s"), (1_999_980, "33 min 20 s"), (1e9, "277 h 46 min"),
])
def test_seconds_are_never_in_scientific_notation(ms, expected):
    assert short_seconds(ms) == expected


def test_a_long_run_reads_without_exponents_everywhere():
    analysis = _long_run()
    label = ttfd_label(analysis)
    gain = ttfd_gain(analysis)
    assert not SCIENTIFIC.search(label), label
    assert "atomic" in label and "min" in label, label
    assert gain is not None and re.search(r"\(\d+ min \d+ s earlier\)$", gain), gain
    report = summary_text(analysis)
    assert not SCIENTIFIC.search(report), report


def test_axis_ticks_are_grouped_and_never_scientific():
    assert tick_texts([0.0, 1e6, 2e6], 2e5) == ["0", "1,000,000", "2,000,000"]
    assert tick_texts([0.25, 0.5], 0.25) == ["0.25", "0.50"]
    assert tick_texts([-0.0], 1.0) == ["0"]
