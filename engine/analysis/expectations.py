"""Expected verdicts of shipped recordings, and how an analysis is checked against one.

Every file in ``fixtures/`` states what replaying it must give (in a trace's
header ``expect``, or a fixture's ``# @expect`` line), so that a parser or
policy change that alters a verdict fails CI instead of silently changing what
the library demonstrates. An expectation is a JSON object::

    {"finish_reason": "tool_calls",
     "calls": [{"name": "read_file", "reconstructs": true, "arguments": "{\\"path\\": \\"/a\\"}"}],
     "violations": [],                 # the set of rule ids, order and count ignored
     "content": "Let me look.",        # optional: terminal content
     "reasoning": "...",               # optional: terminal reasoning
     "truncated": false,               # optional
     "ttfd_ms_max": 1000,              # optional: first streamed tool-call delta no later than this
     "atomic_ttfd_ms_min": 29000,      # optional: the atomic baseline no sooner than this
     "policies": {"atomic": {...}, "llama_server": {...}}}

Top-level keys describe the ``incremental`` policy (or the one named by
``"policy"``); ``policies`` adds verdicts for other policies.
"""

from __future__ import annotations

from typing import Any

from callscope.engine.analysis.analyzer import Analysis

DEFAULT_POLICY = "incremental"
VERDICT_KEYS = frozenset(
    {"finish_reason", "calls", "violations", "content", "reasoning", "truncated", "ttfd_ms_max", "atomic_ttfd_ms_min"}
)
CALL_KEYS = frozenset({"name", "reconstructs", "arguments", "streamed_arguments"})


class ExpectationError(ValueError):
    """An ``expect`` object that is itself malformed."""


def verdicts_by_policy(expect: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{policy_id: verdict}`` from an ``expect`` object (validated)."""
    expect = dict(expect)
    others = expect.pop("policies", {}) or {}
    policy = expect.pop("policy", DEFAULT_POLICY)
    if not isinstance(others, dict):
        raise ExpectationError('"policies" must map policy ids to verdict objects')
    verdicts = {policy: expect}
    verdicts.update(others)
    for policy_id, verdict in verdicts.items():
        if not isinstance(verdict, dict):
            raise ExpectationError(f"verdict for {policy_id!r} must be an object")
        unknown = set(verdict) - VERDICT_KEYS
        if unknown:
            raise ExpectationError(f"verdict for {policy_id!r} has unknown keys: {', '.join(sorted(unknown))}")
        for call in verdict.get("calls", []):
            if not isinstance(call, dict) or set(call) - CALL_KEYS:
                raise ExpectationError(
                    f"verdict for {policy_id!r}: each call is an object with keys {sorted(CALL_KEYS)}"
                )
    return verdicts


def check_verdict(analysis: Analysis, verdict: dict[str, Any]) -> list[str]:
    """Every way ``analysis`` differs from ``verdict``; empty when it matches."""
    problems: list[str] = []

    def differ(what: str, expected: Any, got: Any) -> None:
        if expected != got:
            problems.append(f"{what}: expected {expected!r}, got {got!r}")

    if "finish_reason" in verdict:
        differ("finish_reason", verdict["finish_reason"], analysis.finish_reason)
    if "violations" in verdict:
        differ("violations", sorted(set(verdict["violations"])), sorted({v.rule for v in analysis.violations}))
    if "truncated" in verdict:
        differ("truncated", verdict["truncated"], analysis.truncated)
    if "content" in verdict:
        differ("content", verdict["content"], analysis.terminal.content)
    if "reasoning" in verdict:
        differ("reasoning", verdict["reasoning"], analysis.terminal.reasoning)
    if "calls" in verdict:
        expected_calls = verdict["calls"]
        differ("number of calls on the wire", len(expected_calls), len(analysis.calls))
        for index, (want, got) in enumerate(zip(expected_calls, analysis.calls, strict=False)):
            if "name" in want:
                differ(f"call {index} name", want["name"], got.name)
            if "reconstructs" in want:
                differ(f"call {index} reconstructs", want["reconstructs"], got.reconstructs)
            if "arguments" in want:
                differ(f"call {index} final arguments", want["arguments"], got.final_arguments)
            if "streamed_arguments" in want:
                differ(f"call {index} streamed arguments", want["streamed_arguments"], got.streamed_arguments)
    if "ttfd_ms_max" in verdict:
        ms = analysis.ttfd_streaming.ms
        if ms is None or ms > verdict["ttfd_ms_max"]:
            problems.append(f"first tool-call delta: expected by {verdict['ttfd_ms_max']} ms, got {ms!r}")
    if "atomic_ttfd_ms_min" in verdict:
        ms = analysis.ttfd_atomic.ms
        if ms is None or ms < verdict["atomic_ttfd_ms_min"]:
            problems.append(
                f"atomic first tool-call delta: expected at {verdict['atomic_ttfd_ms_min']} ms or later, got {ms!r}"
            )
    return problems
