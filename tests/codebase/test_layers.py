"""The engine is laid out by role, in layers: a package imports only from its own layer or below.

Lowest first: ``core`` (the shared vocabulary) < ``formats``, ``policies`` < ``analysis`` < ``streams``
(judging received chunks) < ``recordings`` < ``decode``, ``templates``, ``capture`` < ``inspector``, ``serve``; ``app/`` and ``benchmarks/`` sit above
the whole engine, so the engine never imports them. Every import counts, including the lazy
ones inside functions and those under ``TYPE_CHECKING``: an upward import is an upward
dependency wherever it is written. Packages of one layer may use each other, but never in
a cycle.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from tests.support.paths import ROOT

ENGINE = ROOT / "engine"
PACKAGE = "callscope.engine"

#: Package under engine/ -> its layer (higher may import lower, never the reverse).
LAYERS: dict[str, int] = {
    "core": 0,
    "formats": 1,
    "policies": 1,
    "analysis": 2,
    "streams": 3,
    "recordings": 4,
    "decode": 5,
    "templates": 5,
    "capture": 5,
    "inspector": 6,
    "serve": 6,
}

#: Upward edges known today, each to be removed; a test fails once one is gone so the entry goes too
#: (the strict-xfail of one edge, not of the whole check).
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def _module_name(path: Path, engine: Path) -> str:
    parts = path.relative_to(engine).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((PACKAGE, *parts))


def _imported(path: Path, engine: Path) -> set[str]:
    """Every module ``path`` imports (absolute names; relative imports resolved)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = _module_name(path, engine)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)  # `from pkg import submodule`
    return found


def _package_of(module: str) -> str | None:
    """The engine package (``core``, ``formats``...) of a callscope module; ``app`` for anything outside the engine."""
    if module == PACKAGE or not module.startswith("callscope"):
        return None  # the engine root holds only __version__; stdlib and third parties are not layers
    if not module.startswith(PACKAGE + "."):
        return "app"  # callscope itself, callscope.benchmarks...: above the engine
    return module.split(".")[2]


def package_edges(engine: Path = ENGINE) -> dict[tuple[str, str], list[str]]:
    """(importing package, imported package) -> the importing files, for every edge between two packages."""
    edges: dict[tuple[str, str], list[str]] = defaultdict(list)
    for path in sorted(engine.rglob("*.py")):
        if path.parent == engine:
            continue  # engine/__init__.py
        source = path.relative_to(engine).parts[0]
        for module in _imported(path, engine):
            target = _package_of(module)
            if target is not None and target != source:
                edges[(source, target)].append(str(path.relative_to(engine.parent)))
    return edges


def test_every_engine_package_has_a_layer():
    packages = {p.name for p in ENGINE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert packages == set(LAYERS), "give each engine package a layer in LAYERS (and README's Layout)"
    loose = [p.name for p in ENGINE.glob("*.py") if p.name != "__init__.py"]
    assert not loose, f"engine/ root holds packages only: {loose}"


def test_no_package_imports_from_a_layer_above_it():
    upward = {
        f"{source} -> {target}": sorted(set(files))
        for (source, target), files in package_edges().items()
        if (target == "app" or LAYERS[target] > LAYERS[source]) and (source, target) not in KNOWN_UPWARD
    }
    assert not upward, f"upward imports (lower layer importing a higher one): {upward}"


def test_no_cycle_between_packages():
    graph: dict[str, set[str]] = defaultdict(set)
    for source, target in package_edges():
        if (source, target) not in KNOWN_UPWARD:
            graph[source].add(target)

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(graph[node])
        return False

    cycles = sorted(f"{a} <-> {b}" for a in list(graph) for b in graph[a] if a < b and reaches(b, a))
    assert not cycles, f"packages that import each other (directly or through others): {cycles}"


def test_known_upward_edges_are_still_there():
    """When one is fixed, delete it from KNOWN_UPWARD so it can never come back unnoticed."""
    edges = package_edges()
    gone = [f"{source} -> {target}" for source, target in KNOWN_UPWARD if (source, target) not in edges]
    assert not gone, f"fixed, remove from KNOWN_UPWARD: {gone}"


def test_the_checker_sees_lazy_relative_and_outside_imports(tmp_path):
    """Imports inside functions count too (a lazy upward import is still upward), and so does the app."""
    edges = package_edges()
    assert ("analysis", "core") in edges and ("inspector", "analysis") in edges
    engine = tmp_path / "engine"
    for package in ("core", "inspector"):
        (engine / package).mkdir(parents=True)
        (engine / package / "__init__.py").write_text("", encoding="utf-8")
    (engine / "core" / "probe.py").write_text(
        "def f():\n    from ..inspector import lanes\n    from callscope.commands import replay\n", encoding="utf-8")
    assert set(package_edges(engine)) == {("core", "inspector"), ("core", "app")}
