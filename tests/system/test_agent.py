"""A real agent completes a tool-call turn against ``callscope serve``: opencode, headless, writes a file.

opencode (its Linux x86-64 build, installed by ``make node-clients`` from
tests/system/agent's lockfile) runs ``opencode run`` with a custom provider on
``@ai-sdk/openai-compatible`` pointed at ``callscope serve`` (a real process):

- at ``serve --model``: the packaged model, live, grammar-forced to call
  opencode's ``write`` tool; opencode assembles the streamed call, writes the
  file, sends the result back, and gets a text answer (the loop ends);
- at a recorded session of that very exchange (tests/data/agent_session, recorded
  by ``serve --model --record-dir``): the same turns replayed, the same file.

Each is bounded in time; without opencode the tests skip with the reason
(in CI, where ``CI`` is set, they fail instead). Nothing is downloaded at run
time: the test checks opencode left no npm cache behind.
"""

from __future__ import annotations

import pytest

from tests.support import agent
from tests.support.node_packages import require
from tests.support.paths import DATA
from tests.support.serve_helpers import ServeProcess

SESSION = DATA / "agent_session"


@pytest.fixture
def opencode():
    require(agent.unavailable())


def assert_wrote_the_file(done, home, work) -> None:
    assert done.returncode == 0, (done.stdout[-800:], done.stderr[-800:])
    assert (work / "hello.txt").read_text() == "hi", (done.stdout[-800:], sorted(p.name for p in work.iterdir()))
    assert "Wrote file successfully" in done.stdout + done.stderr  # the tool ran (its result went back)
    assert not (home / ".npm").exists(), "opencode downloaded packages at run time"


@pytest.mark.model
@pytest.mark.slow
def test_opencode_completes_a_tool_call_turn_against_the_live_model(opencode, tmp_path):
    with ServeProcess(["--model", "--ctx", "8192", "--temp", "0", "--force-tool", "write",
                       "--record-dir", tmp_path / "rec"]) as serve:
        done = agent.run_opencode(serve.v1, tmp_path / "home", tmp_path / "work", timeout=420)
        assert serve.wait_for(lambda: len(serve.turn_lines()) >= 2, 60), serve.lines
    assert_wrote_the_file(done, tmp_path / "home", tmp_path / "work")
    call, answer = serve.turn_lines()[:2]
    assert "chat · 1 call" in call and "0 violations" in call, serve.lines  # streamed right, judged as served
    assert "no tool call" in answer, serve.lines  # the tool's result came back: a text answer ends the loop


@pytest.mark.slow
def test_opencode_completes_the_same_turn_against_its_recording(opencode, tmp_path):
    with ServeProcess([SESSION, "--speed", "max"]) as serve:
        done = agent.run_opencode(serve.v1, tmp_path / "home", tmp_path / "work", timeout=180)
        assert serve.wait_for(lambda: len(serve.turn_lines()) >= 2, 60), serve.lines
    assert_wrote_the_file(done, tmp_path / "home", tmp_path / "work")
    assert [("served turn-0001" in line, "served turn-0002" in line) for line in serve.turn_lines()[:2]] == [
        (True, False), (False, True)], serve.lines
