"""What reaches a terminal line from a recording is escaped: a tool name cannot forge a line or send escape codes."""

from __future__ import annotations

from callscope.cli import main as cli_main
from tests.support.sse_server import DONE, FINISH_TOOLS, ROLE, chunk, tool


def test_replay_prints_a_hostile_tool_name_escaped(tmp_path, capsys):
    dump = tmp_path / "hostile.sse"
    name = "get\x1b[31mweather\n[1] forged id=x reconstructs\x9b2J"
    events = [ROLE, chunk(tool(0, "call_a", name, '{"city": "Paris"}')), FINISH_TOOLS, DONE]
    dump.write_text("\n\n".join(events) + "\n\n")
    assert cli_main(["replay", str(dump)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out and "forged" in out
    assert "get\\x1b[31mweather\\n[1] forged id=x reconstructs\\x9b2J id=call_a" in out, out
    assert not any(line.startswith("[1] forged") for line in out.splitlines())
