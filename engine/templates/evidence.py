"""The evidence shown for an analysis: a rendered call cut into marker, name, key and text spans.

``callscope template`` prints the generation the description was learnt from
with its markers marked, so a user sees at a glance which parts of the
template's text the parser treats as syntax. The spans come from the
description's own markers (whatever it learnt, it shows) and the analysis
needles, never from a parse, so a description that reads wrongly still shows
what it would look for.
"""

from __future__ import annotations

from dataclasses import dataclass

from callscope.engine.formats.derived.description import FormatDescription
from callscope.engine.templates.renders import FIRST, KEY_A, KEY_B, KEY_N, SECOND

MARKER, NAME, KEY, TEXT = "marker", "name", "key", "text"


@dataclass(frozen=True, slots=True)
class Span:
    kind: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "text": self.text}


def spans(text: str, description: FormatDescription | None, names: tuple[str, ...] = (FIRST, SECOND)) -> list[Span]:
    """``text`` cut into spans: the description's markers, the call names, the argument keys, the rest."""
    markers = sorted(description.markers() if description is not None else (), key=len, reverse=True)
    words = [(MARKER, m) for m in markers] + [(NAME, n) for n in names] + [(KEY, k) for k in (KEY_A, KEY_B, KEY_N)]
    out: list[Span] = []
    plain: list[str] = []
    i = 0
    while i < len(text):
        hit = next(((kind, word) for kind, word in words if word and text.startswith(word, i)), None)
        if hit is None:
            plain.append(text[i])
            i += 1
            continue
        if plain:
            out.append(Span(TEXT, "".join(plain)))
            plain = []
        out.append(Span(*hit))
        i += len(hit[1])
    if plain:
        out.append(Span(TEXT, "".join(plain)))
    return out


def marked(items: list[Span]) -> str:
    """The spans as one line of text: markers in ⟦ ⟧, names in « », keys in ‹ ›, newlines as ``\\n``."""
    frames = {MARKER: ("⟦", "⟧"), NAME: ("«", "»"), KEY: ("‹", "›"), TEXT: ("", "")}
    return "".join(frames[s.kind][0] + s.text.replace("\n", "\\n") + frames[s.kind][1] for s in items)


__all__ = ["KEY", "MARKER", "NAME", "TEXT", "Span", "marked", "spans"]
