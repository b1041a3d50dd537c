"""A shipped recording's description and expected verdict, and whether the shown analysis meets it.

Every file in the fixture library says what it demonstrates (``description``)
and what replaying it must give (``expect``: a trace header's field, a byte-prefix
fixture's ``# @expect`` line). The window shows both next to what it computed,
so a reader knows what a fixture is for and sees at once whether the parser and
policy under inspection still give the documented verdict. Read once per file,
only for display: the strict readers already validated the file when it was opened.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from callscope.engine.analysis.analyzer import Analysis
from callscope.engine.analysis.expectations import ExpectationError, check_verdict, verdicts_by_policy

#: A trace header is one line; a longer first line is not read for display.
HEADER_LIMIT = 1 << 20


@dataclass(frozen=True, slots=True)
class Expected:
    """What the recording says about the shown stream: what it is for, and whether the verdict matches."""

    description: str
    policy: str | None = None  # the policy the expected verdict is for (None: the file has none for it)
    problems: list[str] = field(default_factory=list)  # how the analysis differs from it (empty: it matches)

    @property
    def checked(self) -> bool:
        return self.policy is not None

    @property
    def matches(self) -> bool:
        return self.checked and not self.problems

    @property
    def sentence(self) -> str:
        """``expected verdict (incremental): matches`` or the first difference."""
        if not self.checked:
            return ""
        if not self.problems:
            return f"expected verdict ({self.policy}): matches"
        more = f" (+{len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        return f"expected verdict ({self.policy}): differs: {self.problems[0]}{more}"


@functools.lru_cache(maxsize=32)
def _fixture_expects(path: str) -> dict[str, dict[str, Any] | None]:
    from callscope.engine.recordings.fixture_import import read_fixtures

    try:
        return {f.name: f.expect for f in read_fixtures(path)}
    except (OSError, ValueError):
        return {}


@functools.lru_cache(maxsize=32)
def _trace_expect(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8-sig") as handle:
            header = json.loads(handle.readline(HEADER_LIMIT))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    expect = header.get("expect") if isinstance(header, dict) else None
    return expect if isinstance(expect, dict) else None


def expected_for(analysis: Analysis) -> Expected | None:
    """The recording's description and expected verdict for ``analysis`` (None when it states neither)."""
    source = analysis.source
    description = str(source.extra.get("description") or "")
    expect = None
    if source.path and source.kind == "fixture":
        expect = _fixture_expects(source.path).get(analysis.name)
    elif source.path and source.kind == "trace" and "recorded_format" not in source.extra:
        expect = _trace_expect(source.path)  # a trace re-parsed with another format has no stated verdict
    if not description and not expect:
        return None
    if not expect or analysis.running:
        return Expected(description)
    try:
        verdict = verdicts_by_policy(expect).get(source.policy)
    except ExpectationError:
        return Expected(description)
    if verdict is None:
        return Expected(description)
    return Expected(description, source.policy, check_verdict(analysis, verdict))
