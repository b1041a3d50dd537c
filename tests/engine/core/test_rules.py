"""One catalogue of violation rules (engine/core/rules.py): every raiser uses it, docs/rules.md shows it, fixtures cite it."""

from __future__ import annotations

import json
import re

import pytest

from callscope.engine.core import rules
from callscope.engine.core.wire import Violation
from tests.support.paths import ROOT

KEBAB = re.compile(r"""["']([a-z]+(?:-[a-z]+)+)["']""")


def test_rule_ids_are_stable_kebab_case_and_sources_known():
    for rule_id, rule in rules.RULES.items():
        assert rule.id == rule_id and re.fullmatch(r"[a-z]+(-[a-z]+)+", rule_id)
        assert rule.meaning and rule.sources and set(rule.sources) <= set(rules.SOURCES)
    assert rules.STREAM_ENDERS == ("invalid-diff", "stream-truncated", "stream-error")
    assert {r.id for r in rules.raised_by(rules.CAPTURE)} >= {"stream-error", "invalid-json-arguments"}


def test_no_rule_id_is_spelled_out_in_the_engine_outside_the_catalogue():
    """Raisers and readers use the constants (rules.ARGUMENTS_DIVERGED, ...), never the string."""
    spelled = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        if path == ROOT / "engine" / "core" / "rules.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in KEBAB.finditer(line):
                if match.group(1) in rules.RULES:
                    spelled.append(f"{path.relative_to(ROOT)}:{number}: {match.group(1)}")
    assert not spelled, "use callscope.engine.core.rules constants:\n" + "\n".join(spelled)


def test_no_rule_id_is_built_from_pieces():
    """``f"{label}-diverged"`` hides a rule from the catalogue and from grep."""
    tails = "|".join(sorted({re.escape(rule_id.split("-", 1)[1]) for rule_id in rules.RULES}))
    pattern = re.compile(r"""f["']\{\w+\}-(%s)["']""" % tails)  # f"{label}-diverged", not f"t{index}-call"
    built = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "engine").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not built, built


def test_a_violation_of_an_unknown_rule_is_refused():
    assert Violation(rules.PARSE_ERROR, 1, "threw").rule == "parse-error"
    with pytest.raises(ValueError, match="unknown violation rule 'made-up'"):
        Violation("made-up", 1, "nothing")


def test_the_rules_doc_lists_exactly_the_catalogue():
    readme = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert rules.markdown_table() in readme, "paste rules.markdown_table() into docs/rules.md:\n" + (
        rules.markdown_table())


def _expected_rules() -> set[str]:
    """Every rule id a shipped fixture expects (trace headers' and byte-prefix files' verdicts)."""
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "violations" and isinstance(value, list):
                    found.update(v for v in value if isinstance(v, str))
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in sorted((ROOT / "fixtures").rglob("*")):
        if path.suffix == ".jsonl":
            walk(json.loads(path.read_text(encoding="utf-8").splitlines()[0]))
        elif path.suffix == ".txt":
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("# @expect "):  # `# @expect NAME {verdict}`
                    walk(json.loads(line.split(None, 3)[3]))
    return found


def test_fixtures_expect_only_catalogued_rules():
    expected = _expected_rules()
    assert expected, "the fixture library names violations somewhere"
    assert expected <= set(rules.RULES), sorted(expected - set(rules.RULES))
