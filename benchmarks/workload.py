"""What the benches feed callscope: one long ``write_file`` call, the classic slow tool call.

Defined once so that the parse, replay and gui benches (and the tests that borrow their
inputs) measure the same kind of call: a file write whose ``content`` grows to kilobytes.
"""

from __future__ import annotations

from typing import Any

WRITE_FILE = "write_file"

#: The request's tools: parameter types let qwen3_coder stream the string value as it is written.
WRITE_FILE_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": WRITE_FILE,
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    }
]

_CODE_LINE = "def handler(event):  # process one event and return its status\n"
_WORDS = "the quick brown fox jumps over the lazy dog while streaming a very long tool call ".split()


def big_arguments(size: int) -> dict[str, Any]:
    """Arguments whose JSON is about ``size`` characters: source code, so the JSON has escapes (``\\n``)."""
    body = (_CODE_LINE * (size // len(_CODE_LINE) + 1))[: max(0, size - 40)]
    return {"path": "/srv/app/handler.py", "content": body}


def filler(length: int) -> str:
    """Deterministic ASCII prose of exactly ``length`` characters (JSON-safe: no escapes, one byte each)."""
    out: list[str] = []
    size = 0
    i = 0
    while size < length:
        word = _WORDS[i % len(_WORDS)] + " "
        out.append(word)
        size += len(word)
        i += 1
    return "".join(out)[:length]


def write_file_text(format_id: str, arguments: dict[str, Any], content: str = "") -> str:
    """The generation of a model that writes ``content`` and then one write_file call, in ``format_id``."""
    from callscope.engine.formats.samples import render

    return render(format_id, [(WRITE_FILE, arguments)], content=content)
