"""Adding a format touches nothing else: a test-only format registered from the test suite.

``tests/support/plugin_format.py`` is one module (parser + spec) for ``<<CALL name {json}>>``.
Registering its spec must make it work everywhere a built-in format does:
``replay-text`` (the CLI, in-process), ``run``'s grammar forcing with the real
packaged model, template detection and built-in template, sample writing, the
text pane's markup and the capture checker's marker check. Nothing outside the
test suite is edited for it.
"""

from __future__ import annotations

import json

import pytest

from callscope.cli import main
from callscope.engine.capture import analyze_capture_lines
from callscope.engine.decode.grammar import build_tool_grammar, forceable_formats
from callscope.engine.formats import (
    FORMAT_IDS,
    FormatSpec,
    get_spec,
    leak_markers,
    make_parser,
    register_format,
    unregister_format,
)
from callscope.engine.formats.samples import render
from callscope.engine.inspector.state import InspectorState
from callscope.engine.recordings.replay_text import analyze_text
from callscope.engine.templates.chat import BUILTIN_FORMATS, builtin_template, detect_format
from tests.support import plugin_format
from tests.support.sse_server import DONE, ROLE, chunk, lines_of

CALL = ("get_weather", {"city": "Paris"})


@pytest.fixture
def testfmt():
    """The test-only format, registered for one test and removed after it (other tests list FORMAT_IDS)."""
    spec = register_format(plugin_format.SPEC)
    try:
        yield spec
    finally:
        unregister_format(plugin_format.FORMAT_ID)


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_registration_is_scoped_and_checked(testfmt):
    assert plugin_format.FORMAT_ID in FORMAT_IDS and get_spec(plugin_format.FORMAT_ID) is testfmt
    with pytest.raises(ValueError, match="already registered"):
        register_format(plugin_format.SPEC)
    with pytest.raises(ValueError, match="already registered"):
        register_format(FormatSpec("hermes", "a clash", plugin_format.Parser, plugin_format.SPEC.markers, render))
    with pytest.raises(ValueError, match="built-in formats cannot be removed"):
        unregister_format("hermes")
    with pytest.raises(ValueError, match="format id"):
        FormatSpec("Not-An-Id", "", plugin_format.Parser, plugin_format.SPEC.markers, render)


def test_unregistered_it_is_unknown():
    assert plugin_format.FORMAT_ID not in FORMAT_IDS
    with pytest.raises(ValueError, match="unknown format 'testfmt'"):
        make_parser(plugin_format.FORMAT_ID)


def test_parser_streams_the_call_and_samples_write_it(testfmt):
    text = render(plugin_format.FORMAT_ID, [CALL], content="Let me check.")
    assert text == 'Let me check.\n<<CALL get_weather {"city": "Paris"}>>'
    parser = make_parser(plugin_format.FORMAT_ID)
    for ch in text:  # a character at a time: half-typed markers are held back, arguments only grow
        parser.feed(ch)
        assert "<" not in parser.snapshot().content
    parser.finish()
    parse = parser.snapshot()
    assert parse.content == "Let me check.\n"
    assert [(c.name, c.arguments) for c in parse.calls] == [("get_weather", '{"city": "Paris"}')]


def test_replay_text_cli_knows_the_registered_format(testfmt, tmp_path, capsys):
    source = tmp_path / "gen.txt"
    source.write_text(render(plugin_format.FORMAT_ID, [CALL, ("read_file", {"path": "a.txt"})], "Two calls."))
    code, out, err = cli(capsys, "replay-text", source, "--format", plugin_format.FORMAT_ID, "--step", "3", "--json")
    assert code == 0, err
    run = json.loads(out)["runs"][0]
    assert run["source"]["format"] == plugin_format.FORMAT_ID
    assert run["violations"] == [] and run["finish_reason"] == "tool_calls"
    assert [(c["name"], c["reconstructs"]) for c in run["calls"]] == [("get_weather", True), ("read_file", True)]
    assert run["calls"][1]["final_arguments"] == '{"path": "a.txt"}'
    assert run["content"]["final"] == "Two calls.\n"


def test_templates_detect_it_and_its_own_template_is_the_built_in_one(testfmt):
    assert plugin_format.FORMAT_ID in BUILTIN_FORMATS
    template = builtin_template(plugin_format.FORMAT_ID)
    assert template.name == "built-in testfmt (testfmt.jinja)"
    detection = detect_format(template.source)
    assert (detection.format_id, detection.reason) == (plugin_format.FORMAT_ID, "<<CALL marker (a test-only format)")
    # its priority (650) sits between Qwen3-Coder XML (600) and Hermes (700), as a llama.cpp handler would
    assert detect_format("<tool_call> <function=x> <parameter=y> <<CALL").format_id == "qwen3_coder"
    assert detect_format("<tool_call> <<CALL").format_id == plugin_format.FORMAT_ID


@pytest.mark.llama
def test_its_grammar_spells_its_envelope(testfmt):
    assert plugin_format.FORMAT_ID in forceable_formats()
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
    grammar = build_tool_grammar(plugin_format.FORMAT_ID, tools, "any", max_calls=2, content_chars=8)
    assert '"<<CALL get_weather "' in grammar.gbnf and 'root ::= content? call (" " call){0,1}' in grammar.gbnf
    assert grammar.describe() == "1-2 calls to get_weather in testfmt syntax"


def test_the_capture_checker_flags_its_marker_in_content(testfmt):
    assert "<<CALL" in leak_markers()
    lines = lines_of(ROLE, chunk({"content": "sure <<CA"}), chunk({"content": 'LL get_weather {"city": 1}>>'}),
                     chunk(finish="stop"), DONE)
    analysis = analyze_capture_lines(lines)
    assert [v.rule for v in analysis.violations] == ["marker-in-content"]
    assert "'<<CALL'" in analysis.violations[0].detail


def test_the_checker_forgets_it_once_unregistered():
    lines = lines_of(ROLE, chunk({"content": "sure <<CALL x {}>>"}), chunk(finish="stop"), DONE)
    assert analyze_capture_lines(lines).violations == []


def test_the_text_pane_colours_its_markup(testfmt):
    """From the parser's events: its opener is markup, its arguments argument text, another format's marker content."""
    text = 'ok <<CALL get_weather {"a": 1}>> <tool_call>'
    spans = InspectorState(analyze_text(text, plugin_format.FORMAT_ID, size=2)).spans
    kinds = spans.char_kinds()

    def kinds_of(needle: str) -> set[str]:
        at = text.index(needle)
        return {k for k, _ in kinds[at: at + len(needle)]}

    assert kinds_of("<<CALL get_weather") == {"call"}
    assert kinds_of('{"a": 1}') == {"arguments"}
    assert kinds_of("<tool_call>") == {"content"}


@pytest.mark.model
def test_run_forces_a_real_call_in_the_registered_format(testfmt, capsys):
    argv = ["run", "--demo", "quick", "--format", plugin_format.FORMAT_ID, "--max-calls", "1", "--max-tokens", "48",
            "--json"]
    code, out, err = cli(capsys, *argv)
    assert code == 0, err
    run = json.loads(out)["runs"][0]
    assert run["source"]["format"] == plugin_format.FORMAT_ID
    assert run["source"]["template"] == "built-in testfmt (testfmt.jinja)"
    assert run["finish_reason"] == "tool_calls" and run["violations"] == []
    (call,) = run["calls"]
    assert call["reconstructs"] and call["name"] in ("get_weather", "read_file")
    assert isinstance(json.loads(call["final_arguments"]), dict)
