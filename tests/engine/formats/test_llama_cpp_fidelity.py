"""Fidelity to llama.cpp's recorded partial parse: qwen3_coder on a Qwen3.5 generation, offset by offset.

The original fix was measured on a byte-prefix fixture recorded from llama.cpp
(``common_chat_parse(prefix, is_partial=true)`` with ``models/templates/Qwen3.5-4B.jinja``,
Mesh-LLM's ``crates/skippy-server/tests/fixtures/qwen35_partial_tool_calls.txt``): 43
partial offsets over two generations, plus the terminal parses. The recording carries
parses, not text, so the generations are written here to fit it (the offsets pin every
marker: the name at ``<function=NAME>\\n``, a key at ``<parameter=KEY>\\n``, a string's
closing quote at its whole closing line ``\\n</parameter>\\n``, ``}`` at ``</function>\\n``).

``test_our_equivalent_*`` holds the same expectations, written here from those rules, and
always runs; ``test_the_recorded_fixture_*`` reads the recording itself from a mirror of
the public repository (``/work/.mirror``, never committed here) and skips without it.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from callscope.engine.formats import make_parser

PATH = "/tmp/AGENTS.md"
TOOLS = [
    {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object", "properties": {
        "path": {"type": "string"}, "limit": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "list_dir", "parameters": {"type": "object", "properties": {
        "path": {"type": "string"}}}}},
]


def call(name: str, *params: tuple[str, str]) -> str:
    body = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in params)
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


#: The two generations, written to fit the recorded offsets (23 characters of text before the first call).
GENERATIONS = {
    "single_call": "Reading the file now.\n\n" + call("read_file", ("path", PATH), ("limit", "200")),
    "parallel_calls": call("read_file", ("path", "/tmp/a.md")) + "\n" + call("list_dir", ("path", "/tmp")),
}


def calls_at(text: str, end: int | None) -> list[tuple[str, str]]:
    """``(name, arguments)`` of every call in qwen3_coder's parse of ``text[:end]`` (None: the terminal parse)."""
    parser = make_parser("qwen3_coder", TOOLS)
    parser.feed(text if end is None else text[:end])
    if end is None:
        parser.finish()
    return [(c.name, c.arguments) for c in parser.snapshot().calls if c.name is not None]


def _q(text: str) -> str:
    return json.dumps(text)[:-1]  # a JSON string still open: its opening quote and escaped text


# ------------------------------------------------------------------ our written equivalent

#: offset -> the calls llama.cpp's mapper shows there, by its rules (see the module docstring).
EXPECTED = {
    "single_call": {
        56: [("read_file", "{")],
        73: [("read_file", '{"path":"')],
        **{73 + i: [("read_file", '{"path":' + _q(PATH[:i]))] for i in range(1, len(PATH) + 1)},
        101: [("read_file", '{"path":' + json.dumps(PATH))],
        119: [("read_file", '{"path":' + json.dumps(PATH) + ',"limit":')],
        **{119 + i: [("read_file", '{"path":' + json.dumps(PATH) + ',"limit":' + "200"[:i])] for i in (1, 2, 3)},
        148: [("read_file", '{"path":' + json.dumps(PATH) + ',"limit":200}')],
    },
    "parallel_calls": {
        33: [("read_file", "{")],
        **{50 + i: [("read_file", '{"path":' + _q("/tmp/a.md"[:i]))] for i in range(0, 10)},
        73: [("read_file", '{"path":"/tmp/a.md"')],
        85: [("read_file", '{"path":"/tmp/a.md"}')],
        130: [("read_file", '{"path":"/tmp/a.md"}'), ("list_dir", "{")],
        **{147 + i: [("read_file", '{"path":"/tmp/a.md"}'), ("list_dir", '{"path":' + _q("/tmp"[:i]))] for i in range(5)},
        165: [("read_file", '{"path":"/tmp/a.md"}'), ("list_dir", '{"path":"/tmp"')],
        177: [("read_file", '{"path":"/tmp/a.md"}'), ("list_dir", '{"path":"/tmp"}')],
    },
}


@pytest.mark.parametrize("name", list(GENERATIONS))
def test_our_equivalent_matches_at_every_offset(name):
    text = GENERATIONS[name]
    misses = [(end, calls_at(text, end), want) for end, want in EXPECTED[name].items() if calls_at(text, end) != want]
    assert not misses, misses
    assert calls_at(text, None) == EXPECTED[name][max(EXPECTED[name])]


def test_our_equivalent_counts_43_offsets():
    assert sum(len(offsets) for offsets in EXPECTED.values()) == 43


# ------------------------------------------------------------------ the recording itself

MIRROR = Path(os.environ.get("CALLSCOPE_MIRROR", "/work/.mirror")) / "xeonai44+mesh-llm" / "repo"
FIXTURE = "crates/skippy-server/tests/fixtures/qwen35_partial_tool_calls.txt"


def recorded() -> dict[str, dict[int | None, list[tuple[str, str]]]]:
    """The recording, read from the mirror: fixture -> offset (None: final) -> calls."""
    if not MIRROR.is_dir():
        pytest.skip(f"no mirror of the recording at {MIRROR}")
    found = subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{FIXTURE}"], capture_output=True, text=True)
    if found.returncode != 0:
        pytest.skip(f"the mirror has no {FIXTURE}")
    out: dict[str, dict[int | None, list[tuple[str, str]]]] = {}
    for line in found.stdout.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, marker, payload = line.split(" ", 2)
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in json.loads(payload)]
        out.setdefault(name, {})[None if marker == "final" else int(marker)] = calls
    return out


def test_the_recorded_fixture_matches_at_43_of_43_offsets():
    fixtures = recorded()
    offsets = [(name, end) for name, by_end in fixtures.items() for end in by_end if end is not None]
    assert len(offsets) == 43
    misses = [
        (name, end) for name, end in offsets if calls_at(GENERATIONS[name], end) != fixtures[name][end]
    ]
    assert not misses, f"{43 - len(misses)}/43 offsets match; differ at {misses}"
    for name, by_end in fixtures.items():
        assert calls_at(GENERATIONS[name], None) == by_end[None]
