#!/usr/bin/env python3
"""Regenerate the shipped fixture library in ``fixtures/`` (deterministic: same code, same bytes).

Two kinds of recording are written:

* ``fixtures/formats/`` and ``fixtures/cases/``: ``callscope.trace/1`` traces of
  text generations (what a model would write in each wire format), split into
  token-like steps at about 24 tokens per second. They carry bytes, so replay
  runs the real format parser on them.
* ``fixtures/prefix/``: byte-prefix fixture files in the grammar of the
  original llama.cpp fix. They carry *parses*, which is the only way to record
  failure classes a correct parser never produces (regressing arguments, a
  revised name, a shrinking call count, re-minted ids, a parser that throws).

Every recording states, by hand, the verdict replay must give (header
``expect`` / ``# @expect``); ``tests/engine/recordings/test_fixtures_library.py`` replays them all.
The verdicts are written from the rules of the wire contract, not copied from
a run: if a parser or policy changes behaviour, the test says so.

Usage: ``python scripts/make_fixtures.py [--check]`` (``--check``: exit 1 if
the files on disk differ from what this script generates).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from callscope.engine.formats.samples import render  # noqa: E402
from callscope.engine.recordings.trace import Trace, TraceEnd, TraceHeader, TraceStep, write_trace  # noqa: E402

FIXTURES = ROOT / "fixtures"
CREATED = "2025-06-01T00:00:00+00:00"  # fixed, so regenerating gives identical files
RATE = 24.0  # tokens per second, the headline scenario's speed

#: Control tokens of the formats: one token each, as a real tokenizer has them.
SPECIAL_TOKENS = [
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "<|python_tag|>",
    "[TOOL_CALLS]",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁calls▁end｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁sep｜>",
    "<|channel|>",
    "<|message|>",
    "<|end|>",
    "<|start|>",
    "<|call|>",
    "<|return|>",
    "<|constrain|>",
    # ---- JSON families (group 2): each marker is one control token of its model's tokenizer
    "<|tool_call|>",
    "<TOOLCALL>",
    "</TOOLCALL>",
    "<tool_calls>",
    "</tool_calls>",
    "<thinking>",
    "</thinking>",
    "<|tools_prefix|>",
    "<|tools_suffix|>",
    "<|inner_prefix|>",
    "<|inner_suffix|>",
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    "<|python_start|>",
    "<|python_end|>",
    "<|message_sep|>",
    "<|role_sep|>",
    "<|function_call|>",
    "<|think|>",
    "<|begin|>",
    "<|content|>",
    "<|flush|>",
    "<|tool_calls|>",
    "<|tool_call:begin|>",
    "<|tool_call:name|>",
    "<|tool_call:args|>",
    "<|tool_call:end|>",
    "<|calls|>",
    "<|eom_id|>",
    # ---- end of group 2
    # ---- tag families (group 1): each marker is one control token of its model's tokenizer
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<seed:think>",
    "</seed:think>",
    "<seed:tool_call>",
    "</seed:tool_call>",
    "<seed:eos>",
    "<minimax:tool_call>",
    "</minimax:tool_call>",
    "｜DSML｜",
    "<|tool_calls_section_begin|>",
    "<|tool_calls_section_end|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call>",
    "<tool_call|>",
    '<|"|>',
    "<|channel>",
    "<channel|>",
    # ---- end of group 1
]
_TOKEN = re.compile(
    "|".join(re.escape(t) for t in sorted(SPECIAL_TOKENS, key=len, reverse=True))
    + r"| ?[A-Za-z]{1,8}| ?[0-9]{1,3}|\n+|[^\S\n]+|.",
    re.S,
)


def tokenize(text: str) -> list[bytes]:
    """Token-like pieces: control markers whole, words (up to 8 letters) with their leading space, digits by 3."""
    pieces = [m.group(0).encode("utf-8") for m in _TOKEN.finditer(text)]
    assert b"".join(pieces) == text.encode("utf-8"), "tokenizer lost text"
    return pieces


def byte_fallback(text: str) -> list[bytes]:
    """Like :func:`tokenize`, but every non-ASCII character is split into two byte pieces (byte-fallback tokens)."""
    pieces: list[bytes] = []
    for piece in tokenize(text):
        decoded = piece.decode("utf-8")
        if len(decoded) == 1 and len(piece) > 1:
            pieces += [piece[:1], piece[1:]]
        else:
            pieces.append(piece)
    return pieces


# ====================================================================== text traces


WEATHER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a text file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        },
    },
]


def text_trace(
    path: Path,
    text: str,
    format_id: str,
    description: str,
    expect: dict[str, Any],
    pieces: list[bytes] | None = None,
    cause: str = "stop",
    tools: list[dict[str, Any]] | None = None,
    user: str = "",
    template: str | None = None,
) -> None:
    pieces = tokenize(text) if pieces is None else pieces
    assert b"".join(pieces) == text.encode("utf-8")
    steps = [TraceStep(round(k * 1000.0 / RATE, 3), piece) for k, piece in enumerate(pieces, start=1)]
    header = TraceHeader(
        source="text",
        format=format_id,
        template=template,
        tools=tools if tools is not None else WEATHER_TOOLS,
        messages=[{"role": "user", "content": user}] if user else None,
        created=CREATED,
        description=description,
        unit="token",
        expect=expect,
        extra={"generator": "scripts/make_fixtures.py", "rate_tokens_per_s": RATE},
    )
    end_ms = steps[-1].ms if steps else 0.0
    write_trace(path, Trace(header, steps, end=TraceEnd(cause, end_ms)))


WEATHER = ("get_weather", {"city": "Paris", "unit": "celsius"})
READ = ("read_file", {"path": "/etc/hosts"})


def call_expect(*calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"name": name, "reconstructs": True} for name, _ in calls]


def format_traces(folder: Path) -> list[Path]:
    """Every wire format: one call with content before it, and two parallel calls (naming its built-in template)."""
    from callscope.engine.formats import BUILTIN, get_spec

    written = []
    for format_id in BUILTIN:
        template = get_spec(format_id).template
        template = template if isinstance(template, str) else None
        single = render(format_id, [WEATHER], content="Let me check the weather.")
        if format_id == "generic":  # one JSON object: a "response" member, then the call (read in order)
            name, args = WEATHER
            single = json.dumps(
                {"response": "Let me check the weather.", "tool_call": {"name": name, "arguments": args}}
            )
        elif "Let me check" not in single:  # the format's renderer puts no content before calls
            single = "Let me check the weather. " + single
        path = folder / f"{format_id}_single.jsonl"
        text_trace(
            path,
            single,
            format_id,
            f"{format_id}: content, then one get_weather call; the call streams as it is written",
            {
                "finish_reason": "tool_calls",
                "calls": call_expect(WEATHER),
                "violations": [],
                "policies": {
                    "atomic": {"finish_reason": "tool_calls", "calls": call_expect(WEATHER), "violations": []}
                },
            },
            user="What is the weather in Paris?",
            template=template,
        )
        written.append(path)
        parallel = render(format_id, [WEATHER, READ])
        path = folder / f"{format_id}_parallel.jsonl"
        text_trace(
            path,
            parallel,
            format_id,
            f"{format_id}: two parallel calls (get_weather, read_file), indexes 0 and 1",
            {"finish_reason": "tool_calls", "calls": call_expect(WEATHER, READ), "violations": []},
            user="Weather in Paris, and show me /etc/hosts.",
            template=template,
        )
        written.append(path)
    return written


def family_traces(folder: Path) -> list[Path]:
    """Every 2026 call family, written as its own template teaches (the format --format auto picks for it):
    content then one call, and two parallel calls; the header names the template, so a format derived
    from it is derived again when the trace is replayed."""
    from callscope.engine.formats import get_spec
    from callscope.engine.templates.families import FAMILIES
    from callscope.engine.templates.format_choice import choose_format

    written = []
    for family in FAMILIES:
        format_id = choose_format(family.template()).format_id
        write = get_spec(format_id).write
        for kind, calls, content, user in (
            ("single", [WEATHER], "Let me check the weather.", "What is the weather in Paris?"),
            ("parallel", [WEATHER, READ], "", "Weather in Paris, and show me /etc/hosts."),
        ):
            path = folder / f"{family.name}_{kind}.jsonl"
            what = "content, then one get_weather call" if kind == "single" else "two parallel calls, indexes 0 and 1"
            expect = {"finish_reason": "tool_calls", "calls": call_expect(*calls), "violations": []}
            text_trace(
                path,
                write(calls, content, ""),
                format_id,
                f"{family.name} ({family.title}), read by {format_id}: {what}",
                expect,
                user=user,
                template=family.template_name,
            )
            written.append(path)
    return written


def case_traces(folder: Path) -> list[Path]:
    """Failure classes and edge cases a correct parser must get right (text traces)."""
    written = []

    def case(name: str, text: str, description: str, expect: dict[str, Any], **kw: Any) -> None:
        path = folder / f"{name}.jsonl"
        text_trace(path, text, kw.pop("format_id", "hermes"), description, expect, **kw)
        written.append(path)

    cjk = ("search", {"query": "東京の天気 🌧️ 予報"})
    case(
        "multibyte_split_tokens",
        render("hermes", [cjk]),
        "CJK and emoji characters each split across two byte-fallback tokens; the byte prefix is decoded whole",
        {
            "finish_reason": "tool_calls",
            "calls": [{"name": "search", "reconstructs": True, "arguments": json.dumps(cjk[1], ensure_ascii=False)}],
            "violations": [],
        },
        pieces=byte_fallback(render("hermes", [cjk])),
    )
    escapes = (
        '<tool_call>\n{"name": "search", "arguments": {"query": "caf\\u00e9 \\ud83d\\ude00 na\\u00efve"}}\n</tool_call>'
    )
    case(
        "unicode_escapes",
        escapes,
        "\\uXXXX escapes (a surrogate pair included) stay the model's text, byte for byte",
        {
            "finish_reason": "tool_calls",
            "calls": [
                {
                    "name": "search",
                    "reconstructs": True,
                    "arguments": '{"query": "caf\\u00e9 \\ud83d\\ude00 na\\u00efve"}',
                }
            ],
            "violations": [],
        },
    )
    quoted = ("write_file", {"path": "/tmp/a.txt", "content": 'He said "hi"\n\tthen left\\n'})
    case(
        "escaped_quotes_newlines",
        render("hermes", [quoted]),
        "escaped quotes, newlines, tabs and backslashes inside an argument string",
        {
            "finish_reason": "tool_calls",
            "calls": [
                {"name": "write_file", "reconstructs": True, "arguments": json.dumps(quoted[1], ensure_ascii=False)}
            ],
            "violations": [],
        },
    )
    marker = ("write_file", {"path": "/tmp/notes.md", "content": "end a call with </tool_call> then <tool_call> again"})
    case(
        "closing_marker_in_string",
        render("hermes", [marker]),
        "an argument string containing the closing marker's text does not end the call",
        {
            "finish_reason": "tool_calls",
            "calls": [
                {"name": "write_file", "reconstructs": True, "arguments": json.dumps(marker[1], ensure_ascii=False)}
            ],
            "violations": [],
        },
    )
    case(
        "empty_arguments",
        render("hermes", [("list_files", {})]),
        "a call with empty {} arguments",
        {
            "finish_reason": "tool_calls",
            "calls": [{"name": "list_files", "reconstructs": True, "arguments": "{}"}],
            "violations": [],
        },
    )
    nested = (
        "create_event",
        {
            "title": "Sync",
            "when": {"start": "2025-06-01T10:00", "tz": "UTC"},
            "attendees": [{"name": "Ana", "tags": ["x", "y"]}, {"name": "Bo", "tags": []}],
            "remind": [5, 15],
        },
    )
    case(
        "nested_arguments",
        render("hermes", [nested]),
        "nested objects and arrays in the arguments",
        {
            "finish_reason": "tool_calls",
            "calls": [{"name": "create_event", "reconstructs": True, "arguments": json.dumps(nested[1])}],
            "violations": [],
        },
    )
    case(
        "content_only",
        "Paris is sunny today, 24 °C. No tool needed.",
        "a content-only turn: no calls, finish_reason stop",
        {
            "finish_reason": "stop",
            "calls": [],
            "violations": [],
            "content": "Paris is sunny today, 24 °C. No tool needed.",
        },
    )
    think = render("hermes", [WEATHER], reasoning="The user wants the weather, so I call get_weather.")
    case(
        "reasoning_then_call",
        think,
        "reasoning in <think>, then a call; reasoning streams as reasoning_content, never as content",
        {
            "finish_reason": "tool_calls",
            "calls": call_expect(WEATHER),
            "violations": [],
            "reasoning": "The user wants the weather, so I call get_weather.",
            "content": "",
        },
    )
    long_args = (
        "write_file",
        {"path": "/tmp/report.md", "content": "# Report\n\nThe quarterly numbers are in and the"},
    )
    cut = render("hermes", [long_args])
    cut = cut[: cut.index("are in")]
    case(
        "truncated_length",
        cut,
        "generation hit the token limit mid-call (finish cause length): finish_reason length, the call is incomplete",
        {
            "finish_reason": "length",
            "calls": [{"name": "write_file", "reconstructs": True}],
            "violations": ["invalid-json-arguments"],
        },
        cause="length",
    )
    return written


def headline_trace(path: Path) -> Path:
    """One turn whose tool call is 701 tokens long at 24 tok/s: 29 s of silence under atomic."""

    def text_of(body: str) -> str:
        return render("hermes", [("write_file", {"path": "/srv/app/handler.py", "content": body})])

    line = "def handler(event):\n    return process(event, retries=3)\n"
    body = ""
    while len(tokenize(text_of(body + line))) <= 701:
        body += line
    while len(tokenize(text_of(body))) < 701:
        body += "#"  # one token each
    text = text_of(body)
    assert len(tokenize(text)) == 701, len(tokenize(text))
    text_trace(
        path,
        text,
        "hermes",
        "the headline: one 701-token write_file call at 24 tokens/s (29 s). atomic sends nothing for 29 s; "
        "incremental sends the header within the first second and arguments as they are written",
        {
            "finish_reason": "tool_calls",
            "calls": [{"name": "write_file", "reconstructs": True}],
            "violations": [],
            "ttfd_ms_max": 1000,
            "policies": {
                "atomic": {
                    "finish_reason": "tool_calls",
                    "calls": [{"name": "write_file", "reconstructs": True}],
                    "violations": [],
                    "atomic_ttfd_ms_min": 29000,
                }
            },
        },
        tools=[
            {
                "type": "function",
                "function": {
                    "name": "write_file",
                    "parameters": {
                        "type": "object",
                        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                    },
                },
            }
        ],
        user="Rewrite /srv/app/handler.py to retry three times.",
    )
    return path


# ====================================================================== byte-prefix fixtures


@dataclass
class PrefixFixture:
    name: str
    description: str
    expect: dict[str, Any]
    records: list[tuple[int | str, Any]]  # (prefix | "final", calls list | "THROW msg")


def fn(name: str, arguments: str, call_id: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "function", "function": {"name": name, "arguments": arguments}}
    if call_id is not None:
        item = {"id": call_id, **item}
    return item


def grow(generation: str, calls: list[tuple[str, str]]) -> list[tuple[int, list[dict[str, Any]]]]:
    """Records of a correct server parser over growing byte prefixes of a hermes-like ``generation``.

    Each call is (name, arguments text); a call appears once its name is
    complete, and its arguments grow with the prefix. Only changed arrays are kept.
    """
    data = generation.encode("utf-8")
    spans = []
    for name, arguments in calls:
        name_end = data.index(f'"{name}"'.encode()) + len(name) + 2
        args_at = data.index(arguments.encode(), name_end)
        spans.append((name, arguments.encode(), name_end, args_at))
    records: list[tuple[int, list[dict[str, Any]]]] = []
    previous: list[dict[str, Any]] = []
    for prefix in range(1, len(data) + 1):
        now = []
        for name, arguments, name_end, args_at in spans:
            if prefix < name_end:
                break
            text = arguments[: max(0, prefix - args_at)]
            try:
                now.append(fn(name, text.decode("utf-8")))
            except UnicodeDecodeError:
                now.append(previous[len(now)] if len(previous) > len(now) else fn(name, ""))
        if now != previous:
            records.append((prefix, now))
            previous = now
    return records


def hermes_generation(calls: list[tuple[str, str]]) -> str:
    return "".join(
        f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>' for name, arguments in calls
    )


def prefix_fixtures() -> dict[str, list[PrefixFixture]]:
    files: dict[str, list[PrefixFixture]] = {}

    # -- the original fix's fixtures: a single call and parallel calls, append-only
    single = [("read_file", '{"path": "/etc/hosts"}')]
    parallel = [("get_weather", '{"city": "Paris"}'), ("read_file", '{"path": "/etc/hosts"}')]
    ok_single = {
        "finish_reason": "tool_calls",
        "calls": [{"name": "read_file", "reconstructs": True}],
        "violations": [],
    }
    ok_parallel = {
        "finish_reason": "tool_calls",
        "calls": [{"name": "get_weather", "reconstructs": True}, {"name": "read_file", "reconstructs": True}],
        "violations": [],
    }
    files["llama_server_fix.txt"] = [
        PrefixFixture(
            "single_call",
            "one call over growing byte prefixes, as the server's streaming test records it",
            {**ok_single, "policies": {"llama_server": ok_single, "atomic": ok_single}},
            grow(hermes_generation(single), single) + [("final", [fn(n, a) for n, a in single])],
        ),
        PrefixFixture(
            "parallel_calls",
            "two parallel calls; index 1 opens after index 0 is complete",
            {**ok_parallel, "policies": {"llama_server": ok_parallel, "atomic": ok_parallel}},
            grow(hermes_generation(parallel), parallel) + [("final", [fn(n, a) for n, a in parallel])],
        ),
    ]

    # -- arguments that regress: Python-style True shown raw, then normalised to true
    raw = '{"recursive": True, "path": "/tmp"}'
    fixed = '{"recursive": true, "path": "/tmp"}'
    start = len('<tool_call>\n{"name": "list_dir", "arguments": ')
    records: list[tuple[int | str, Any]] = [(start - 2, [fn("list_dir", "")])]
    cut = raw.index("True") + 4
    for k in range(1, cut + 1):  # raw text up to ...True
        records.append((start + k, [fn("list_dir", raw[:k])]))
    for k in range(cut + 1, len(fixed) + 1):  # the parser now re-serialises the parsed value
        records.append((start + k, [fn("list_dir", fixed[:k])]))
    records.append(("final", [fn("list_dir", fixed)]))
    regress_incremental = {
        "finish_reason": "stop",
        "calls": [{"name": "list_dir", "reconstructs": False, "arguments": fixed}],
        "violations": ["arguments-diverged", "not-reconstructed"],
    }
    files["arguments_regress.txt"] = [
        PrefixFixture(
            "python_true",
            "arguments regress: the parser shows the model's Python-style True, then rewrites it as true; "
            "incremental withholds from the divergence and does not claim tool_calls, llama_server errors out (Invalid diff)",
            {
                **regress_incremental,
                "policies": {
                    "llama_server": {"finish_reason": None, "violations": ["invalid-diff"]},
                    "atomic": {
                        "finish_reason": "tool_calls",
                        "calls": [{"name": "list_dir", "reconstructs": True}],
                        "violations": [],
                    },
                },
            },
            records,
        )
    ]

    # -- a name revised after the header went out
    files["name_revised.txt"] = [
        PrefixFixture(
            "name_revised",
            "the parser reported the name 'read' as complete, then 'read_file': the header already carried 'read'",
            {
                "finish_reason": "stop",
                "calls": [{"name": "read", "reconstructs": False}],
                "violations": ["name-revised", "not-reconstructed"],
                "policies": {"llama_server": {"finish_reason": None, "violations": ["invalid-diff"]}},
            },
            [
                (22, [fn("read", "")]),
                (27, [fn("read_file", "")]),
                (44, [fn("read_file", '{"path": "/')]),
                (54, [fn("read_file", '{"path": "/etc/hosts"')]),
                ("final", [fn("read_file", '{"path": "/etc/hosts"}')]),
            ],
        )
    ]

    # -- the call count shrinks: a second call was a false alarm
    files["calls_shrink.txt"] = [
        PrefixFixture(
            "calls_shrink",
            "the parser saw a second call inside an argument string, then dropped it: the client already got its header",
            {
                "finish_reason": "stop",
                "calls": [{"name": "write_file", "reconstructs": True}, {"name": "read_file", "reconstructs": False}],
                "violations": ["calls-dropped", "not-reconstructed"],
                "policies": {"llama_server": {"finish_reason": None, "violations": ["invalid-diff"]}},
            },
            [
                (40, [fn("write_file", '{"content": "')]),
                (60, [fn("write_file", '{"content": "'), fn("read_file", "")]),
                (75, [fn("write_file", '{"content": "<tool_call>{\\"name\\": \\"read_file\\"')]),
                (90, [fn("write_file", '{"content": "<tool_call>{\\"name\\": \\"read_file\\"}"}')]),
                ("final", [fn("write_file", '{"content": "<tool_call>{\\"name\\": \\"read_file\\"}"}')]),
            ],
        )
    ]

    # -- a call seen only at the terminal parse
    files["terminal_only.txt"] = [
        PrefixFixture(
            "terminal_only",
            "no partial parse showed the call; it appears only at the terminal parse and is still delivered whole",
            {"finish_reason": "tool_calls", "calls": [{"name": "get_weather", "reconstructs": True}], "violations": []},
            [(1, []), ("final", [fn("get_weather", '{"city": "Paris"}')])],
        )
    ]

    # -- an unnamed call holds back a later, named one
    files["unnamed_holds_back.txt"] = [
        PrefixFixture(
            "unnamed_first",
            "call 0 has no name yet while call 1 is named: neither may go out before call 0 is named",
            {
                "finish_reason": "tool_calls",
                "calls": [{"name": "search", "reconstructs": True}, {"name": "open_url", "reconstructs": True}],
                "violations": [],
            },
            [
                (30, [fn("", '{"q": "ca')]),
                (48, [fn("", '{"q": "cats"}'), fn("open_url", '{"url": "')]),
                (70, [fn("", '{"q": "cats"}'), fn("open_url", '{"url": "https://x.org"}')]),
                (80, [fn("search", '{"q": "cats"}'), fn("open_url", '{"url": "https://x.org"}')]),
                ("final", [fn("search", '{"q": "cats"}'), fn("open_url", '{"url": "https://x.org"}')]),
            ],
        )
    ]

    # -- parser ids re-minted every parse
    args = '{"city": "Paris"}'
    minted = []
    for i, k in enumerate(range(2, len(args) + 1, 3)):
        minted.append((40 + k, [fn("get_weather", args[:k], f"call_{i:02d}{'abcdefghij'[i % 10] * 6}")]))
    minted.append(("final", [fn("get_weather", args, "call_final999")]))
    files["ids_reminted.txt"] = [
        PrefixFixture(
            "ids_reminted",
            "the parser mints a new id on every parse: incremental keeps the first one; llama_server re-sends id and name",
            {
                "finish_reason": "tool_calls",
                "calls": [{"name": "get_weather", "reconstructs": True}],
                "violations": [],
                "policies": {"llama_server": {"finish_reason": "tool_calls", "violations": []}},
            },
            minted,
        )
    ]

    # -- the parser throws
    files["parser_throws.txt"] = [
        PrefixFixture(
            "throws_midway",
            "the parser threw on one prefix and recovered on the next: a parse-error at that step, nothing lost",
            {
                "finish_reason": "tool_calls",
                "calls": [{"name": "read_file", "reconstructs": True}],
                "violations": ["parse-error"],
            },
            [
                (30, [fn("read_file", "")]),
                (33, [fn("read_file", '{"pa')]),
                (36, "THROW [json.exception.parse_error.101] syntax error while parsing object key"),
                (45, [fn("read_file", '{"path": "/et')]),
                ("final", [fn("read_file", '{"path": "/etc/hosts"}')]),
            ],
        ),
        PrefixFixture(
            "throws_at_end",
            "the terminal parse throws: reported as a parse-error; the turn cannot end with tool_calls "
            "(the last successful partial parse stands in for the terminal one)",
            # The last parse that succeeded stands in for the terminal one: its arguments are not valid JSON.
            {
                "finish_reason": None,
                "calls": [{"name": "read_file", "reconstructs": True}],
                "violations": ["parse-error", "invalid-json-arguments"],
            },
            [
                (30, [fn("read_file", "")]),
                (45, [fn("read_file", '{"path": "/et')]),
                ("final", "THROW Failed to parse tool call arguments as JSON"),
            ],
        ),
    ]
    return files


def write_prefix_file(path: Path, fixtures: list[PrefixFixture]) -> None:
    lines = [
        "# byte-prefix fixture (llama.cpp streaming-fix grammar): <fixture_name> <prefix length|final> <calls JSON|THROW msg>",
        "# generated by scripts/make_fixtures.py; '# @description' and '# @expect' lines are callscope's verdicts",
    ]
    for fixture in fixtures:
        lines.append("")
        lines.append(f"# @description {fixture.name} {fixture.description}")
        lines.append(f"# @expect {fixture.name} {json.dumps(fixture.expect, separators=(',', ':'))}")
        for marker, payload in fixture.records:
            body = (
                payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
            )
            lines.append(f"{fixture.name} {marker} {body}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# ====================================================================== main


def generate(root: Path) -> list[Path]:
    for sub in ("formats", "cases", "prefix", "families"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    written = format_traces(root / "formats") + case_traces(root / "cases") + family_traces(root / "families")
    written.append(headline_trace(root / "headline_701_tokens.jsonl"))
    for name, fixtures in prefix_fixtures().items():
        path = root / "prefix" / name
        write_prefix_file(path, fixtures)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with fixtures/ instead of writing")
    parser.add_argument("--out", type=Path, default=FIXTURES, help="output folder (default fixtures/)")
    args = parser.parse_args(argv)
    if not args.check:
        for path in generate(args.out):
            print(path.relative_to(args.out))
        return 0
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        fresh = generate(Path(tmp))
        stale = [
            p.relative_to(tmp)
            for p in fresh
            if not (args.out / p.relative_to(tmp)).exists()
            or (args.out / p.relative_to(tmp)).read_bytes() != p.read_bytes()
        ]
    for p in stale:
        print(f"out of date: {p}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
