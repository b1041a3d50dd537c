"""One spelling per module: the code, its docstrings and the docs name modules as imported (``callscope.engine...``).

The checkout's folders (``engine/``, ``app/``...) install under ``callscope``; imported by their own
names they would be a second copy of every module (a second format registry, a second
``FormatSpec`` class that ``isinstance`` does not recognise), so each folder refuses it with the
right spelling, and no text names a module the old way.
"""

from __future__ import annotations

import importlib
import re
import sys

import pytest

from tests.support.module_refs import exists, package_dir, references
from tests.support.paths import ROOT

#: Files whose prose names modules: the code (docstrings, comments, messages) and the docs.
TEXTS = sorted(
    [p for folder in ("app", "engine", "benchmarks", "scripts", "tests") for p in (ROOT / folder).rglob("*.py")]
    + [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "fixtures").rglob("*.md")]
)
OLD_SPELLING = re.compile(
    r"(?<![\w./-])(?:engine\.(?:core|formats|policies|analysis|streams|recordings|decode|templates|capture|inspector)"
    r"|app\.(?:commands|dialogs|live|models|panes|ui|cli|main_window|gui_main|headless|navigation))\b"
)
#: Dotted words that look like module references and are not: file names and the trace format's name.
NOT_MODULES = {"callscope.desktop", "callscope.svg", "callscope.trace", "callscope.egg", "callscope.a.b.Name.attr"}


@pytest.mark.parametrize("folder", sorted({p.name for p in package_dir().values()}))
def test_a_source_folder_imported_by_its_own_name_fails_at_once_naming_the_right_spelling(folder, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    installed = next(name for name, path in package_dir().items() if path.name == folder)
    with pytest.raises(ImportError, match=re.escape(f"import {installed}, not {folder}")):
        importlib.import_module(folder)
    assert folder not in sys.modules


def test_no_text_names_a_module_the_old_way():
    found = [f"{p.relative_to(ROOT)}:{n}: {m.group(0)}" for p in TEXTS
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) for m in OLD_SPELLING.finditer(line)]
    assert not found, "write callscope.engine.X / callscope.X:\n" + "\n".join(found)


def test_every_module_reference_in_the_code_and_the_docs_exists():
    """Tests are left out: they name missing modules on purpose (an import error's message, this file)."""
    checked = [p for p in TEXTS if p.relative_to(ROOT).parts[0] != "tests" or p.parent.name == "support"]
    missing = sorted({f"{p.relative_to(ROOT)}: {ref}" for p in checked for ref in references(p.read_text(encoding="utf-8"))
                      if ref not in NOT_MODULES and not exists(ref)})
    assert not missing, "references to names that do not exist:\n" + "\n".join(missing)


def test_the_resolver_can_fail():
    assert exists("callscope.engine.formats._kit.gbnf.Envelope") and exists("callscope.commands.gui")
    assert exists("callscope.engine.templates.chat.ChatTemplate.render")
    assert not exists("callscope.engine.formats._kit.gbnf.Envelop")
    assert not exists("callscope.engine.streams.protocol") and not exists("callscope.presenter")
