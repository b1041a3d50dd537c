"""The npm packages ``make node-clients`` installed (scripts/node_clients.sh): where, and why a test cannot use them.

Each folder's committed ``package-lock.json`` is installed once into
``~/.cache/callscope/node/<first 16 hex of its sha256>`` (``CALLSCOPE_NODE_CACHE``
overrides the root). A test that needs one skips with the reason when it is
missing, except in CI (``CI`` set), where it fails: nothing may skip there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from tests.support.paths import ROOT


def installed_folder(folder: str) -> Path:
    """Where the packages of ``folder`` (relative to the checkout) are installed, or would be."""
    digest = hashlib.sha256((ROOT / folder / "package-lock.json").read_bytes()).hexdigest()[:16]
    base = os.environ.get("CALLSCOPE_NODE_CACHE") or str(Path.home() / ".cache" / "callscope" / "node")
    return Path(base) / digest


def missing(folder: str) -> str | None:
    """None when node and the folder's packages are there, else why not."""
    if shutil.which("node") is None:
        return "node is not installed (make node-clients installs Debian's nodejs)"
    if not (installed_folder(folder) / ".installed").exists():
        return f"the npm packages of {folder} are not installed in {installed_folder(folder)} (run make node-clients)"
    return None


def require(*problems: str | None) -> None:
    """Skip (or, in CI, fail) with the first problem found."""
    problem = next((p for p in problems if p), None)
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(problem)
    pytest.skip(problem)
