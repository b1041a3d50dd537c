"""`callscope template`, and ``--format auto`` with a template in `prompt`, `replay-text` and `run`.

`run` uses the real packaged model: the grammar forces a call in the syntax derived from the template.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from callscope.cli import main
from callscope.engine.core.gguf import default_model_path
from callscope.engine.formats.derived import PREFIX
from tests.support.paths import ROOT

pytestmark = pytest.mark.usefixtures("forget_derived")
DERIVED = ROOT / "tests" / "data" / "templates" / "derived"
WRITTEN = sorted(DERIVED.glob("*.jinja"))
#: A template whose calls no parser reads (Python-style calls): the check must fail.
UNREADABLE = (
    "{%- for m in messages -%}<{{ m.role }}>{{ m.content or '' }}{%- for c in m.tool_calls or [] -%}"
    "CALL {{ c.function.name }}({% for k, v in c.function.arguments.items() %}{{ k }}={{ v }} {% endfor %})"
    "{%- endfor -%}</{{ m.role }}>\n{%- endfor -%}{%- if add_generation_prompt -%}<assistant>{%- endif -%}"
)




def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


# ------------------------------------------------------------------ callscope template


def test_template_prints_the_description_the_evidence_and_the_parser(capsys):
    code, out, err = cli(capsys, "template", DERIVED / "tag_tagged.jinja")
    assert code == 0, err
    assert "parser: derived_tag_tagged (" in out and "derived from the template instead" in out
    assert "derived format: tag + tagged arguments" in out
    assert "key suffix: '\" kind=\"text\">'" in out and "key suffix of non-strings: '\" kind=\"json\">'" in out
    assert "reasoning: <thought> ... </thought> (the generation prompt opens it" in out
    assert '⟦<fn name="⟧«zq_first_fn»' in out  # the rendered call with its markers marked
    assert "check:" not in out  # --check was not asked for (the path may contain "check")


def test_template_check_round_trips_byte_by_byte(capsys):
    code, out, err = cli(capsys, "template", DERIVED / "tag_json.jinja", "--check")
    assert code == 0, err
    assert "check: OK, derived_tag_json read 2 of 2 calls back" in out
    assert "fed byte by byte: '<<calls>><<invoke get_weather #0 id=a1b2c3d4e>>" in out


def test_template_json(capsys):
    code, out, err = cli(capsys, "template", DERIVED / "json_array.jinja", "--check", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["format"] == "derived_json_array" and doc["derived"] is True
    assert doc["analysis"]["description"]["family"] == "json" and doc["analysis"]["description"]["array"] is True
    assert doc["check"]["ok"] and len(doc["check"]["round_trips"]) == 1
    assert doc["check"]["rejected"] and not doc["check"]["rejected"][0]["ok"]
    assert {"kind": "marker", "text": "<|calls|>"} in doc["evidence"]


def test_template_check_fails_when_nothing_reads_the_calls_back(tmp_path, capsys):
    path = tmp_path / "pythonish.jinja"
    path.write_text(UNREADABLE, encoding="utf-8")
    code, out, _ = cli(capsys, "template", path, "--check")
    assert code == 1
    assert "derived format: none" in out and "no format could be derived" in out and "check: FAILED" in out


@pytest.mark.model
def test_template_reads_a_ggufs_own_template_without_weights(capsys):
    code, out, err = cli(capsys, "template", default_model_path())
    assert code == 0, err
    assert "template: gguf:tokenizer.chat_template of SmolLM2-135M-Instruct.Q4_1.gguf" in out
    assert "renders no tool call" in out  # SmolLM2's ChatML template has no tool support
    code, out, _ = cli(capsys, "template", default_model_path(), "--check")
    assert code == 1 and "nothing to round-trip" in out


def _gguf_string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, template: str, tokens: list[str], bos: int, eos: int) -> None:
    """A GGUF v3 file with metadata and no tensors, written by hand (the `gguf` writer is not a dependency)."""
    kvs = [
        _gguf_string("general.architecture") + struct.pack("<I", 8) + _gguf_string("llama"),
        _gguf_string("general.name") + struct.pack("<I", 8) + _gguf_string("Tiny GLM-style test model"),
        _gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, len(tokens))
        + b"".join(_gguf_string(t) for t in tokens),
        _gguf_string("tokenizer.ggml.bos_token_id") + struct.pack("<II", 4, bos),
        _gguf_string("tokenizer.ggml.eos_token_id") + struct.pack("<II", 4, eos),
        _gguf_string("tokenizer.chat_template") + struct.pack("<I", 8) + _gguf_string(template),
    ]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))


def test_template_reads_a_tool_template_out_of_a_gguf_and_round_trips_it(tmp_path, capsys):
    # the GGUF's own template teaches GLM-style calls and starts with the model's bos token: the analysis must
    # read it out of the metadata (no weights), render it with that token, pick glm45 and read its calls back
    glm = (ROOT / "resources" / "templates" / "glm45.jinja").read_text(encoding="utf-8")
    glm = glm.replace("{#- callscope-format: glm45 -#}", "")  # no declaration: the markers must say it
    assert "callscope-format" not in glm
    model = tmp_path / "tiny-glm.gguf"
    write_gguf(model, "{{- bos_token -}}" + glm, ["<unk>", "[gMASK]<sop>", "<|endoftext|>"], bos=1, eos=2)
    code, out, err = cli(capsys, "template", model, "--check")
    assert code == 0, err
    assert "template: gguf:tokenizer.chat_template of tiny-glm.gguf" in out
    assert "parser: glm45 (" in out and "check: OK, glm45 read 2 of 2 calls back" in out
    code, out, err = cli(capsys, "template", model, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["format"] == "glm45" and doc["origin"] == "model" and doc["analysis"]["description"]["family"] == "tag_tagged"
    code, out, err = cli(capsys, "prompt", "--model", model, "--format", "auto", "--prompt", "hi")
    assert code == 0, err
    assert out.startswith("format: glm45 (") and "\n[gMASK]<sop>" in out  # rendered with the GGUF's own bos token


@pytest.mark.parametrize("bad, message", [("missing.jinja", "missing.jinja"), ("broken", "syntax error")])
def test_template_errors_are_one_line(tmp_path, capsys, bad, message):
    path = tmp_path / bad
    if bad == "broken":
        path.write_text("{% for %}", encoding="utf-8")
    code, out, err = cli(capsys, "template", path)
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


# ------------------------------------------------------------------ --format auto elsewhere


def test_prompt_auto_says_which_parser_and_why(capsys):
    code, out, err = cli(capsys, "prompt", "--template", DERIVED / "tag_json.jinja", "--format", "auto")
    assert code == 0, err
    assert out.startswith("format: derived_tag_json (generic") and "derived from the template instead" in out


def test_replay_text_auto_uses_the_templates_parser(tmp_path, capsys):
    generation = tmp_path / "gen.txt"
    generation.write_text('<<calls>><<invoke get_weather #0 id=a1b2c3d4e>> {"city": "Paris"} <</invoke>><</calls>>', encoding="utf-8")
    code, out, err = cli(capsys, "replay-text", generation, "--format", "auto", "--template", DERIVED / "tag_json.jinja", "--json")
    assert code == 0, err
    run = json.loads(out)["runs"][0]
    assert run["source"]["format"] == "derived_tag_json" and "derived from the template" in run["source"]["format_reason"]
    (call,) = run["calls"]
    assert call["name"] == "get_weather" and call["id"] == "a1b2c3d4e" and call["reconstructs"]
    code, out, err = cli(capsys, "replay-text", generation, "--format", "auto", "--template", DERIVED / "tag_json.jinja")
    assert code == 0 and out.startswith("format: derived_tag_json (")


def test_replay_text_auto_needs_a_template(tmp_path, capsys):
    generation = tmp_path / "gen.txt"
    generation.write_text("hello", encoding="utf-8")
    code, _, err = cli(capsys, "replay-text", generation, "--format", "auto")
    assert code == 2 and "--format auto needs --template FILE" in err


@pytest.mark.model
@pytest.mark.parametrize("path", WRITTEN, ids=lambda p: p.stem)
def test_run_forces_a_real_call_in_the_derived_syntax(path, capsys):
    code, out, err = cli(
        capsys, "run", "--template", path, "--format", "auto", "--demo", "quick", "--max-calls", "1",
        "--max-tokens", "96", "--json",
    )
    assert code == 0, err
    run = json.loads(out)["runs"][0]
    assert run["source"]["format"] == f"{PREFIX}{path.stem}"
    assert "derived from the template" in run["source"]["format_reason"]  # auto says which parser and why
    assert run["finish_reason"] == "tool_calls" and run["violations"] == []
    (call,) = run["calls"]
    assert call["reconstructs"] and call["name"] in ("get_weather", "read_file")
    assert isinstance(json.loads(call["final_arguments"]), dict)
