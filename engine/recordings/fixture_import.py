"""The byte-prefix fixtures of llama.cpp's streaming fix, read as a first-class source.

The server records ``common_chat_parse(prefix, is_partial=true)`` over growing
byte prefixes of a generation, one line per prefix whose parsed call array
changed, ending each named fixture with the terminal ``is_partial=false`` parse::

    # comment
    single_call 17 [{"type":"function","function":{"name":"read_file","arguments":"{\\"path\\":\\"/"}}]
    single_call 40 THROW expected value at position 12
    single_call final [{"type":"function","function":{"name":"read_file","arguments":"{\\"path\\":\\"/a\\"}"}}]

Each trimmed line is ``<fixture_name> <marker> <payload>`` split on the first
two spaces; ``<marker>`` is a decimal byte-prefix length or ``final``;
``<payload>`` is a compact JSON array of OpenAI-shaped calls (an ``id`` is
accepted too, for fixtures of parsers that re-mint ids) or ``THROW <message>``.
As an extension, the payload may also be an assistant message object
``{"content": ..., "reasoning_content": ..., "tool_calls": [...]}``.

Two comment directives (ignored by any other reader of the format) let the
shipped library state what each fixture means and what verdict it must get::

    # @description single_call one call, streamed as the path is written
    # @expect single_call {"finish_reason": "tool_calls", "calls": [{"name": "read_file", "reconstructs": true}]}

These files carry parses, not text: replay feeds them straight to the policy
(format null, unit ``byte``, a step is the recorded prefix length). A ``THROW``
becomes a ``parse-error`` violation at its step. Nothing in a file is executed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from callscope.engine.analysis.analyzer import Analysis, Analyzer, SourceInfo
from callscope.engine.core import rules
from callscope.engine.core.files import read_utf8
from callscope.engine.core.json_text import JSONLimitError, loads
from callscope.engine.core.parse_model import Parse, ParsedCall, ParseFailed
from callscope.engine.core.wire import Violation
from callscope.engine.recordings.trace import TraceError

FINAL = "final"
THROW = "THROW"
#: Longest byte-prefix length read: 18 digits is an exabyte, far past any generation, and keeps
#: ``int()`` clear of Python's 4,300-digit conversion limit.
MAX_PREFIX_DIGITS = 18
_RECORD = re.compile(r"^\S+ (?:\d+|final) \S")


class FixtureError(TraceError):
    """A malformed fixture file; the message names ``file:line`` and what was expected."""


@dataclass(frozen=True, slots=True)
class FixtureRecord:
    """One recorded parse: at byte prefix ``prefix`` (None for the terminal parse)."""

    line: int
    prefix: int | None
    parse: Parse | ParseFailed

    @property
    def final(self) -> bool:
        return self.prefix is None


@dataclass(slots=True)
class Fixture:
    """One named fixture: its recorded parses in order, ending (normally) with the terminal one."""

    name: str
    path: str | None = None
    records: list[FixtureRecord] = field(default_factory=list)
    description: str = ""
    expect: dict[str, Any] | None = None

    @property
    def final(self) -> FixtureRecord | None:
        return self.records[-1] if self.records and self.records[-1].final else None

    @property
    def partial_records(self) -> list[FixtureRecord]:
        return [r for r in self.records if not r.final]


# ====================================================================== reading


def looks_like_fixture(text: str) -> bool:
    """True if the first line that is neither blank nor a comment is a fixture record."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        return bool(_RECORD.match(line))
    return False


def read_fixtures(path: str | os.PathLike[str]) -> list[Fixture]:
    return parse_fixtures(read_utf8(path, FixtureError, "a fixture text file"), str(path))


def parse_fixtures(text: str, origin: str = "<fixture>") -> list[Fixture]:
    """Every named fixture in ``text``, in order of first appearance."""
    fixtures: dict[str, Fixture] = {}
    directives: list[tuple[str, str, str, str]] = []  # (where, kind, name, value)
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        where = f"{origin}:{number}"
        if not line:
            continue
        if line.startswith("#"):
            directive = _directive(line, where)
            if directive is not None:
                directives.append((where, *directive))
            continue
        parts = line.split(" ", 2)
        if len(parts) < 3 or not parts[2].strip():
            raise FixtureError(
                f"{where}: expected '<fixture_name> <byte-prefix length|final> <JSON call array|THROW message>', "
                f"got {_clip(line)!r}"
            )
        fixture_name, marker, payload = parts[0], parts[1], parts[2].strip()
        fixture = fixtures.setdefault(fixture_name, Fixture(fixture_name, origin))
        prefix = _marker(marker, where)
        _check_order(fixture, prefix, where)
        fixture.records.append(FixtureRecord(number, prefix, _payload(payload, where)))
    if not fixtures:
        raise FixtureError(f"{origin}: no fixture records; expected lines '<fixture_name> <marker> <payload>'")
    for where, kind, fixture_name, value in directives:
        fixture = fixtures.get(fixture_name)
        if fixture is None:
            raise FixtureError(f"{where}: @{kind} names fixture {fixture_name!r}, which has no records in this file")
        if kind == "description":
            fixture.description = value
        else:
            fixture.expect = _expect(value, where)
    return list(fixtures.values())


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _directive(line: str, where: str) -> tuple[str, str, str] | None:
    body = line[1:].strip()
    for kind in ("description", "expect"):
        if body.startswith(f"@{kind} ") or body == f"@{kind}":
            parts = body.split(None, 2)
            if len(parts) < 3:
                raise FixtureError(
                    f"{where}: expected '# @{kind} <fixture_name> <{'text' if kind == 'description' else 'JSON object'}>'"
                )
            return kind, parts[1], parts[2].strip()
    return None


