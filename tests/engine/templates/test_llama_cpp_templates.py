"""Every chat template in llama.cpp's ``models/templates/`` that renders a tool call round-trips.

The templates are read from a mirror of a recent llama.cpp fork (never committed here:
``CALLSCOPE_LLAMA_MIRROR``, by default the search tool's ``/work/.mirror`` copy of
``erm14254/llama.cpp-minimax-m3-combined``, which merged llama.cpp's master on 2026-07-23);
without it the test skips. For each template, ``callscope template --check``'s round trip
must pass (every call turn: the default, and thinking on and off where the template has a
switch, each read from the text with ``--thinking auto``); a template that renders no
assistant tool call is counted and listed, and must write no ``tool_calls`` either.

Our own equivalents of the families among them (``resources/templates/families``) and the
test templates run in :mod:`tests.engine.templates.test_one_detection` and
:mod:`tests.engine.formats.test_families`, always.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from callscope.engine.templates.chat import ChatTemplate
from callscope.engine.templates.format_choice import choose_format

pytestmark = pytest.mark.usefixtures("forget_derived")  # derived formats are forgotten after each test

MIRROR = Path(os.environ.get(
    "CALLSCOPE_LLAMA_MIRROR", "/work/.mirror/erm14254+llama.cpp-minimax-m3-combined/repo"))
FOLDER = "models/templates/"
#: Templates that write no assistant tool call (tools in the system prompt only, or no tools at all).
RENDER_NO_CALL = {
    "HuggingFaceTB-SmolLM3-3B.jinja", "LFM2-8B-A1B.jinja", "LFM2.5-Instruct.jinja", "google-gemma-2-2b-it.jinja",
    "ibm-granite-granite-3.3-2B-Instruct.jinja", "llama-cpp-rwkv-world.jinja", "microsoft-Phi-3.5-mini-instruct.jinja",
}


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(MIRROR), *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"the llama.cpp mirror at {MIRROR} cannot be read: {done.stderr.strip()}")
    return done.stdout


def _names() -> list[str]:
    if not MIRROR.is_dir():
        return []
    done = subprocess.run(["git", "-C", str(MIRROR), "ls-tree", "--name-only", "HEAD", FOLDER], capture_output=True,
                          text=True)
    return sorted(Path(p).name for p in done.stdout.split() if p.endswith(".jinja"))


NAMES = _names()


def _template(name: str) -> ChatTemplate:
    return ChatTemplate(name, _git("show", f"HEAD:{FOLDER}{name}"), "file")


@pytest.mark.skipif(not NAMES, reason=f"no llama.cpp mirror at {MIRROR}")
def test_the_mirror_holds_the_2026_templates():
    assert len(NAMES) >= 60
    assert {"Qwen3.5-4B.jinja", "deepseek-ai-DeepSeek-V4.jinja", "LFM2.5-8B-A1B.jinja"} <= set(NAMES)


@pytest.mark.skipif(not NAMES, reason=f"no llama.cpp mirror at {MIRROR}")
@pytest.mark.parametrize("name", NAMES)
def test_every_template_that_renders_a_call_round_trips(name):
    choice = choose_format(_template(name))
    if name in RENDER_NO_CALL:
        assert not choice.trips, f"{name} renders a call now: take it off the list"
        return
    assert choice.trips, f"{name}: no call turn rendered ({choice.reason})"
    failed = [(t.enable_thinking, t.problems) for t in choice.trips if not t.ok]
    assert not failed, f"{name} read by {choice.format_id} ({choice.reason}): {failed}"
