"""The live decode loop against the real packaged model (SmolLM2-135M via llama-cpp-python).

The model is loaded once for the module; generations are kept short (a forced
call is 20-100 tokens). Times are checked for order, never for speed.
"""

from __future__ import annotations

import itertools
import json
import struct
import threading
from pathlib import Path

import pytest

from callscope.cli import main
from callscope.engine.analysis.analyzer import Analyzer, SourceInfo
from callscope.engine.analysis.report import report_json
from callscope.engine.core.errors import (
    GrammarError,
    ModelBusy,
    ModelLoadFailed,
    ModelNotFound,
    ModelUnreadable,
    NotGGUF,
    PromptTooLong,
    ToolChoiceError,
)
from callscope.engine.core.gguf import default_model_path, read_model_info
from callscope.engine.core.tools import load_tools
from callscope.engine.decode.grammar import build_tool_grammar, compile_grammar
from callscope.engine.decode.loop import Generation, SamplerSettings, tokenize_prompt
from callscope.engine.decode.messages import default_messages
from callscope.engine.decode.model import load_model
from callscope.engine.decode.session import LiveRun, RunSettings
from callscope.engine.formats import make_parser
from callscope.engine.recordings.replay import load_analyses
from callscope.engine.recordings.trace import read_trace
from tests.support.paths import ROOT
from tests.support.schema import validate_report

pytestmark = pytest.mark.model

WEATHER = load_tools(ROOT / "resources" / "tools" / "weather.json")
BOTH = load_tools(ROOT / "resources" / "tools" / "default.json")
SHORT = [{"role": "user", "content": "Weather in Paris?"}]
LONG = "root ::= [a-z ] root"  # a generation that never completes, so it cannot end early


def settings(**overrides) -> RunSettings:
    base = {
        "messages": SHORT,
        "tools": WEATHER,
        "format_id": "hermes",
        "max_calls": 1,
        "content_chars": 16,
        "max_tokens": 160,
    }
    base.update(overrides)
    return RunSettings(**base)


def tool_deltas(analysis, index=0):
    return [c for c in analysis.chunks if c.kind == "arguments" and c.index == index]


# ------------------------------------------------------- forced calls


@pytest.mark.parametrize(
    "format_id", ["hermes", "qwen3_coder", "llama3_json", "mistral", "emulated", "generic", "deepseek_v31", "gpt_oss"]
)
def test_a_forced_call_streams_and_reconstructs_in_each_format(model, format_id):
    live = LiveRun(model, settings(format_id=format_id))
    steps = []
    result = live.run(on_token=lambda step, analyzer: steps.append(step))
    analysis, stats = result.analysis, result.stats
    assert stats.cause == "stop" and analysis.finish_cause == "stop"
    assert analysis.finish_reason == "tool_calls"
    assert analysis.violations == []
    assert len(analysis.calls) == 1
    call = analysis.calls[0]
    assert call.name == "get_weather" and call.reconstructs
    assert call.streamed_arguments == analysis.terminal.calls[0].arguments
    assert isinstance(json.loads(call.streamed_arguments)["city"], str)
    assert len(tool_deltas(analysis)) > 1  # streamed, not one chunk at the end
    # per-token times: measured, strictly increasing, the first one is the time to first token
    times = [s.ms for s in analysis.steps]
    assert all(b > a for a, b in itertools.pairwise(times))
    assert times[0] == stats.ttft_ms > 0
    assert analysis.ttfd_streaming.ms < analysis.ttfd_atomic.ms == times[-1]
    # the bytes are the whole-prefix detokenization, control markers included
    data = b"".join(s.data for s in steps)
    assert data == model.llama.detokenize(stats.token_ids, special=True)
    assert [s.token for s in steps] == stats.token_ids


def test_a_forced_call_in_mistral_args_form_streams_and_reconstructs(model):
    live = LiveRun(model, settings(format_id="mistral", forms={"mistral": "args"}, content_chars=0, max_tokens=48))
    assert "[ARGS]" in live.gbnf and "[TOOL_CALLS][" not in live.gbnf
    result = live.run()
    analysis, stats = result.analysis, result.stats
    text = model.llama.detokenize(stats.token_ids, special=True).decode("utf-8")
    assert text.startswith("[TOOL_CALLS]get_weather[ARGS]{"), text
    assert stats.cause == "stop" and analysis.finish_reason == "tool_calls"
    assert analysis.violations == []
    assert len(analysis.calls) == 1
    call = analysis.calls[0]
    assert call.name == "get_weather" and call.reconstructs
    assert call.streamed_arguments == analysis.terminal.calls[0].arguments == text.split("[ARGS]", 1)[1]
    assert isinstance(json.loads(call.streamed_arguments)["city"], str)
    assert len(tool_deltas(analysis)) > 1
    assert "[TOOL_CALLS]NAME[ARGS] form" in analysis.source.extra["forced"]


