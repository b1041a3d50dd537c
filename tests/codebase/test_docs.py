"""The developer docs stay true: every path, module and name they mention exists, and their tables match the code.

A newcomer reads docs/architecture.md and finds each name in the code: dotted references
(``callscope.engine...``, checked by test_spelling), paths in backticks, and every CamelCase or
camelCase identifier. The layer table is the layer test's table, and the parser-kit map says
which base class each listed format really builds on.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from tests.codebase.test_layers import LAYERS
from tests.support.paths import ROOT

DOCS = sorted((ROOT / "docs").glob("*.md"))
#: Where a relative path in the docs may start (``_kit/spec.py`` is under engine/formats).
PATH_BASES = (ROOT, ROOT / "engine", ROOT / "engine" / "formats", ROOT / "app")
PATH = re.compile(r"`([\w.\-]+(?:/[\w.\-]*)+)`")
CAMEL = re.compile(r"(?<![\w.\-/\\])(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z]+(?:[A-Z][a-z0-9]+)+)(?![\w\-/])")
#: The checkout's top folders, and the sub-folders docs name paths from.
TOP = {"engine", "app", "tests", "docs", "scripts", "resources", "fixtures", "benchmarks", ".ci", "_kit", "formats",
       "panes", "live", "ui", "dialogs", "commands", "streams", "capture", "decode", "templates", "inspector"}
#: Schema names look like paths (``callscope.trace/1``).
SCHEMAS = ("callscope.trace/", "callscope.report/")
#: Words in that shape that are not callscope's names.
NOT_CODE = {"PySide6", "OpenAI", "GitHub", "JavaScript", "LangChain", "SmolLM2", "DeepSeek", "MiniMax", "TypeScript",
            "GigaChat", "LiveView", "GGUFs", "Qwen3", "llamaCpp", "SmolLM", "FastAPI", "HuggingFace", "JSONLines", "NaN", "R7B", "KiB", "MiB", "GiB", "FireFunction"}


@functools.cache
def defined_names() -> frozenset[str]:
    """Every class, function, method and assigned name (module, class or ``self.x``) in the code."""
    names: set[str] = set()
    for folder in ("app", "engine", "benchmarks", "scripts", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(node.name)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    names.add(node.id)
                elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                    names.add(node.attr)
    return frozenset(names)


def _looks_like_ours(path: str) -> bool:
    """A path into the checkout (not a placeholder, a URL, a MIME type or a user's folder)."""
    if "<" in path or "*" in path or path.startswith(("http", "~", *SCHEMAS)):
        return False
    return path.split("/")[0] in TOP or path.endswith((".py", ".md", ".json", ".jsonl", ".jinja", ".txt"))


def _exists(path: str) -> bool:
    return any((base / path).exists() for base in PATH_BASES)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_path_a_doc_mentions_exists(doc):
    text = doc.read_text(encoding="utf-8")
    missing = [p for p in PATH.findall(text) if _looks_like_ours(p) and not _exists(p.rstrip("/"))]
    assert not missing, f"{doc.name} mentions paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", [d for d in DOCS if d.name != "cli.md"], ids=lambda p: p.name)  # cli.md: generated
def test_every_name_a_doc_mentions_exists(doc):
    text = doc.read_text(encoding="utf-8")
    missing = sorted({w for w in CAMEL.findall(text)
                      if w not in NOT_CODE and w not in defined_names() and not w.endswith("Error")})  # libraries' errors
    assert not missing, f"{doc.name} names what the code does not define: {missing}"


def _table(doc: str, header: str) -> list[list[str]]:
    """The rows of the markdown table whose header row starts with ``header``."""
    lines = (ROOT / "docs" / doc).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_the_layer_table_is_the_layer_rule():
    rows = _table("architecture.md", "| layer | package |")
    assert {row[1].strip("`"): int(row[0]) for row in rows} == LAYERS


def test_the_parser_kit_map_names_each_formats_real_base():
    from callscope.engine.formats import FORMAT_IDS, get_spec

    rows = _table("architecture.md", "| the model writes | base class |")  # examples: a new format need not be added
    listed = []
    for _shape, base, _module, formats in rows:
        if base == "`DerivedParser`":  # the derived formats: made from templates at run time
            continue
        for format_id in re.findall(r"[a-z][a-z0-9_]+", formats):
            listed.append(format_id)
            assert format_id in FORMAT_IDS, format_id
            bases = {cls.__name__ for cls in get_spec(format_id).parser.__mro__}
            assert base.strip("`") in bases, f"{format_id} does not build on {base}"
    assert len(listed) == len(set(listed)) and len(listed) >= 20, "the map names examples of every base, once each"


def test_the_trace_format_doc_lists_every_header_field_and_record_type():
    from dataclasses import fields

    from callscope.engine.core.causes import END_CAUSES
    from callscope.engine.recordings.trace import RECORD_TYPES, SOURCES, UNITS, TraceHeader

    header = {row[0].strip("`") for row in _table("trace-format.md", "| field | type |")}
    assert header == {"schema"} | {f.name for f in fields(TraceHeader)}
    assert {row[0].strip("`") for row in _table("trace-format.md", "| `type` |")} == set(RECORD_TYPES)
    text = (ROOT / "docs" / "trace-format.md").read_text(encoding="utf-8")
    assert all(f"`{word}`" in text for word in (*SOURCES, *UNITS, *END_CAUSES))


def test_the_cli_reference_is_generated_from_the_parsers():
    """docs/cli.md is what scripts/cli_reference.py writes now (in a fresh process: no test's plug-in format in it)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--check"], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_the_checks_can_fail():
    assert not _exists("engine/formats/_kit/no_such.py") and _exists("_kit/spec.py")
    assert "FormatSpec" in defined_names() and "FormatSpecs" not in defined_names()


def test_the_extension_examples_touch_nothing_outside_the_tests():
    """extending.md's test-only examples are one file each and no edit elsewhere: the product never names them."""
    rows = _table("extending.md", "| extension | declaration |")
    examples = [re.search(r"`(tests/support/\w+\.py)`", row[3]).group(1) for row in rows]
    assert all((ROOT / e).is_file() for e in examples) and len(examples) == len(rows)
    names = {Path(e).stem for e in examples} | {"testfmt", "tinyproto", "ProbePane", "slot-reused", "first-wins",
                                                "calls_interleaved"}
    product = [p for folder in ("app", "engine", "benchmarks", "scripts", "resources", "fixtures")
               for p in (ROOT / folder).rglob("*") if p.is_file() and p.suffix in (".py", ".json", ".jsonl", ".jinja")]
    named = [f"{p.relative_to(ROOT)}: {n}" for p in product for n in names if n in p.read_text(encoding="utf-8")]
    assert not named, named


LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lowercased, punctuation dropped, spaces as hyphens."""
    heads = [line.lstrip("#").strip() for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in heads}


@pytest.mark.parametrize("doc", [ROOT / "README.md", *DOCS], ids=lambda p: p.name)
def test_every_link_between_the_docs_lands(doc):
    broken = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if target.startswith(("http:", "https:", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        path = (doc.parent / file).resolve() if file else doc
        if not path.exists() or (anchor and path.suffix == ".md" and anchor not in _anchors(path)):
            broken.append(target)
    assert not broken, f"{doc.name}: {broken}"
