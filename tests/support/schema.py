"""The report contract: ../shared/report.schema.json (CI lays shared/ beside the clone); a copy in tests/data as fallback."""

import json

import jsonschema

from tests.support.paths import ROOT

_CANDIDATES = [ROOT.parent / "shared" / "report.schema.json", ROOT / "tests" / "data" / "report.schema.json"]


def report_schema() -> dict:
    for path in _CANDIDATES:
        if path.exists():
            return json.loads(path.read_text())
    raise FileNotFoundError("report.schema.json not found")


def validate_report(document: dict) -> None:
    jsonschema.validate(document, report_schema(), cls=jsonschema.Draft202012Validator)