def test_mistral_form_is_checked_and_parallel_args_calls_each_get_a_marker():
    grammar = build_tool_grammar("mistral", BOTH, "any", max_calls=2, min_calls=2, forms={"mistral": "args"})
    assert "root ::= call{2,2}" in grammar.gbnf
    assert '"[TOOL_CALLS]get_weather[ARGS]"' in grammar.gbnf and '"[TOOL_CALLS]read_file[ARGS]"' in grammar.gbnf
    with pytest.raises(GrammarError, match="unknown mistral call form 'named'; known forms: array, args"):
        build_tool_grammar("mistral", BOTH, "any", forms={"mistral": "named"})
    odd = [{"type": "function", "function": {"name": "get weather", "parameters": {"type": "object"}}}]
    with pytest.raises(GrammarError, match="use --mistral-form array"):
        build_tool_grammar("mistral", odd, "any", forms={"mistral": "args"})
    assert build_tool_grammar("mistral", odd, "any").form == "array"  # the array form quotes any name
    assert build_tool_grammar("hermes", BOTH, "any", forms={"mistral": "args"}).form is None


def test_parallel_calls_keep_their_own_index(model):
    live = LiveRun(
        model, settings(tools=BOTH, messages=default_messages(demo="quick"), min_calls=2, max_calls=2, content_chars=0,
                        max_tokens=240)
    )
    analysis = live.run().analysis
    assert analysis.finish_reason == "tool_calls"
    assert [c.index for c in analysis.calls] == list(range(len(analysis.calls))) and len(analysis.calls) == 2
    assert len({c.id for c in analysis.calls}) == 2
    for call in analysis.calls:
        assert call.reconstructs
        assert all(c.call_id in (None, call.id) for c in analysis.chunks if c.index == call.index)


def test_a_length_cut_mid_call_finishes_length(model):
    result = LiveRun(model, settings(content_chars=0, max_tokens=12)).run()
    assert result.stats.cause == "length" and result.stats.tokens == 12
    assert result.analysis.finish_reason == "length"


# ------------------------------------------------------- record / replay


def test_the_recorded_trace_replays_to_the_same_report(model, tmp_path, capsys):
    record = tmp_path / "run.jsonl"  # replay names the run after the file: same name, same minted ids
    live = LiveRun(model, settings(tools=BOTH, messages=default_messages(demo="quick"), max_calls=2, record=str(record)))
    live_analysis = live.run().analysis
    trace = read_trace(record)
    assert trace.header.source == "model" and trace.header.format == "hermes"
    assert trace.header.model_sha256 and trace.header.tools == BOTH and trace.end.cause == "stop"
    assert [s.ms for s in trace.steps] == [s.ms for s in live_analysis.steps]

    (replayed,) = load_analyses(record, "incremental")
    live_doc = report_json([live_analysis], include_chunks=True)["runs"][0]
    replay_doc = report_json([replayed], include_chunks=True)["runs"][0]
    live_doc.pop("source"), replay_doc.pop("source")
    assert replay_doc == live_doc

    assert main(["replay", str(record), "--json", "--chunks"]) == 0
    cli_doc = json.loads(capsys.readouterr().out)["runs"][0]
    cli_doc.pop("source")
    assert cli_doc == live_doc


# ------------------------------------------------------------- cancel


def test_cancel_from_the_token_callback_stops_at_once(model, tmp_path):
    stop = threading.Event()
    record = tmp_path / "cancelled.jsonl"

    def on_token(step, analyzer):
        if step.index == 5:
            stop.set()

    result = LiveRun(model, settings(grammar=LONG, max_tokens=60, record=str(record))).run(stop, on_token)
    assert result.stats.cause == "cancelled" and result.stats.tokens == 5
    assert result.analysis.finish_cause == "cancelled"
    assert read_trace(record).end.cause == "cancelled"


