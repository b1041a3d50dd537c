"""One unit per wire format: each format module declares one spec, and nothing else names a format.

The consumers (grammar, templates, samples, the capture checker, the text pane)
loop over specs; these tests pin that down: no engine module outside
``engine/formats/`` spells a format id, every built-in module's spec is
consistent with its parser, writers invert parsers, template detection keeps
llama.cpp's order, and the markers every consumer derives are complete.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import typing
from pathlib import Path

import pytest

from callscope.engine.decode.grammar import forceable_formats, form_choices
from callscope.engine.formats import BUILTIN, FORMAT_IDS, FormatSpec, all_specs, get_spec, make_parser
from callscope.engine.inspector.state import InspectorState
from callscope.engine.recordings.replay_text import analyze_text
from callscope.engine.streams.conformance import CONTENT_MARKERS
from callscope.engine.templates.chat import BUILTIN_DIR, template_signs
from tests.support.paths import ROOT

ENGINE = ROOT / "engine"
CALLS = [("get_weather", {"city": "Paris", "unit": "celsius"}), ("write_file", {"path": "a.txt", "lines": [1, 2]})]


def _engine_modules_outside_formats() -> list[Path]:
    return [p for p in sorted(ENGINE.rglob("*.py")) if "formats" not in p.relative_to(ENGINE).parts]


def _names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    return []


def test_no_engine_module_outside_formats_names_a_format_id():
    """Formats are known through their specs only: no id as a string, no ``mistral_form``-style identifier."""
    ids = set(FORMAT_IDS)
    word = re.compile(rf"(?:^|_)({'|'.join(map(re.escape, ids))})(?:$|_)")
    found = []
    for path in _engine_modules_outside_formats():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(ENGINE)}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ids:
                found.append(f"{where} {node.value!r}")
            for name in _names(node):
                if name not in dir(typing) and word.search(name.lower()):
                    found.append(f"{where} {name}")
    assert found == [], "format ids outside engine/formats/: " + ", ".join(found)


@pytest.mark.parametrize("format_id", BUILTIN)
def test_each_builtin_module_declares_one_consistent_spec(format_id):
    module = importlib.import_module(f"callscope.engine.formats.{format_id}")
    spec = module.SPEC
    assert isinstance(spec, FormatSpec) and spec.id == format_id and get_spec(format_id) is spec
    assert spec.description and "\n" not in spec.description
    assert spec.parser is module.Parser
    # ``thinking`` is declared, and it is what the parser accepts
    assert spec.thinking == ("thinking" in inspect.signature(spec.parser).parameters)
    assert not hasattr(spec.parser, "format_id")  # the id lives in the spec only
    if spec.template is not None:
        assert (BUILTIN_DIR / spec.template).is_file()
    assert spec.envelopes, "every built-in format can be forced"
    assert spec.signs, "every built-in format can be detected"


@pytest.mark.parametrize("format_id", BUILTIN)
@pytest.mark.parametrize("calls", [CALLS[:1], CALLS], ids=["one", "two"])
def test_writers_invert_parsers(format_id, calls):
    spec = get_spec(format_id)
    if len(calls) > 1 and any(e.single_call for e in spec.envelopes):
        calls = calls[:1]  # a single-call syntax still writes several messages, one call each
    text = spec.write(calls, "", "")
    for pieces in ([text], list(text)):
        parser = make_parser(format_id)
        for piece in pieces:
            parser.feed(piece)
        parser.finish()
        parse = parser.snapshot()
        assert [(c.name, json.loads(c.arguments)) for c in parse.calls] == calls, (format_id, text)
        assert parse.content.strip() == ""


#: The first formats; those added later check where llama.cpp puts them in their own tests
#: (tests/system/test_forced_tag_formats.py for the tag families).
FIRST_FORMATS = ("deepseek_v31", "qwen3_coder", "hermes", "gpt_oss", "llama3_json", "mistral", "generic", "emulated")


def test_template_detection_keeps_llamacpp_order():
    order = [format_id for format_id, _ in template_signs() if format_id in FIRST_FORMATS]
    assert order == [
        "deepseek_v31",  # V3.1 prefix/thinking block
        "deepseek_v31",  # DeepSeek R1/V3 markers
        "qwen3_coder",
        "hermes",
        "gpt_oss",
        "llama3_json",
        "mistral",
        "generic",  # renders tools, no known markers
        "emulated",  # no tool support
    ]
    priorities = [sign.priority for _, sign in template_signs()]
    assert len(set(priorities)) == len(priorities), "equal priorities would make the order depend on the registry"


def test_every_leak_marker_is_checked_by_the_capture_checker():
    checked = set(CONTENT_MARKERS)
    # the markers the checker looked for before the specs existed are all still looked for
    assert {
        "<tool_call>", "</tool_call>", "<tool_calls>", "</tool_calls>", "[TOOL_CALLS]", "[TOOL_RESULTS]",
        "[/TOOL_RESULTS]", "[ARGS]", "<function=", "</function>", "<parameter=", "<|python_tag|>",
        "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
        "<｜tool▁calls▁end｜>", "<｜end▁of▁sentence｜>",
    } <= checked
    for spec in all_specs():
        for marker in spec.markers.leak:
            assert marker in checked, (spec.id, marker)


@pytest.mark.parametrize("format_id", FORMAT_IDS)
def test_the_text_pane_colours_each_formats_markers_from_its_parse_events(format_id):
    """Every marker a format writes around its calls is markup in the text pane, every argument value is
    argument text: read from the parser's events, so no format declares a pattern for it."""
    text = get_spec(format_id).write(CALLS[:1], "Let me check.", "")
    state = InspectorState(analyze_text(text, format_id, size=3))
    assert [c.name for c in state.analysis.calls] == ["get_weather"], format_id
    kinds = state.spans.char_kinds()
    for marker in get_spec(format_id).markers.leak:
        at = text.find(marker)
        if at >= 0:
            assert {k for k, _ in kinds[at: at + len(marker)]} == {"call"}, (format_id, marker)
    at = text.index("Paris")
    assert {k for k, _ in kinds[at: at + 5]} == {"arguments"}, format_id
    if "Let me check." in text:  # some formats write no content beside a call
        assert kinds[text.index("Let")][0] == "content", format_id


