"""Adding a rule is one registration plus the check that raises it: a test-only rule, raised by a test-only reader.

docs/extending.md's rule recipe, followed outside the code base (tests/support/plugin_rule.py):
registered, the rule validates in violations, reaches the analysis and the JSON report, joins the
rules table and can be expected by a fixture's verdict; unregistered, it is unknown again.
"""

from __future__ import annotations

import pytest

from callscope.engine.analysis.expectations import check_verdict
from callscope.engine.analysis.report import report_json
from callscope.engine.core import rules
from callscope.engine.core.wire import Violation
from callscope.engine.streams.conformance import analyze_capture_lines
from callscope.engine.streams.protocols import register_protocol, unregister_protocol
from tests.support import plugin_protocol as tiny
from tests.support import plugin_rule


@pytest.fixture
def slot_rule():
    plugin_rule.register()
    register_protocol(plugin_rule.SPEC)
    try:
        yield plugin_rule.RULE
    finally:
        unregister_protocol(tiny.PROTOCOL_ID)
        plugin_rule.unregister()


def _received(events: list[str]) -> list[tuple[float, str]]:
    return [(float(i * 10), line) for i, line in enumerate(x for event in events for x in (event, ""))]


def _reused() -> list[str]:
    stream = tiny.call_stream()
    return [*stream[:-1], tiny.event("call", slot=0, id="t2", name="get_time"), stream[-1]]


def test_a_registered_rule_is_raised_reported_and_expected(slot_rule):
    analysis = analyze_capture_lines(_received(_reused()))
    assert slot_rule in {v.rule for v in analysis.violations}
    assert slot_rule in {v["rule"] for run in report_json([analysis])["runs"] for v in run["violations"]}
    assert f"| `{slot_rule}` | {plugin_rule.MEANING} | capture |" in rules.markdown_table()
    assert check_verdict(analysis, {"violations": sorted({v.rule for v in analysis.violations})}) == []
    clean = analyze_capture_lines(_received(tiny.call_stream()))
    assert slot_rule not in {v.rule for v in clean.violations}


def test_registration_is_checked_and_scoped(slot_rule):
    with pytest.raises(ValueError, match="already registered"):
        rules.register_rule(slot_rule, "again", rules.CAPTURE)
    with pytest.raises(ValueError, match="lowercase words"):
        rules.register_rule("Slot_Reused", "bad id", rules.CAPTURE)
    with pytest.raises(ValueError, match="built-in rules cannot be removed"):
        rules.unregister_rule(rules.PARSE_ERROR)


def test_unregistered_it_is_unknown():
    assert plugin_rule.RULE not in rules.RULES
    with pytest.raises(ValueError, match="unknown violation rule"):
        Violation(plugin_rule.RULE, 1, "slot 0")
