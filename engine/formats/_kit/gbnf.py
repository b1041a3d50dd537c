"""The grammar side of a format spec: the GBNF envelope around schema-derived argument rules.

``callscope run`` makes a small model write a genuine call by constraining its
sampling with a GBNF grammar. The grammar has two halves. The argument rules
come from each tool's JSON schema and are the same for every format
(:mod:`callscope.engine.decode.grammar` builds them). The envelope is the format's wire
syntax around them (markers, the JSON call object, XML parameter blocks), and
it is declared by the format module as one or more :class:`Envelope` values.

An :class:`Envelope` is data plus one function: whether content may come
before the calls, whether the syntax carries a single call, how the calls of a
turn are laid out (:class:`CallsLayout`), and a call builder that, given a
tool name and its :class:`ArgumentRules`, returns the GBNF of one call. A
format with several syntaxes (Mistral's ``[TOOL_CALLS][...]`` array and
``[TOOL_CALLS]NAME[ARGS]{...}``) declares several envelopes, each with a
``form`` name: the user picks one as a format option.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol


class CannotForce(ValueError):
    """A call builder cannot spell a call to this tool in its syntax; the message says what to do."""


def lit(text: str) -> str:
    """A GBNF string literal of ``text``."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


#: The largest count one GBNF repetition may carry here. llama.cpp refuses a ``{m,n}`` whose ``m`` or ``n`` is
#: over 2,000 ("number of repetitions exceeds sane defaults"); :func:`repeat` nests larger ones below this.
MAX_REPETITION = 1000


def repeat(item: str, low: int, high: int) -> str:
    """GBNF for ``low`` to ``high`` (inclusive) repetitions of the expression ``item``, however large.

    A plain ``item{low,high}`` when both counts fit :data:`MAX_REPETITION`. Larger
    counts become nested bounded repetitions that match exactly the same strings:
    ``x{2599,2999}`` is ``(x{1000}){2} x{599} x{0,400}``, and an optional run past the
    bound is ``(x{1000} x{0,n-1000} | x{0,999})`` (no ambiguity, so the sampler keeps
    at most two parse stacks).
    """
    if not 0 <= low <= high:
        raise ValueError(f"need 0 <= low <= high, got {low} and {high}")
    item = _grouped(item)
    if high <= MAX_REPETITION:
        if high == 0:
            return '""'
        return f"{item}{{{low}}}" if low == high else f"{item}{{{low},{high}}}"
    if low > 0:
        tail = repeat(item, 0, high - low)
        return _exactly(item, low) + ("" if tail == '""' else " " + tail)
    block = _exactly(item, MAX_REPETITION)
    rest = repeat(item, 0, high - MAX_REPETITION)
    return f"({block} {rest} | {item}{{0,{MAX_REPETITION - 1}}})"


def _exactly(item: str, count: int) -> str:
    """``item`` exactly ``count`` times, nested so no single count exceeds :data:`MAX_REPETITION`."""
    if count <= MAX_REPETITION:
        return f"{item}{{{count}}}"
    blocks, rest = divmod(count, MAX_REPETITION)
    out = _exactly(f"({item}{{{MAX_REPETITION}}})", blocks)
    return out + (f" {item}{{{rest}}}" if rest else "")


def _grouped(item: str) -> str:
    """``item`` as one GBNF term: a rule name, literal or character class stays, anything else is parenthesised."""
    if re.fullmatch(r"[A-Za-z0-9_-]+|\[(?:[^\]\\]|\\.)*\]|\"(?:[^\"\\]|\\.)*\"", item):
        return item
    if item.startswith("(") and item.endswith(")") and _balanced_inside(item[1:-1]):
        return item
    return f"({item})"


def _balanced_inside(text: str) -> bool:
    """Whether ``text`` never closes more parentheses than it opened (so ``(text)`` is one group).

    Only a rough check for our own expressions: parentheses inside literals and classes count too,
    and a wrong "no" only adds a redundant pair of parentheses.
    """
    depth = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


