"""Every call family forced live: ``callscope run --template FAMILY.jinja --format auto`` on the packaged model.

The family's own template (``resources/templates/families/``) picks the parser (the one
detection: a derived format for most families), and the grammar forces a call in that
template's syntax byte for byte; SmolLM2 chooses every token inside it. The call must
parse, stream in more than one delta, rebuild byte for byte and finish ``tool_calls``; the
recorded trace names the template, so it replays in a new process (``--format auto``
included) to the same calls.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from callscope.cli import main
from callscope.engine.core.shipped import resource
from callscope.engine.templates.families import FAMILIES
from tests.support.schema import validate_report

pytestmark = [pytest.mark.model, pytest.mark.usefixtures("forget_derived")]
WEATHER = resource("tools", "weather.json")


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_run_forces_a_call_in_the_family_syntax(capsys, tmp_path, fam):
    record = tmp_path / "run.jsonl"
    template = resource("templates", "families", f"{fam.name}.jinja")
    argv = ["run", "--format", "auto", "--template", str(template), "--tools", str(WEATHER), "--prompt",
            "Weather in Paris?", "--max-calls", "1", "--max-tokens", "160", "--record", str(record), "--json",
            "--chunks"]
    assert main(argv) == 0, capsys.readouterr().err
    doc = json.loads(capsys.readouterr().out)
    validate_report(doc)
    run = doc["runs"][0]
    assert run["finish_reason"] == "tool_calls" and run["violations"] == [], run["source"]["format_reason"]
    (call,) = run["calls"]
    assert call["name"] == "get_weather" and call["reconstructs"]
    assert isinstance(json.loads(call["final_arguments"])["city"], str)
    fragments = [
        delta["function"]["arguments"]
        for chunk in run["chunks"]
        for delta in chunk["chunk"]["choices"][0]["delta"].get("tool_calls") or []
        if delta.get("function", {}).get("arguments")
    ]
    assert len(fragments) > 1 and "".join(fragments) == call["final_arguments"]
    # a new process (no derived format registered yet) replays the trace to the same call, --format auto too
    for extra in ([], ["--format", "auto"]):
        done = subprocess.run([sys.executable, "-m", "callscope", "replay", str(record), "--json", *extra],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        (replayed,) = json.loads(done.stdout)["runs"]
        assert replayed["source"]["format"] == run["source"]["format"]
        assert [c["final_arguments"] for c in replayed["calls"]] == [call["final_arguments"]]
