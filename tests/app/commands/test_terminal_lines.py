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


def test_replay_json_carries_the_same_name_with_no_raw_control(tmp_path, capsys):
    import json

    dump = tmp_path / "hostile.sse"
    name = "get\x9b2J\u202eweather"
    dump.write_text("\n\n".join([ROLE, chunk(tool(0, "call_a", name, "{}")), FINISH_TOOLS, DONE]) + "\n\n")
    assert cli_main(["replay", str(dump), "--json"]) == 0
    out = capsys.readouterr().out
    assert "\x9b" not in out and "\u202e" not in out
    assert json.loads(out)["runs"][0]["calls"][0]["name"] == name
