"""One detection: every entry point picks the same parser for the same template, and says why.

``callscope prompt``, ``template``, ``replay-text --format auto``, ``replay --format auto``
(a trace that names the template), ``run --format auto`` and the window's Template pane
(whose Paste and Run live use its choice) all go through
:func:`~callscope.engine.templates.format_choice.choose_format`. Every shipped template
(the built-in ones and the call families) and every test template goes through each of
them here, and the answers must be one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from callscope.cli import main
from callscope.engine.core.shipped import resource
from callscope.engine.inspector.template_state import template_state
from callscope.engine.recordings.trace import Trace, TraceEnd, TraceHeader, TraceStep, write_trace
from callscope.engine.templates.chat import load_template_file
from callscope.engine.templates.format_choice import choose_format
from tests.support.paths import ROOT

pytestmark = pytest.mark.usefixtures("forget_derived")  # derived formats are forgotten after each test

SHIPPED = sorted(Path(str(resource("templates"))).rglob("*.jinja"))
TESTS = sorted(p for p in (ROOT / "tests" / "data" / "templates").rglob("*.jinja") if p.stem not in ("broken_syntax", "raises"))
TEMPLATES = SHIPPED + TESTS


def _id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name


def _json(capsys, argv: list[str]) -> dict:
    assert main(argv) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_there_are_templates_of_every_kind():
    assert len(SHIPPED) >= 25 + 7 and len(TESTS) >= 10


@pytest.mark.parametrize("path", TEMPLATES, ids=[_id(p) for p in TEMPLATES])
def test_every_entry_point_picks_the_same_parser(path, capsys, tmp_path):
    choice = choose_format(load_template_file(path))
    want = choice.format_id
    assert choice.reason
    picked = {"choose_format": want}
    picked["template"] = _json(capsys, ["template", str(path), "--json"])["format"]
    prompt = _json(capsys, ["prompt", "--template", str(path), "--json", "--prompt", "Weather in Paris?"])
    picked["prompt"] = prompt["format"]
    text = tmp_path / "generation.txt"
    text.write_text("Nothing to call.", encoding="utf-8")
    report = _json(capsys, ["replay-text", str(text), "--format", "auto", "--template", str(path), "--json"])
    picked["replay-text"] = report["runs"][0]["source"]["format"]
    trace = tmp_path / "named.jsonl"
    header = TraceHeader(source="text", format="hermes", template=str(path), unit="char")
    write_trace(trace, Trace(header, [TraceStep(0.0, b"Nothing to call.")], end=TraceEnd("stop", 0.0)))
    replayed = _json(capsys, ["replay", str(trace), "--format", "auto", "--json"])["runs"][0]["source"]
    picked["replay"] = replayed["format"]
    picked["window"] = template_state(str(path)).format_id
    assert set(picked.values()) == {want}, picked
    # and each says why
    assert prompt["format_reason"] and report["runs"][0]["source"]["format_reason"] and replayed["format_reason"]
