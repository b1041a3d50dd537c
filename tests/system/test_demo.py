"""The demo presets: `callscope run` with no arguments shows the win live (10x or more), `--demo quick` is the old demo."""

from __future__ import annotations

import json
import os

import pytest

from callscope.cli import main
from callscope.commands.request import DEFAULT_DEMO as CLI_DEFAULT
from callscope.engine.decode.demos import DEFAULT_MAX_STRING, DEMOS, QUICK, WRITE_FILE, UnknownDemo, get_demo
from callscope.engine.decode.grammar import build_tool_grammar
from callscope.engine.decode.messages import DEFAULT_PROMPT, default_messages
from tests.support.schema import validate_report


def _cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ without the model


def test_the_default_demo_is_one_long_write_file_call():
    demo = get_demo()
    assert demo is WRITE_FILE and CLI_DEFAULT == demo.name and DEFAULT_PROMPT == demo.prompt
    (tool,) = demo.tools()
    assert tool["function"]["name"] == "write_file"
    assert tool["function"]["parameters"]["properties"]["content"]["minLength"] >= 2600
    assert demo.max_calls == 1 and demo.content_chars == 0, "the call comes first: nothing delays its header"
    assert default_messages() == [{"role": "user", "content": demo.prompt}]
    assert default_messages("hi", demo="quick") == [{"role": "user", "content": "hi"}]
    assert set(DEMOS) == {"write-file", "quick"} and QUICK.tools_file == "default.json" and QUICK.max_calls == 2
    with pytest.raises(UnknownDemo, match="demos: write-file, quick"):
        get_demo("slow")


@pytest.mark.llama
def test_the_demo_raises_the_string_bound_for_its_own_tools_only():
    demo = get_demo()
    options = demo.run_options(demo.tools())
    grammar = build_tool_grammar("emulated", demo.tools(), max_calls=options["max_calls"],
                                 content_chars=options["content_chars"], max_string=options["max_string"])
    rules = dict(line.split(" ::= ", 1) for line in grammar.gbnf.splitlines())
    content, path = rules["t0-args-content"], rules["t0-args-path"]
    # content: at least 2,600 characters (the schema's minLength), at most the demo's bound; path keeps its own 32
    assert content.split("(", 1)[0].count("char") == 2600 and content.count("char") == options["max_string"] == 3000
    assert path.count("char") == 32
    assert rules["root"] == "call", "no content line before the call"
    weather = QUICK.tools()
    assert demo.run_options(weather)["max_string"] == DEFAULT_MAX_STRING  # a tool with an open string gets 24


@pytest.mark.model
def test_prompt_renders_each_demo_request_without_weights(capsys):
    code, out, err = _cli(capsys, "prompt", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert "write_file" in doc["prompt"] and WRITE_FILE.prompt in doc["prompt"] and "get_weather" not in doc["prompt"]
    code, out, err = _cli(capsys, "prompt", "--demo", "quick", "--json")
    assert code == 0, err
    assert "get_weather" in json.loads(out)["prompt"] and QUICK.prompt in json.loads(out)["prompt"]
    with pytest.raises(SystemExit) as exited:
        main(["run", "--demo", "slow"])
    assert exited.value.code == 2
    assert "invalid choice: 'slow'" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "message"), [
    (["--content-chars", "-1"], "--content-chars must be 0 or more"),
    (["--max-string", "0"], "--max-string must be at least 1"),
    (["--min-calls", "3", "--max-calls", "2"], "--min-calls must be between 1 and --max-calls (2)"),
])
def test_run_refuses_bad_forced_call_settings_in_one_line(capsys, args, message):
    code, _out, err = _cli(capsys, "run", *args)
    assert code == 2 and err.count("\n") == 1 and message in err


# ------------------------------------------------------------------ with the model


def _default_run(capsys) -> dict:
    code, out, err = _cli(capsys, "run", "--json", "--chunks")
    assert code == 0, err
    doc = json.loads(out)
    validate_report(doc)
    return doc["runs"][0]


@pytest.mark.model
def test_run_with_no_arguments_streams_the_header_within_its_first_tokens(capsys):
    """The demo's win in tokens, which no machine load changes: the header leaves within the first 20 tokens
    of a 500+ token call, the call reconstructs, and the ms on the wire are the ms of that step.

    The live ratio in seconds (>= 10x, from the request) is wall-clock time, so it is a benchmark, not a test:
    ``callscope bench demo`` runs the default demo as a user does and reports it.
    """
    run = _default_run(capsys)
    assert run["source"]["forced"] == "one call to write_file in emulated syntax"
    assert run["finish_reason"] == "tool_calls" and run["violations"] == []
    (call,) = run["calls"]
    assert call["name"] == "write_file" and call["reconstructs"]
    content = json.loads(call["final_arguments"])["content"]
    assert 2600 <= len(content) <= 3000
    first, atomic = run["ttfd"]["streaming"], run["ttfd"]["atomic"]
    assert first["step"] <= 20 and atomic["step"] >= 25 * 20
    assert first["ms"] < atomic["ms"]
    header = next(c for c in run["chunks"] if c["chunk"]["choices"][0]["delta"].get("tool_calls"))
    assert header["step"] == first["step"] and header["ms"] == first["ms"]
    assert header["chunk"]["choices"][0]["delta"]["tool_calls"][0]["function"]["name"] == "write_file"


@pytest.mark.model
def test_prompt_evaluation_runs_on_the_decode_threads_not_one_per_core():
    """llama-cpp-python evaluates the prompt on every core; on a shared two-core machine that stalled the
    demo's first delta for seconds (4-5 s against about 1 s on one thread, side by side). The model is loaded
    with the decode thread count for both."""
    from callscope.engine.decode.model import default_threads, load_model

    params = load_model(n_ctx=256).llama.context_params
    assert params.n_threads == default_threads() == max(1, (os.cpu_count() or 2) // 2)
    assert params.n_threads_batch == params.n_threads


@pytest.mark.model
def test_the_quick_demo_still_calls_both_sample_tools(capsys):
    code, out, err = _cli(capsys, "run", "--demo", "quick", "--json")
    assert code == 0, err
    run = json.loads(out)["runs"][0]
    assert run["finish_reason"] == "tool_calls"
    assert [c["name"] for c in run["calls"]] == ["get_weather", "read_file"]
    assert all(c["reconstructs"] for c in run["calls"])