def _expect(value: str, where: str) -> dict[str, Any]:
    try:
        expect = loads(value)
    except ValueError as exc:
        raise FixtureError(f"{where}: @expect takes a JSON object ({exc})") from None
    if not isinstance(expect, dict):
        raise FixtureError(f"{where}: @expect takes a JSON object, got {type(expect).__name__}")
    return expect


def _marker(marker: str, where: str) -> int | None:
    if marker == FINAL:
        return None
    if not marker.isdecimal() or not marker.isascii():
        raise FixtureError(f"{where}: expected a decimal byte-prefix length or 'final' as the marker, got {_clip(marker)!r}")
    if len(marker.lstrip("0")) > MAX_PREFIX_DIGITS:
        raise FixtureError(
            f"{where}: byte-prefix length of {len(marker):,} digits; a prefix of a generation is at most "
            f"{MAX_PREFIX_DIGITS} digits long"
        )
    return int(marker)


def _check_order(fixture: Fixture, prefix: int | None, where: str) -> None:
    if fixture.final is not None:
        raise FixtureError(
            f"{where}: fixture {fixture.name!r} already ended with its final line (line {fixture.final.line}); "
            "expected no more records for it"
        )
    previous = fixture.partial_records[-1].prefix if fixture.partial_records else None
    if prefix is not None and previous is not None and prefix <= previous:
        raise FixtureError(
            f"{where}: byte prefix {prefix} of fixture {fixture.name!r} does not grow "
            f"(previous record was prefix {previous}); expected increasing prefixes"
        )


def _payload(payload: str, where: str) -> Parse | ParseFailed:
    if payload == THROW or payload.startswith(THROW + " "):
        return ParseFailed(payload[len(THROW) :].strip() or "parser threw")
    try:
        doc = loads(payload)
    except JSONLimitError as exc:
        raise FixtureError(f"{where}: payload is JSON past what callscope reads ({exc})") from None
    except ValueError as exc:
        raise FixtureError(f"{where}: payload is neither a JSON call array nor 'THROW <message>' ({exc})") from None
    if isinstance(doc, list):
        return Parse(calls=_calls(doc, where), partial=True)
    if isinstance(doc, dict):
        return _message(doc, where)
    raise FixtureError(
        f"{where}: payload must be a JSON array of calls (or 'THROW <message>'), got {type(doc).__name__}"
    )


def _message(doc: dict[str, Any], where: str) -> Parse:
    content = doc.get("content") or ""
    reasoning = doc.get("reasoning_content") or ""
    if not isinstance(content, str) or not isinstance(reasoning, str):
        raise FixtureError(f'{where}: message payload "content" and "reasoning_content" must be strings')
    calls = doc.get("tool_calls") or []
    if not isinstance(calls, list):
        raise FixtureError(f'{where}: message payload "tool_calls" must be an array')
    return Parse(content, reasoning, _calls(calls, where), partial=True)


def _calls(items: list[Any], where: str) -> tuple[ParsedCall, ...]:
    calls = []
    for i, item in enumerate(items):
        here = f"{where}: call [{i}]"
        if not isinstance(item, dict):
            raise FixtureError(f'{here}: expected an object like {{"type":"function","function":{{...}}}}')
        if item.get("type", "function") != "function":
            raise FixtureError(f'{here}: "type" must be "function", got {item.get("type")!r}')
        fn = item.get("function")
        if not isinstance(fn, dict):
            raise FixtureError(f'{here}: expected "function": {{"name": ..., "arguments": ...}}')
        name = fn.get("name")
        if name is not None and not isinstance(name, str):
            raise FixtureError(f'{here}: "function.name" must be a string')
        arguments = fn.get("arguments", "")
        if arguments is None:
            arguments = ""
        if not isinstance(arguments, str):
            raise FixtureError(f'{here}: "function.arguments" must be a string of JSON text')
        call_id = item.get("id")
        if call_id is not None and not isinstance(call_id, str):
            raise FixtureError(f'{here}: "id" must be a string')
        # The server's partial parse writes "" for a name not fully generated yet.
        calls.append(ParsedCall(name or None, arguments, call_id or None))
    return tuple(calls)


# ====================================================================== replaying


def analyze_fixture(fixture: Fixture, policy: str = "incremental") -> Analysis:
    """Feed the recorded parses to ``policy``; step = byte-prefix length; THROW = parse-error."""
    extra: dict[str, Any] = {"fixture": fixture.name}
    if fixture.description:
        extra["description"] = fixture.description
    analyzer = Analyzer(fixture.name, SourceInfo("fixture", fixture.path, None, policy, extra), "byte", False, None)
    last_good = Parse()
    for record in fixture.partial_records:
        analyzer.feed_parse(record.parse, None, step=record.prefix)
        if isinstance(record.parse, Parse):
            last_good = record.parse
    final = fixture.final
    if final is None:
        return analyzer.finish("error", terminal=last_good, truncated=True)
    if isinstance(final.parse, ParseFailed):
        step = fixture.partial_records[-1].prefix if fixture.partial_records else None
        thrown = Violation(rules.PARSE_ERROR, step, f"parser threw on the terminal parse: {final.parse.message}")
        return analyzer.finish("error", terminal=last_good, extra_violations=[thrown])
    return analyzer.finish("stop", terminal=final.parse)
