"""Checks every format parser must pass, shared by the per-format tests.

``check_stream(format_id, text, splits, tools)`` feeds ``text`` in the given
pieces and asserts the parser rules: incremental equals from-scratch on every
prefix, names appear only complete, arguments only grow (no CallRevised), no
marker text reaches content, and argument fragments concatenate to the
terminal arguments. Returns the terminal Parse for further assertions.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from callscope.engine.core.parse_model import ArgumentsAppended, CallNamed, CallRevised, Parse
from callscope.engine.formats import make_parser


def feed_all(format_id: str, text: str, tools=None, thinking=False) -> Parse:
    parser = make_parser(format_id, tools, thinking)
    parser.feed(text)
    parser.finish()
    return parser.snapshot()


def partial_of(format_id: str, prefix: str, tools=None, thinking=False) -> Parse:
    parser = make_parser(format_id, tools, thinking)
    parser.feed(prefix)
    return parser.snapshot()


def pieces_by(text: str, cuts: list[int]) -> list[str]:
    bounds = [0] + sorted(set(c for c in cuts if 0 < c < len(text))) + [len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:])]


def check_stream(
    format_id: str,
    text: str,
    pieces: list[str] | None = None,
    tools=None,
    markers: tuple[str, ...] = (),
    compare_scratch: bool = True,
    thinking: bool | str = False,
) -> Parse:
    pieces = pieces if pieces is not None else list(text)
    assert "".join(pieces) == text
    parser = make_parser(format_id, tools, thinking)
    fragments: dict[int, list[str]] = {}
    names: dict[int, str] = {}
    prefix = ""
    for piece in pieces:
        prefix += piece
        events = parser.feed(piece)
        for e in events:
            assert not isinstance(e, CallRevised), f"revision at prefix {prefix!r}: {e}"
            if isinstance(e, CallNamed):
                assert e.index not in names, f"name announced twice: {e}"
                names[e.index] = e.name
            if isinstance(e, ArgumentsAppended):
                fragments.setdefault(e.index, []).append(e.text)
        snap = parser.snapshot()
        for marker in markers:
            assert marker not in snap.content, f"marker {marker!r} leaked into content at prefix {prefix!r}"
            # no half-typed marker at the end of content either
            for k in range(1, len(marker)):
                if snap.content.endswith(marker[:k]) and not text.replace(marker, "").count(marker[:k]):
                    raise AssertionError(f"partial marker {marker[:k]!r} in content at prefix {prefix!r}")
        if compare_scratch:
            scratch = partial_of(format_id, prefix, tools, thinking)
            assert scratch == snap, f"incremental != from-scratch at prefix {prefix!r}:\n{snap}\n{scratch}"
    for e in parser.finish():
        assert not isinstance(e, CallRevised), f"revision at the terminal parse: {e}"
        if isinstance(e, ArgumentsAppended):
            fragments.setdefault(e.index, []).append(e.text)
        if isinstance(e, CallNamed):
            names[e.index] = e.name
    final = parser.snapshot()
    assert not final.partial
    for index, call in enumerate(final.calls):
        assert "".join(fragments.get(index, [])) == call.arguments, f"fragments of call {index} != terminal arguments"
        assert names.get(index) == call.name
    assert final == feed_all(format_id, text, tools, thinking), "incremental terminal != one-shot terminal"
    return final


def argument_steps(format_id: str, text: str, tools=None, index: int = 0) -> list[str]:
    """Every distinct value the arguments of call ``index`` take, fed one character at a time."""
    parser = make_parser(format_id, tools)
    seen: list[str] = []

    def look() -> None:
        calls = parser.snapshot().calls
        if len(calls) > index and (not seen or seen[-1] != calls[index].arguments):
            seen.append(calls[index].arguments)

    for ch in text:
        parser.feed(ch)
        look()
    parser.finish()
    look()
    return seen


def calls_of(parse: Parse) -> list[tuple[str, object]]:
    """``(name, decoded arguments)`` of every call of ``parse``."""
    return [(c.name, json.loads(c.arguments)) for c in parse.calls]


def split_property(format_id: str, samples: list[str], tools=None, examples: int = 50, thinking: bool | str = False):
    """A hypothesis test: each sample, cut at random places, keeps every parser rule (``thinking``: how it starts)."""

    @settings(max_examples=examples, deadline=None)
    @given(st.data())
    def run(data):
        text = data.draw(st.sampled_from(samples))
        cuts = data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=12))
        check_stream(format_id, text, pieces_by(text, cuts), tools=tools, thinking=thinking)

    return run


def fragment_property(format_id: str, fragments: list[str], tools=None, examples: int = 50):
    """A hypothesis test: texts glued from marker fragments, cut at random, never crash and keep every rule."""

    @settings(max_examples=examples, deadline=None)
    @given(st.lists(st.sampled_from(fragments), max_size=30), st.lists(st.integers(1, 400), max_size=8))
    def run(pieces, cuts):
        text = "".join(pieces)
        check_stream(format_id, text, pieces_by(text, cuts), tools=tools)

    return run
