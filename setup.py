"""The package list, found rather than kept by hand: each folder of ``package-dir`` (pyproject.toml) and below.

setuptools' own ``packages.find`` cannot follow a ``package-dir`` mapping onto one import package
(app/ is ``callscope``, engine/ is ``callscope.engine``...), so the folders are walked here: every
folder holding a file becomes a package (data folders like ``resources/templates`` need no
``__init__.py``). Everything else is declared in pyproject.toml.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).resolve().parent


def package_dir() -> dict[str, str]:
    """Import name -> folder, as pyproject.toml maps them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return dict(config["tool"]["setuptools"]["package-dir"])


def packages() -> list[str]:
    """Every installed package: a mapped folder and each sub-folder that holds a file (caches excepted)."""
    found: list[str] = []
    mapping = package_dir()
    nested = set(mapping.values())
    for name, folder in mapping.items():
        found.append(name)
        for sub in find_namespace_packages(ROOT / folder, exclude=["*__pycache__*"]):
            path = Path(folder, *sub.split("."))
            if path.as_posix() in nested or not any(f.is_file() for f in (ROOT / path).iterdir()):
                continue  # another mapped root, or an empty folder
            found.append(f"{name}.{sub}")
    return sorted(found)


if __name__ == "__main__":
    setup(packages=packages())