class ParameterRule(NamedTuple):
    """One top-level parameter of a tool, for formats that write each parameter on its own.

    ``value`` is the GBNF of the value as raw text, the way XML-parameter formats
    write it (Qwen3-Coder's ``<parameter=KEY>VALUE</parameter>``): a string is its
    bare text, anything else its JSON. ``kind`` is the JSON type the schema
    declares for it (None: not one type), for syntaxes that mark strings
    (DeepSeek V3.2's ``string="true"``, Gemma 4's ``<|"|>`` quotes).
    """

    key: str
    value: str
    required: bool
    kind: str | None = None


class ArgumentRules(Protocol):
    """What a call builder may ask of one tool's parameters schema (built lazily, on request)."""

    def json(self) -> str:
        """The name of the rule of the whole arguments object, as JSON."""
        ...

    def parameters(self) -> Sequence[ParameterRule]:
        """The top-level parameters, required ones first, each with its raw-text value rule."""
        ...

    def python(self) -> str:
        """The name of the rule of the arguments as Python keyword arguments (``key=value, ...``, Python literals).

        Raises :class:`CannotForce` for a parameter whose name is not a Python name.
        """
        ...


#: ``(tool name, its argument rules) -> GBNF of one call``; may raise :class:`CannotForce`.
CallBuilder = Callable[[str, ArgumentRules], str]


def parameter_blocks(args: ArgumentRules, block: Callable[[ParameterRule], str]) -> str:
    """The GBNF of every parameter's ``block`` in order (required ones first), the optional ones optional."""
    parts = []
    for param in args.parameters():
        rule = block(param)
        parts.append(rule if param.required else f"({rule})?")
    return " ".join(parts)


def around_arguments(head: Callable[[str], str], tail: str) -> CallBuilder:
    """A call builder for syntaxes that write the JSON arguments between ``head(name)`` and ``tail``."""

    def build(name: str, args: ArgumentRules) -> str:
        return f"{lit(head(name))} {args.json()} {lit(tail)}"

    return build


@dataclass(frozen=True, slots=True)
class CallsLayout:
    """How the calls of one turn sit together, as GBNF expressions (empty: nothing).

    The calls are ``open call (sep call)* close``; with no ``sep`` the calls
    simply follow each other (each carries its own markers).
    """

    open: str = ""
    sep: str = ""
    close: str = ""

    def expression(self, min_calls: int, max_calls: int, call: str = "call") -> str:
        """The GBNF of ``min_calls`` to ``max_calls`` calls, each matching rule ``call``."""
        if min_calls == max_calls == 1:
            body = call
        elif not self.sep:
            body = f"{call}{{{min_calls},{max_calls}}}"
        else:
            body = f"{call} ({self.sep} {call}){{{min_calls - 1},{max_calls - 1}}}"
        return " ".join(part for part in (self.open, body, self.close) if part)


#: Calls written one per line (Hermes ``<tool_call>`` blocks, ``TOOL_CALL`` lines, XML blocks).
ONE_PER_LINE = CallsLayout(sep=lit("\n"))


@dataclass(frozen=True, slots=True)
class Envelope:
    """One syntax a format's calls can be forced in."""

    #: The GBNF of one call to a tool, given its name and argument rules.
    call: CallBuilder
    #: How several calls are laid out in one turn.
    layout: CallsLayout = ONE_PER_LINE
    #: The syntax lets a short line of content come before the calls.
    content: bool = False
    #: The syntax carries exactly one call per turn (``--max-calls`` is then 1).
    single_call: bool = False
    #: The option value that picks this syntax when a format has several; "" for a format's only one.
    form: str = ""
    #: How the forced-call description names this syntax ("[TOOL_CALLS][...] array form"); "" for none.
    label: str = ""


__all__ = [
    "ONE_PER_LINE",
    "ArgumentRules",
    "CallBuilder",
    "CallsLayout",
    "CannotForce",
    "Envelope",
    "ParameterRule",
    "MAX_REPETITION",
    "around_arguments",
    "lit",
    "parameter_blocks",
    "repeat",
]
