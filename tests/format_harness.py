"""Checks every format parser must pass, shared by the per-format tests.

``check_stream(format_id, text, splits, tools)`` feeds ``text`` in the given
pieces and asserts the parser rules: incremental equals from-scratch on every
prefix, names appear only complete, arguments only grow (no CallRevised), no
marker text reaches content, and argument fragments concatenate to the
terminal arguments. Returns the terminal Parse for further assertions.
"""

from __future__ import annotations

from callscope.engine.core.parse_model import ArgumentsAppended, CallNamed, CallRevised, Parse
from callscope.engine.formats import make_parser


def feed_all(format_id: str, text: str, tools=None) -> Parse:
    parser = make_parser(format_id, tools)
    parser.feed(text)
    parser.finish()
    return parser.snapshot()


def partial_of(format_id: str, prefix: str, tools=None) -> Parse:
    parser = make_parser(format_id, tools)
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
) -> Parse:
    pieces = pieces if pieces is not None else list(text)
    assert "".join(pieces) == text
    parser = make_parser(format_id, tools)
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
            scratch = partial_of(format_id, prefix, tools)
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
    assert final == feed_all(format_id, text, tools), "incremental terminal != one-shot terminal"
    return final
