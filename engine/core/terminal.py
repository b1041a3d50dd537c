"""Text from a request, a server or a file, made safe for one line of a terminal.

A model name, a tool name, an error page or a template's output is chosen by
whoever sent it. Printed raw, a newline in it forges a line of callscope's own
output, and an escape sequence reaches the terminal (it can retitle the
window, hide text, move the cursor). Every line callscope builds from such
text goes through :func:`terminal_line`, so it stays one line and shows every
control character as an escape a person can read (``\\n``, ``\\x1b``,
``\\u202e``). :func:`terminal_json` does the same to a JSON line without
changing what it means: JSON escapes the C0 controls itself, but not DEL, the
C1 controls (``\\x9b`` is an 8-bit CSI), the Unicode line separators or the
bidirectional overrides.
"""

from __future__ import annotations

import re

#: C0 (tab included), DEL, C1, the Unicode line and paragraph separators, and the bidirectional controls.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: What JSON leaves raw inside a string (it escapes C0 itself).
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_line(text: str) -> str:
    """``text`` as one terminal line: every control character shown as an escape, nothing else changed."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def terminal_lines(text: str) -> str:
    """Each line of ``text`` made safe (a multi-line report whose newlines are its own)."""
    return "\n".join(terminal_line(line) for line in text.split("\n"))


def terminal_json(line: str) -> str:
    """A JSON document's text with the controls JSON leaves raw written as ``\\uXXXX`` (the same value)."""
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", line) if _UNSAFE_IN_JSON.search(line) else line


__all__ = ["terminal_json", "terminal_line", "terminal_lines"]
