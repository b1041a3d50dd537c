"""A real agent for the tests: opencode (npm ``opencode-linux-x64``), run headless against ``callscope serve``.

opencode talks to a custom provider on ``@ai-sdk/openai-compatible`` (bundled in
opencode) whose ``baseURL`` is the server. Everything it would fetch or write
outside the test is kept in: its own HOME and XDG folders, no model list
fetch, no update check, no plugins, no share; the dependency folder it would
``npm install`` at start is a (hard-linked) copy of the one ``make
node-clients`` installed from tests/system/agent/config's lockfile. One
agent, ``scribe``, with a one-line prompt and only the write tools, so a small
model's context holds the request; the title request is off, so a recorded
session's turns arrive in order. Writes outside the working folder are denied.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.support.node_packages import installed_folder, missing

AGENT = "tests/system/agent"
CONFIG = "tests/system/agent/config"
MODEL = "callscope/smol"
PROMPT = "Write the file hello.txt with the text hi"
_OFF = ("bash", "read", "glob", "grep", "list", "webfetch", "todowrite", "todoread", "task", "skill")


def binary() -> Path:
    return installed_folder(AGENT) / "node_modules" / "opencode-linux-x64" / "bin" / "opencode"


def unavailable() -> str | None:
    """Why opencode cannot run here, or None."""
    problem = missing(AGENT) or missing(CONFIG)
    if problem is None and not binary().exists():
        return f"opencode's Linux x86-64 build is not in {binary().parent} (another platform?)"
    return problem


def config(base_url: str) -> dict:
    return {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"callscope": {"npm": "@ai-sdk/openai-compatible", "name": "callscope serve",
                                   "options": {"baseURL": base_url, "apiKey": "unused"},
                                   "models": {"smol": {"name": "smol", "tool_call": True}}}},
        "model": MODEL,
        "autoupdate": False,
        "share": "disabled",
        "permission": {"external_directory": "deny", "bash": "deny", "webfetch": "deny", "edit": "allow"},
        "agent": {"title": {"disable": True},
                  "scribe": {"mode": "primary", "description": "writes one file",
                             "prompt": "You write files with the write tool.",
                             "tools": {name: False for name in _OFF}}},
    }


def run_opencode(base_url: str, home: Path, work: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """``opencode run`` in ``work`` with its own ``home``, its provider at ``base_url``; bounded by ``timeout``."""
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    dependencies = home / ".config" / "opencode"
    if not dependencies.exists():
        _linked_copy(installed_folder(CONFIG), dependencies)
    settings = home / "opencode.json"
    settings.write_text(json.dumps(config(base_url), indent=1), encoding="utf-8")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"), "OPENCODE_CONFIG": str(settings),
        **{f"OPENCODE_{flag}": "1" for flag in ("DISABLE_MODELS_FETCH", "DISABLE_AUTOUPDATE", "DISABLE_DEFAULT_PLUGINS",
                                                "DISABLE_LSP_DOWNLOAD", "DISABLE_CLAUDE_CODE", "DISABLE_EXTERNAL_SKILLS",
                                                "DISABLE_SHARE")},
    }
    return subprocess.run([str(binary()), "run", "--pure", "--auto", "--agent", "scribe", "-m", MODEL, PROMPT],
                          cwd=work, env=env, capture_output=True, text=True, timeout=timeout)


def _linked_copy(source: Path, target: Path) -> None:
    """The installed folder (package.json, lockfile, node_modules), hard-linked where the file system allows."""

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    shutil.copytree(source, target, symlinks=True, copy_function=link,
                    ignore=shutil.ignore_patterns(".installed"))
