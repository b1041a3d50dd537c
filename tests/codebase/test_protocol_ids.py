"""Protocols are named only in ``callscope.engine.streams``: everything else loops over the registry.

A string literal spelling a built-in protocol id (``"chat"``, ``"responses"``,
``"anthropic"``) anywhere else in the engine, the app or the benchmarks is a
place a new protocol would have to be added by hand (a dict keyed by protocol,
an ``if protocol == ...``), which ``ProtocolSpec`` exists to prevent.
Docstrings and comments may mention them; code may not.
"""

from __future__ import annotations

import ast
from pathlib import Path

from callscope.engine.streams.protocols import all_protocols

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("engine", "app", "benchmarks")
HOME = ROOT / "engine" / "streams"


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string nodes that are docstrings (the first statement of a module, class or function)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def protocol_literals(path: Path, ids: set[str], root: Path = ROOT) -> list[str]:
    """``file:line "id"`` for each string literal of ``path`` that is exactly a protocol id."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docs = _docstrings(tree)
    return [f"{path.relative_to(root)}:{node.lineno} {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in ids
            and id(node) not in docs]


def test_no_protocol_id_is_spelled_outside_the_streams_package():
    ids = {spec.id for spec in all_protocols()}
    assert ids >= {"chat", "responses", "anthropic"}
    found = [hit for folder in SCANNED for path in sorted((ROOT / folder).rglob("*.py"))
             if HOME not in path.parents for hit in protocol_literals(path, ids)]
    assert found == [], "protocol ids spelled outside callscope.engine.streams (use the registry):\n" + "\n".join(found)


def test_the_check_finds_a_spelled_id(tmp_path):
    sample = tmp_path / "probe.py"
    sample.write_text('"""Mentions "chat" in a docstring: fine."""\nKEY = {"anthropic": 1}\n', encoding="utf-8")
    assert protocol_literals(sample, {"chat", "anthropic"}, tmp_path) == ["probe.py:2 'anthropic'"]
