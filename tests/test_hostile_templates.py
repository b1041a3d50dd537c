"""Hostile chat templates and GGUFs: each renders or fails with one line, within the time and memory bound.

A chat template is untrusted input (a ``.jinja`` from the web, a ``tokenizer_config.json``, a GGUF's
own): Jinja's sandbox blocks escapes but bounds neither time nor memory. Every case goes through the
real CLI (``callscope.cli.main``, in-process; the renders run in the real worker process) and checks
what a person sees: exit 2, nothing on stdout, one line on stderr, in well under the bound.
"""

from __future__ import annotations

import struct
import time
from pathlib import Path

import pytest

from callscope.cli import main


def cli(capsys, *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def refused(capsys, *argv: object) -> str:
    """Run the CLI; assert exit 2, nothing on stdout and exactly one line on stderr; return that line."""
    code, out, err = cli(capsys, *argv)
    assert code == 2, (code, out[:300], err[-1500:])
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err[-1500:]
    assert "Traceback" not in err
    return err


# ------------------------------------------------------------------ GGUF metadata


def _string(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def _gguf(path: Path, *kvs: bytes) -> Path:
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs)) + b"".join(kvs))
    return path


def test_a_gguf_with_100000_nested_array_headers_is_one_line(tmp_path, capsys):
    # an array of one array of one array ... 100,000 deep: read recursively, it was a RecursionError traceback
    nested = struct.pack("<IQ", 9, 1) * 100_000 + struct.pack("<IQ", 0, 0)
    model = _gguf(tmp_path / "nested.gguf", _string("general.nested") + struct.pack("<I", 9) + nested,
                  _string("tokenizer.chat_template") + struct.pack("<I", 8) + _string("{{ messages }}"))
    began = time.monotonic()
    line = refused(capsys, "template", model)
    assert "nested.gguf" in line and "arrays nested more than 8 deep" in line, line
    assert time.monotonic() - began < 5
    assert "arrays nested" in refused(capsys, "prompt", "--model", model, "--prompt", "hi")


def test_a_gguf_with_millions_of_tiny_array_items_fails_fast(tmp_path, capsys):
    # 5 million empty strings (8 bytes each) were read one by one (2.4 s here), and every key could hold as many
    items = struct.pack("<IQ", 8, 5_000_000) + b"\0" * 8 * 5_000_000
    model = _gguf(tmp_path / "many.gguf", _string("general.many") + struct.pack("<I", 9) + items)
    began = time.monotonic()
    line = refused(capsys, "template", model)
    assert "many.gguf" in line and "array items" in line, line
    assert time.monotonic() - began < 5