def test_forms_are_format_options():
    assert forceable_formats() == tuple(BUILTIN)
    assert form_choices() == {"mistral": ("array", "args")}
    assert get_spec("mistral").envelope(None).form == "array"
    with pytest.raises(ValueError, match="unknown mistral call form 'x'; known forms: array, args"):
        get_spec("mistral").envelope("x")


# ------------------------------------------------------------ the formats table of docs/formats.md

FORMATS_DOC = ENGINE.parent / "docs" / "formats.md"
_ROW = re.compile(r"^\| `(?P<id>[a-z0-9_]+)` \| (?P<notes>.+) \| `(?P<example>.+)` \|$")


def _readme_rows() -> dict[str, str]:
    rows: dict[str, str] = {}
    for line in FORMATS_DOC.read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if m:
            assert m["id"] not in rows, f"{m['id']} has two rows"
            rows[m["id"]] = m["example"].replace("\\|", "|").replace("\\n", "\n")
    return rows


def test_readme_lists_every_format_with_its_writers_rendered_example():
    rows = _readme_rows()
    assert sorted(rows) == sorted(BUILTIN)  # every built-in format, nothing else
    for format_id, example in rows.items():
        written = get_spec(format_id).write([("get_weather", {"city": "Paris"})], "", "")
        assert example == written, f"docs/formats.md row for {format_id} is not what its writer writes"
        parser = make_parser(format_id)
        parser.feed(example)
        parser.finish()
        assert [(c.name, json.loads(c.arguments)) for c in parser.snapshot().calls] == [("get_weather", {"city": "Paris"})]
