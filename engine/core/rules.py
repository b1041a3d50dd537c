"""The catalogue of violation rules: every way a tool-call stream can break the contract, by stable id.

A :class:`~callscope.engine.core.wire.Violation` names its rule by id; reports, fixtures'
expected verdicts and scripts match on those ids, so they never change. They are listed
here once, each with its meaning and the sources that can raise it, and every place that
raises a violation uses the constants below (a test checks no rule id is spelled out
anywhere else in the engine, and that docs/rules.md's table matches :data:`RULES`).

Sources: ``replay`` is a recording (trace, llama.cpp byte-prefix fixture, raw generation) run
through a parser and a policy; ``run`` is a live model through the same pipeline; ``capture``
is a live server's stream (or its recording) checked by the conformance checker, which sees
what the server sent rather than a policy's output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

REPLAY = "replay"
RUN = "run"
CAPTURE = "capture"
SOURCES = (REPLAY, RUN, CAPTURE)
_KEBAB = re.compile(r"[a-z]+(?:-[a-z]+)+")


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: its stable id, what breaking it means, who raises it, and whether it ends the stream."""

    id: str
    meaning: str
    sources: tuple[str, ...]
    ends_stream: bool = False


#: Every rule by id, in the order docs/rules.md lists them (the policy's rules, then the capture's).
RULES: dict[str, Rule] = {}


def _rule(rule_id: str, meaning: str, *sources: str, ends_stream: bool = False) -> str:
    """Register a rule and return its id (the constant the raising code uses)."""
    assert rule_id not in RULES and sources and set(sources) <= set(SOURCES), rule_id
    RULES[rule_id] = Rule(rule_id, meaning, sources, ends_stream)
    return rule_id


# ---------------------------------------------------------------- what a policy streamed (replay, run)

ARGUMENTS_DIVERGED = _rule(
    "arguments-diverged", "a call's arguments no longer extend what was sent (regressed or rewritten); withheld",
    REPLAY, RUN)
NAME_REVISED = _rule("name-revised", "a call's name changed after its header went out; withheld", REPLAY, RUN)
CALLS_DROPPED = _rule("calls-dropped", "the parse has fewer calls than were already announced; withheld", REPLAY, RUN)
NOT_RECONSTRUCTED = _rule(
    "not-reconstructed", "what went out for a call does not rebuild the final call byte for byte", REPLAY, RUN,
    CAPTURE)
CALL_COUNT_MISMATCH = _rule(
    "call-count-mismatch", "the final parse has more calls than the wire carried", REPLAY, RUN)
UNNAMED_CALL = _rule("unnamed-call", "the final parse has a call without a name, so it is never sent", REPLAY, RUN)
INVALID_JSON_ARGUMENTS = _rule(
    "invalid-json-arguments", "a call's final arguments are not valid JSON", REPLAY, RUN, CAPTURE)
PARSE_ERROR = _rule("parse-error", "the parser threw on a prefix or on the terminal parse", REPLAY, RUN)
CONTENT_DIVERGED = _rule("content-diverged", "content no longer extends what was sent; withheld", REPLAY, RUN)
REASONING_DIVERGED = _rule("reasoning-diverged", "reasoning no longer extends what was sent; withheld", REPLAY, RUN)
INVALID_DIFF = _rule(
    "invalid-diff", "llama.cpp server's diff semantics: a message that does not extend the previous one",
    REPLAY, RUN, ends_stream=True)
STREAM_TRUNCATED = _rule(
    "stream-truncated", "the stream has no proper end: a recording without its end record, or a capture "
    "without a finish chunk or [DONE]", REPLAY, CAPTURE, ends_stream=True)

# ---------------------------------------------------------------- what a server sent (capture)

ID_REPEATED = _rule("id-repeated", "a later fragment of a call carries its id again", CAPTURE)
ID_CHANGED = _rule("id-changed", "a later fragment of a call carries another id", CAPTURE)
NAME_REPEATED = _rule("name-repeated", "a later fragment of a call carries function.name again", CAPTURE)
NAME_FRAGMENTED = _rule(
    "name-fragmented", "a call's function.name arrives in pieces over several chunks (clients that overwrite the "
    "name keep the last piece; the AI SDK makes a call of each piece)", CAPTURE)
ROLE_MISSING = _rule(
    "role-missing", "no chunk of a message with tool calls carried delta.role 'assistant' (openai-node raises, "
    "LangChain JS drops every call)", CAPTURE)
FIELD_NULL = _rule(
    "field-null", "a later fragment of a call sends id, type or function.name as an explicit null instead of "
    "leaving it out (openai-python's stream helper takes the null type and fails; clients that assign fields lose "
    "the name)", CAPTURE)
INDEX_MISSING = _rule("index-missing", "a tool-call delta without an index", CAPTURE)
INDEX_REUSED = _rule("index-reused", "a second call sent on an index already in use", CAPTURE)
DUPLICATED_ARGUMENTS = _rule(
    "duplicated-arguments", "a fragment re-sends arguments already sent (a final flush repeating them)", CAPTURE)