def test_cancel_from_another_thread_stops_within_one_token(model):
    stop = threading.Event()
    seen = []
    at_stop = []
    three = threading.Event()

    def on_token(step, analyzer):
        seen.append(step.index)
        if step.index == 3:
            three.set()

    def canceller():
        three.wait(30)
        at_stop.append(len(seen))
        stop.set()

    thread = threading.Thread(target=canceller)
    thread.start()
    result = LiveRun(model, settings(grammar=LONG, max_tokens=80)).run(stop, on_token)
    thread.join()
    assert result.stats.cause == "cancelled"
    assert result.stats.tokens <= at_stop[0] + 1


def test_a_stop_set_before_start_generates_nothing(model):
    stop = threading.Event()
    stop.set()
    result = LiveRun(model, settings(force_tool="off")).run(stop)
    assert result.stats.cause == "cancelled" and result.stats.tokens == 0 and result.analysis.step_count == 0


# ------------------------------------------------------------- UTF-8


def test_a_character_split_across_tokens_survives(model, tmp_path):
    text = "Voilà: 日本の🦙!"
    grammar = f'root ::= "{text}"'
    record = tmp_path / "utf8.jsonl"
    steps = []
    result = LiveRun(model, settings(grammar=grammar, record=str(record))).run(on_token=lambda s, a: steps.append(s))
    data = b"".join(s.data for s in steps)
    assert data.decode("utf-8") == text
    split = [s.data for s in steps if not _is_utf8(s.data)]
    assert split, "expected at least one token that ends inside a UTF-8 character"
    assert result.analysis.terminal.content == text
    assert result.analysis.content_streamed == text
    # the trace keeps the raw bytes (base64 where a step is not valid UTF-8 alone)
    trace = read_trace(record)
    assert trace.data() == data and trace.text() == text
    assert '"b64"' in record.read_text()


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


# ------------------------------------------------------- thread ownership


def test_another_thread_cannot_use_an_owned_model(model):
    LiveRun(model, settings(force_tool="off", max_tokens=1)).run()  # this thread owns it now
    errors = []

    def other():
        try:
            for _ in Generation(model, [1, 2, 3], 1):
                pass
        except ModelBusy as exc:
            errors.append(exc)

    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert errors and "another thread" in str(errors[0])


# -------------------------------------------------------------- bad input


def test_model_file_errors_are_typed(tmp_path):
    with pytest.raises(ModelNotFound):
        read_model_info(tmp_path / "missing.gguf")
    with pytest.raises(ModelUnreadable):
        read_model_info(tmp_path)
    (tmp_path / "text.gguf").write_text("not a model")
    with pytest.raises(NotGGUF, match="not a GGUF"):
        read_model_info(tmp_path / "text.gguf")
    (tmp_path / "cut.gguf").write_bytes(Path(default_model_path()).read_bytes()[:4096])
    with pytest.raises(NotGGUF, match="truncated"):
        read_model_info(tmp_path / "cut.gguf")
    (tmp_path / "v9.gguf").write_bytes(b"GGUF" + struct.pack("<IQQ", 9, 0, 0))
    with pytest.raises(NotGGUF, match="version 9"):
        read_model_info(tmp_path / "v9.gguf")
    (tmp_path / "empty.gguf").write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 0))
    with pytest.raises(ModelLoadFailed):
        load_model(tmp_path / "empty.gguf")


def test_unknown_forced_tool_and_too_long_prompt_are_typed(model):
    with pytest.raises(ToolChoiceError, match="get_weather"):
        LiveRun(model, settings(force_tool="launch_rocket"))
    small = load_model(n_ctx=64)
    with pytest.raises(PromptTooLong) as info:
        LiveRun(small, settings())
    assert info.value.n_ctx == 64 and info.value.prompt_tokens > 64


def test_max_tokens_is_capped_by_the_context(model):
    small = load_model(n_ctx=160)
    live = LiveRun(small, settings(grammar=LONG, max_tokens=10_000, tools=None, format_id="emulated"))
    result = live.run()
    assert result.stats.cause == "length"
    assert len(live.prompt_tokens) + result.stats.tokens == 160


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "MISSING"], "no such file"),
        (["--model", "DIR"], "is a directory"),
        (["--model", "TEXT"], "not a GGUF model file"),
        (["--tools", "BADTOOLS"], "$[0].function.parameters.properties.city: expected a schema object"),
        (["--force-tool", "launch_rocket"], "no such tool in the request; its tools are: write_file (or any, off)"),
        (["--ctx", "64"], "the prompt is"),
        (["--max-tokens", "0"], "--max-tokens must be at least 1"),
        (["--template", "BADTEMPLATE"], "bad.jinja:2: syntax error"),
    ],
)
def test_run_bad_input_is_one_line_and_exit_2(capsys, tmp_path, args, message):
    (tmp_path / "text.gguf").write_text("hello")
    (tmp_path / "tools.json").write_text(
        json.dumps(
            [
                {
                    "type": "function",
                    "function": {"name": "w", "parameters": {"type": "object", "properties": {"city": "string"}}},
                }
            ]
        )
    )
    (tmp_path / "bad.jinja").write_text("ok\n{{ x }\n")
    names = {
        "MISSING": tmp_path / "missing.gguf",
        "DIR": tmp_path,
        "TEXT": tmp_path / "text.gguf",
        "BADTOOLS": tmp_path / "tools.json",
        "BADTEMPLATE": tmp_path / "bad.jinja",
    }
    code, _out, err = cli(capsys, "run", *[names.get(a, a) for a in args])
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("callscope run: ") and message in err


