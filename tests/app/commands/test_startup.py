"""The CLI starts fast: each verb imports only what it uses, ``--help`` still lists every verb, and a
command module that cannot be imported is an error, never a verb that silently disappears.

Start-up time itself is measured by ``callscope bench cli`` (never timed here); these tests check the
structure that makes it fast, in fresh interpreters so that nothing this test process imported counts.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import subprocess
import sys

import pytest

from callscope import benchmarks, cli
from callscope.commands import bench
from callscope.engine.core.shipped import resolve_recording
from tests.support.paths import ROOT

HEADLINE = resolve_recording("headline_701_tokens")
#: Heavy dependencies no verb but its own may load.
HEAVY = ("httpx", "jinja2", "llama_cpp", "PySide6")


def modules_after(argv: list[str]) -> set[str]:
    """Every module a fresh ``callscope ARGV`` has imported by the time it exits (its output discarded)."""
    code = (
        "import contextlib, io, json, sys\n"
        "from callscope.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout))


def top_level(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


def command_modules(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith("callscope.commands.")}


def test_version_imports_no_command_module_and_no_engine_code():
    loaded = modules_after(["--version"])
    assert command_modules(loaded) == {"callscope.commands.common"}  # CliError only
    assert not top_level(loaded) & set(HEAVY)
    engine = {m for m in loaded if m.startswith("callscope.engine.")}
    assert engine == set(), engine


def test_help_lists_every_verb_without_importing_one():
    loaded = modules_after(["--help"])
    assert command_modules(loaded) == {"callscope.commands.common"}
    out = subprocess.run([sys.executable, "-m", "callscope", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    for name, (_, help_text) in cli.COMMANDS.items():
        assert name in out.stdout
        assert help_text.split()[0] in out.stdout


def test_replay_imports_neither_httpx_nor_jinja_nor_other_verbs():
    loaded = modules_after(["replay", HEADLINE])
    assert not top_level(loaded) & set(HEAVY)
    verbs = command_modules(loaded) - {"callscope.commands.common", "callscope.commands.status"}
    assert verbs == {"callscope.commands.replay"}


@pytest.mark.model
def test_prompt_loads_no_weights_runtime_and_no_http():
    loaded = modules_after(["prompt", "--format", "hermes"])
    assert "jinja2" in top_level(loaded)  # it renders templates
    assert not top_level(loaded) & {"httpx", "llama_cpp", "PySide6"}
    assert "callscope.commands.run" not in loaded
    assert "callscope.engine.decode.grammar" not in loaded


def test_every_command_module_is_in_the_table_with_the_help_it_registers():
    """The table's one-line help is what `callscope --help` shows; the module registers the same line."""
    found = {
        m.name
        for m in pkgutil.iter_modules([str(ROOT / "app" / "commands")])
        if hasattr(importlib.import_module(f"callscope.commands.{m.name}"), "register")
    }
    assert found == {module for module, _ in cli.COMMANDS.values()}
    for name, (module_name, help_text) in cli.COMMANDS.items():
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        importlib.import_module(f"callscope.commands.{module_name}").register(sub)
        registered = {action.dest: action.help for action in sub._choices_actions}
        assert registered == {name: help_text}


def test_the_chosen_verb_gets_its_real_arguments(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["replay", "--help"])
    assert exited.value.code == 0
    assert "--policy" in capsys.readouterr().out


def test_unknown_options_and_verbs_are_usage_errors(capsys):
    for argv in (["replay", "--no-such-option", HEADLINE], ["no-such-verb"], []):
        with pytest.raises(SystemExit) as exited:
            cli.main(argv)
        assert exited.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "callscope" in err


def test_a_command_module_that_cannot_be_imported_is_an_error(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "callscope.commands.replay", raising=False)
    monkeypatch.setitem(sys.modules, "callscope.commands.replay", None)  # importing it raises ImportError
    assert cli.main(["replay", HEADLINE]) == 1
    err = capsys.readouterr().err
    assert "cannot load the replay command (callscope.commands.replay)" in err
    assert err.count("\n") == 1


def test_a_missing_command_module_is_not_skipped(monkeypatch, capsys):
    monkeypatch.setitem(cli.COMMANDS, "replay", ("no_such_module", "replay something"))
    assert cli.main(["replay", HEADLINE]) == 1
    assert "callscope.commands.no_such_module" in capsys.readouterr().err


# ---------------------------------------------------------------- callscope bench cli


def test_bench_cli_is_dispatched_like_the_others():
    assert benchmarks.module("cli").__name__ == "callscope.benchmarks.cli" and benchmarks.module("cli").WHAT
    parser = cli.build_parser("bench")
    args = parser.parse_args(["bench", "cli", "--json", "--rounds", "3"])
    assert args.which == "cli" and args.json and args.rounds == 3 and args.handler is bench.run


def test_bench_cli_smoke_reports_ratios_and_targets(capsys):
    from callscope.benchmarks.cli import run

    code = run(benchmarks.defaults("cli", json=True, rounds=1))
    doc = json.loads(capsys.readouterr().out)
    assert code == (0 if doc["ok"] else 1)
    assert doc["bench"] == "cli" and doc["rounds"] == 1
    assert doc["bare"]["command"][1:] == ["-c", "pass"] and doc["bare"]["median_ms"] > 0
    assert set(doc["commands"]) == {"version", "replay"}
    assert doc["commands"]["version"]["command"][-1] == "--version"
    assert doc["commands"]["replay"]["command"][-2:] == ["replay", HEADLINE]
    for name, target in (("version", 3.0), ("replay", 6.0)):
        c = doc["commands"][name]
        assert c["target_ratio"] == target
        assert c["ratio"] > 0 and len(c["runs_ms"]) == 1 and isinstance(c["ok"], bool)
    assert doc["ok"] == all(c["ok"] for c in doc["commands"].values())


def test_bench_cli_table_names_the_targets():
    from callscope.benchmarks.cli import report_lines, summarize

    times = {"bare": [20.0, 22.0], "version": [40.0, 44.0], "replay": [150.0, 130.0]}
    argvs = {name: [name] for name in times}
    lines = report_lines(summarize(times, argvs))
    text = "\n".join(lines)
    assert "target <= 3x: ok" in text and "target <= 6x: ABOVE TARGET" in text