MARKER_IN_CONTENT = _rule("marker-in-content", "tool-call markers or special tokens leaked into delta.content", CAPTURE)
ATOMIC_TOOL_CALL = _rule("atomic-tool-call", "a call's arguments came in one chunk after a long silence", CAPTURE)
FINISH_REASON_MISMATCH = _rule(
    "finish-reason-mismatch", "the finish (finish_reason, stop_reason, status) disagrees with what arrived: "
    "tool_calls without a tool-call delta, tool calls ending in stop, tool_calls on arguments that were cut off",
    CAPTURE)
INVALID_CHUNK_JSON = _rule("invalid-chunk-json", "an event's data that is not a JSON object", CAPTURE)
STREAM_ERROR = _rule("stream-error", "the server sent an error inside the stream", CAPTURE, ends_stream=True)
INDEX_NOT_SEQUENTIAL = _rule(
    "index-not-sequential", "tool-call indices are not 0, 1, 2... in order of first appearance (clients index a "
    "list by them)", CAPTURE)
HEADER_INCOMPLETE = _rule("header-incomplete", "a call's first delta lacks its id, type or function.name", CAPTURE)
CHOICE_INDEX_UNEXPECTED = _rule(
    "choice-index-unexpected", "a choice index other than 0, or beyond the n choices asked for", CAPTURE)
MALFORMED_CHUNK = _rule(
    "malformed-chunk", "a chunk or event of the wrong shape: a field of the wrong JSON type, a negative or huge "
    "index, an unknown finish_reason", CAPTURE)
ARGUMENTS_NOT_STRING = _rule(
    "arguments-not-string", "function.arguments sent as a JSON value, not a string (clients concatenate strings)",
    CAPTURE)
LEGACY_FUNCTION_CALL = _rule(
    "legacy-function-call", "the deprecated delta.function_call was sent (clients reading tool_calls ignore it)",
    CAPTURE)
CLIENT_ERROR = _rule("client-error", "a client profile raised an exception on the stream", CAPTURE)
CLIENT_MISMATCH = _rule(
    "client-mismatch", "a client profile assembled another call (id, name or arguments) than the stream meant",
    CAPTURE)
DELTA_UNANNOUNCED = _rule(
    "delta-unannounced", "argument deltas for an output item or content block that was never announced", CAPTURE)
DELTA_AFTER_DONE = _rule(
    "delta-after-done", "a delta for an output item or content block after it was declared done", CAPTURE)
DONE_MISMATCH = _rule(
    "done-mismatch", "the arguments a .done event (or the finished item) carries differ from the concatenated "
    "deltas", CAPTURE)
PROTOCOL_UNKNOWN = _rule(
    "protocol-unknown", "a stream of a protocol callscope does not read (not chat completions, Responses or "
    "Anthropic Messages)", CAPTURE)

#: Rules after which nothing more arrives: the reconciliation says the stream ended early.
STREAM_ENDERS: tuple[str, ...] = tuple(rule.id for rule in RULES.values() if rule.ends_stream)
#: The rules callscope itself raises (a plug-in's registered rules come after them and can be removed).
BUILTIN_RULES: tuple[str, ...] = tuple(RULES)


def register_rule(rule_id: str, meaning: str, *sources: str) -> str:
    """Make a rule defined outside callscope (a plug-in's reader or policy, a test) known; returns its id.

    Its id must be new and kebab-case; violations of it then validate, and reports, the
    rules table and expected verdicts know it, until :func:`unregister_rule`. (A plug-in's
    rule never ends the stream: that is :data:`STREAM_ENDERS`, fixed.)
    """
    if rule_id in RULES:
        raise ValueError(f"rule {rule_id!r} is already registered")
    if not _KEBAB.fullmatch(rule_id):
        raise ValueError(f"rule id {rule_id!r}: lowercase words joined by -")
    if not sources or not set(sources) <= set(SOURCES):
        raise ValueError(f"rule {rule_id}: name its sources, from {', '.join(SOURCES)}")
    return _rule(rule_id, meaning, *sources)


def unregister_rule(rule_id: str) -> None:
    if rule_id in BUILTIN_RULES:
        raise ValueError(f"rule {rule_id!r} is callscope's own: built-in rules cannot be removed")
    RULES.pop(rule_id, None)


def raised_by(source: str) -> list[Rule]:
    """The rules ``source`` (``replay``, ``run`` or ``capture``) can raise, in catalogue order."""
    return [rule for rule in RULES.values() if source in rule.sources]


def markdown_table() -> str:
    """docs/rules.md's table of the rules (a test checks the doc holds exactly this, so the two never drift)."""
    rows = ["| rule | meaning | raised by |", "| --- | --- | --- |"]
    for rule in RULES.values():
        ends = " (ends the stream)" if rule.ends_stream else ""
        rows.append(f"| `{rule.id}` | {rule.meaning}{ends} | {', '.join(rule.sources)} |")
    return "\n".join(rows)