# ----------------------------------------------------------------- CLI


def test_run_json_report_validates_and_names_the_model(capsys, tmp_path):
    record = tmp_path / "cli.jsonl"
    code, out, err = cli(
        capsys,
        "run",
        "--demo",
        "quick",
        "--format",
        "emulated",
        "--max-calls",
        "1",
        "--max-tokens",
        "160",
        "--record",
        record,
        "--json",
        "--chunks",
    )
    assert code == 0, err
    doc = json.loads(out)
    validate_report(doc)
    run = doc["runs"][0]
    assert run["source"]["kind"] == "model" and run["source"]["format"] == "emulated"
    assert run["source"]["model"]["file"] == "SmolLM2-135M-Instruct.Q4_1.gguf" and run["source"]["model"]["load_ms"] > 0
    assert run["source"]["template"].startswith("built-in emulated")
    assert run["source"]["decode"]["ttft_ms"] > 0 and run["source"]["record"] == str(record)
    assert run["unit"] == "token" and run["timed"] is True
    assert run["finish_reason"] == "tool_calls" and run["calls"][0]["reconstructs"]
    assert run["ttfd"]["streaming"]["ms"] < run["ttfd"]["atomic"]["ms"]
    assert record.exists()


def test_run_mistral_form_flag_forces_the_named_form(capsys):
    argv = ["run", "--demo", "quick", "--format", "mistral", "--mistral-form", "args", "--max-calls", "1",
            "--max-tokens", "64"]
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    run = json.loads(out)["runs"][0]
    assert "[TOOL_CALLS]NAME[ARGS] form" in run["source"]["forced"]
    assert run["finish_reason"] == "tool_calls" and run["calls"][0]["reconstructs"]


def test_run_human_summary_shows_model_template_and_timing(capsys):
    code, out, err = cli(capsys, "run", "--demo", "quick", "--format", "llama3_json", "--max-calls", "1",
                         "--max-tokens", "160")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("model: ") and "93.8 MB" in lines[0] and "loaded in" in lines[0]
    assert lines[1].startswith("template: built-in llama3_json")
    assert lines[2].startswith("format: llama3_json")
    assert "time to first token" in lines[4]
    assert "finish_reason: tool_calls" in out


def test_bench_decode_compares_the_same_tokens(tmp_path):
    from callscope.benchmarks.decode import measure, report_lines

    result = measure(rounds=1, max_tokens=24, format_id="emulated")
    assert result["same_tokens"] is True
    assert result["bare"]["tokens_per_s"] > 0 and result["callscope"]["tokens_per_s"] > 0
    assert result["ratio"] is not None and result["per_token_work_us"]["median"] > 0
    assert any(line.strip().startswith("ratio") for line in report_lines(result))


def test_the_loop_alone_with_a_plain_analyzer(model):
    """Generation is usable without LiveRun (the GUI worker's building block)."""
    prompt = tokenize_prompt(model, "<|im_start|>user\nSay TOOL_CALL<|im_end|>\n<|im_start|>assistant\n")
    grammar = compile_grammar('root ::= "TOOL_CALL {\\"name\\": \\"x\\", \\"arguments\\": {\\"a\\": 1}}"', model.llama)
    analyzer = Analyzer(
        "loop", SourceInfo("model", None, "emulated", "incremental"), "token", True, make_parser("emulated")
    )
    generation = Generation(model, prompt, 64, SamplerSettings(seed=1), grammar)
    for step in generation:
        analyzer.feed_bytes(step.data, step.ms, (step.token,))
    analysis = analyzer.finish(generation.stats.cause)
    assert analysis.calls[0].name == "x" and analysis.calls[0].streamed_arguments == '{"a": 1}'
    assert analysis.finish_reason == "tool_calls"
