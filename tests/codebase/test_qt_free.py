"""engine/ and the CLI must never load Qt: `callscope replay` runs on machines with no display.

The pane declarations (callscope.panes.specs) are read by `gui --tab` and stay Qt-free too.
"""

import pkgutil
import subprocess
import sys

from tests.support.paths import ROOT

QT_MODULES = ("PySide6", "shiboken6", "pyqtgraph", "qasync")


def test_engine_and_cli_import_no_qt():
    engine_modules = [m.name for m in pkgutil.walk_packages([str(ROOT / "engine")], prefix="callscope.engine.")]
    cli_modules = ["callscope.cli", "callscope.panes.specs"] + ["callscope.commands." + m.name for m in pkgutil.iter_modules([str(ROOT / "app" / "commands")])]
    code = (
        "import importlib, sys\n"
        f"for name in {engine_modules + cli_modules!r}:\n"
        "    importlib.import_module(name)\n"
        "from callscope.cli import build_parser\n"
        "build_parser()\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {QT_MODULES!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"Qt modules loaded by engine/CLI: {out.stdout.strip()}"
    assert len(engine_modules) > 5


def test_cli_help_runs_without_display(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no DISPLAY, no QT_QPA_PLATFORM
    out = subprocess.run([sys.executable, "-m", "callscope", "--help"], cwd=ROOT, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert "replay-text" in out.stdout


#: Test helpers that load Qt when imported.
QT_HELPERS = ("tests.support.gui_helpers", "tests.support.probe_pane")


def test_tests_outside_the_gui_folder_import_no_qt_at_module_level():
    """Qt-free tests stay Qt-free: `make check` runs them without Qt (a GUI test imports Qt inside itself)."""
    import ast

    offenders = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path.relative_to(ROOT / "tests").parts[:2] == ("app", "gui"):
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names
                          if n.split(".")[0] in QT_MODULES or n in QT_HELPERS]
    assert not offenders, offenders
