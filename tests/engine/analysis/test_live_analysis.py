"""Both live analyzers are one LiveAnalysis: fed item by item, shown growing, finished, like their batch runs.

The GUI drives a model run and a capture through the same calls (feed, provisional,
refresh, finish); these tests drive both analyzers exactly that way, with no Qt,
and check the live result equals the one the CLI computes in one go.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from callscope.engine.analysis.analyzer import Analyzer, SourceInfo
from callscope.engine.analysis.live import RUNNING, LiveAnalysis
from callscope.engine.analysis.report import report_json
from callscope.engine.formats import make_parser
from callscope.engine.formats.samples import render
from callscope.engine.streams.conformance import CaptureAnalyzer, analyze_capture_lines
from tests.support.paths import ROOT
from tests.support.sse_server import RULE_STREAMS

TEXT = render("hermes", [("get_weather", {"city": "Paris"})], content="Checking.").encode()
TOKENS = [(TEXT[i : i + 4], float(i), i) for i in range(0, len(TEXT), 4)]


def model_analyzer() -> Analyzer:
    return Analyzer("live", SourceInfo("model", None, "hermes", "incremental"), "token", True, make_parser("hermes"))


def drive(analyzer: LiveAnalysis, items: list) -> tuple:
    """What the GUI's live controller does, minus Qt: show at once, feed and refresh, finish."""
    live = analyzer.provisional()
    assert live.running and live.finish_cause == RUNNING and live.steps == []
    for item in items:
        analyzer.feed(item)
        analyzer.refresh(live)
    return live, analyzer.finish()


def test_both_analyzers_are_live_analyses():
    assert isinstance(model_analyzer(), LiveAnalysis)
    assert isinstance(CaptureAnalyzer(), LiveAnalysis)


def test_a_model_run_fed_live_grows_then_equals_its_batch_analysis():
    live, final = drive(model_analyzer(), TOKENS)
    assert live.running and len(live.steps) == len(TOKENS)  # the provisional view shares the growing lists
    assert live.terminal.calls and live.terminal.calls[0].name == "get_weather"  # refreshed scalars
    assert live.ttfd_streaming.step is not None
    batch = model_analyzer()
    for data, ms, token in TOKENS:
        batch.feed_bytes(data, ms, (token,))
    assert not final.running and report_json([final]) == report_json([batch.finish()])


@pytest.mark.parametrize("rule", ["name-repeated", "index-reused"])
def test_a_capture_fed_live_grows_then_equals_its_batch_analysis(rule):
    lines = RULE_STREAMS[rule]
    live, final = drive(CaptureAnalyzer(), lines)
    assert live.running and len(live.steps) == sum(line.startswith("data:") for _, line in lines)
    assert live.terminal.partial and live.terminal.calls
    assert not final.running and report_json([final]) == report_json([analyze_capture_lines(lines)])
    assert rule in {v.rule for v in final.violations}


@pytest.mark.parametrize("make", [model_analyzer, CaptureAnalyzer], ids=["model", "capture"])
def test_a_stream_that_breaks_off_finishes_as_an_error(make):
    analyzer = make()
    items = TOKENS[:5] if isinstance(analyzer, Analyzer) else RULE_STREAMS["name-repeated"][:3]
    for item in items:
        analyzer.feed(item)
    final = analyzer.finish("error")
    assert final.finish_cause == "error" and final.steps and not final.running
    assert analyzer.finish("error") is final  # idempotent: a late second failure changes nothing


def test_capture_analysis_imports_no_gui_state():
    """The conformance checker is engine code below the inspector: it must not need GUI state to run live."""
    code = (
        "import sys\n"
        "import callscope.engine.streams.conformance\n"
        "import callscope.engine.analysis.live\n"
        "print(','.join(sorted(m for m in sys.modules if m.startswith('callscope.engine.inspector'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
