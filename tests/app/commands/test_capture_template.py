"""``capture --template T [--thinking M]``: the server's content read again with the template's parser.

A server that does not parse its model's output (llama.cpp without ``--jinja``, a proxy
that passes text through) sends the reasoning and the tool call as plain content. With
the model's chat template, capture reads that content with the parser the one detection
picks for the template, and its report says what was left there, and how the reasoning
state was read from the text (``--thinking auto``). A real canned server on 127.0.0.1.
"""

from __future__ import annotations

import json

from callscope.cli import main
from tests.support.paths import ROOT
from tests.support.schema import validate_report
from tests.support.sse_server import DONE, ROLE, Scenario, chunk, lines_of

QWEN35 = ROOT / "tests" / "data" / "templates" / "qwen3_5.jinja"
LEFT = ("The user wants Paris.\n</think>\n\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n"
        "</parameter>\n</function>\n</tool_call>")


def _stream(text: str) -> list:
    pieces = [text[i : i + 7] for i in range(0, len(text), 7)]
    return lines_of(ROLE, *(chunk({"content": p}) for p in pieces), chunk(finish="stop"), DONE)


def test_content_a_server_left_unparsed_is_read_with_the_templates_parser(server, capsys):
    url = server.play("left-in-content", Scenario(_stream(LEFT)))
    assert main(["capture", url, "--prompt", "Weather in Paris?", "--template", str(QWEN35), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validate_report(doc)
    read = doc["runs"][0]["source"]["content_read"]
    assert read["format"] == "qwen3_coder" and read["may_open_reasoning"]
    assert read["calls"] == [{"name": "get_weather", "arguments": '{"city":"Paris"}'}]
    assert read["reasoning"] == "The user wants Paris." and read["content"] == ""
    assert read["thinking_inferred"]["inferred"] == "on" and read["thinking_inferred"]["marker"] == "</think>"
    assert main(["capture", url, "--prompt", "x", "--template", str(QWEN35)]) == 0
    out = capsys.readouterr().out
    assert "content read as qwen3_coder (the template's parser): 1 tool call left in content (get_weather)" in out
    assert "reasoning left in content: The user wants Paris." in out


def test_thinking_off_reads_the_same_content_as_content(server, capsys):
    url = server.play("left-off", Scenario(_stream("Sunny, 21 C.")))
    assert main(["capture", url, "--prompt", "x", "--template", str(QWEN35), "--thinking", "off", "--json"]) == 0
    read = json.loads(capsys.readouterr().out)["runs"][0]["source"]["content_read"]
    assert (read["content"], read["reasoning"], read["calls"]) == ("Sunny, 21 C.", "", [])
    assert "thinking_inferred" not in read


def test_a_bad_template_is_one_line(server, capsys, tmp_path):
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% if %}", encoding="utf-8")
    assert main(["capture", server.url("none"), "--prompt", "x", "--template", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.jinja" in err
