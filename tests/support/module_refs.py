"""Does a dotted name the docs or a docstring mention exist in the code?  Answered from the source, importing nothing.

``callscope.engine.formats._kit.gbnf.Envelope`` is resolved through setup.py's folder mapping
(``callscope.engine`` is ``engine/``...) to the longest prefix that is a module or a package,
then name by name inside it: a top-level definition, assignment or import, then a class's
own attributes (methods, fields, class variables). Qt modules are read, never imported, so a
Qt-free test can check references into the window code too.
"""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from pathlib import Path

from tests.support.paths import ROOT

#: A dotted reference to callscope's code, as written in prose (a trailing dot or bracket is not part of it).
REFERENCE = re.compile(r"(?<![\w./-])callscope(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


@functools.cache
def package_dir() -> dict[str, Path]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {name: ROOT / folder for name, folder in config["tool"]["setuptools"]["package-dir"].items()}


def module_file(module: str) -> Path | None:
    """The source file of ``module`` (a package's ``__init__.py``), or None when there is no such module."""
    for name, folder in sorted(package_dir().items(), key=lambda kv: -len(kv[0])):
        if module == name or module.startswith(name + "."):
            rest = module[len(name):].lstrip(".").split(".") if module != name else []
            base = folder.joinpath(*rest) if rest else folder
            for candidate in (base / "__init__.py", base.with_suffix(".py") if rest else None):
                if candidate is not None and candidate.is_file():
                    return candidate
            return base if base.is_dir() and "__pycache__" not in base.parts else None  # a data folder
    return None


def _body_names(body: list[ast.stmt]) -> dict[str, ast.AST]:
    names: dict[str, ast.AST] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names[leaf.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names[node.target.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names[(alias.asname or alias.name).split(".")[0]] = node
        elif isinstance(node, (ast.If, ast.Try)):  # names defined under TYPE_CHECKING or a fallback import
            names.update(_body_names(node.body))
            for handler in getattr(node, "handlers", []):
                names.update(_body_names(handler.body))
            names.update(_body_names(node.orelse))
    return names


@functools.cache
def _module_names(path: Path) -> dict[str, ast.AST]:
    return _body_names(ast.parse(path.read_text(encoding="utf-8")).body)


def _class_names(node: ast.ClassDef) -> set[str]:
    names = set(_body_names(node.body))
    for item in ast.walk(node):  # attributes set in methods (self.x = ...)
        if isinstance(item, ast.Attribute) and isinstance(item.value, ast.Name) and item.value.id == "self":
            names.add(item.attr)
    return names


def exists(reference: str) -> bool:
    """True when ``reference`` (``callscope.a.b.Name.attr``) names a module, package or a name defined in one."""
    parts = reference.split(".")
    for cut in range(len(parts), 0, -1):
        path = module_file(".".join(parts[:cut]))
        if path is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        if path.is_dir():
            return False  # a data folder holds no names
        node = _module_names(path).get(rest[0])
        if node is None:
            return module_file(".".join(parts[: cut + 1])) is not None
        for name in rest[1:]:
            if not isinstance(node, ast.ClassDef) or name not in _class_names(node):
                return False
            node = _body_names(node.body).get(name, node)
        return True
    return False


def references(text: str) -> list[str]:
    """Every dotted callscope reference in ``text``, without a trailing file suffix (``callscope.desktop``)."""
    return [m.group(0) for m in REFERENCE.finditer(text) if text[m.end():m.end() + 1] not in ("/", "-")]
