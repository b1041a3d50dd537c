"""Where the model's own text sits in a render: the assistant header, the end of turn, the reasoning markers.

A render of ``[user, assistant]`` is ``header + what the model wrote + end of
turn``; the generation prompt is ``header + prompt tail`` (``<think>\\n`` when it
opens reasoning). The header is what the generation prompt and a rendered
answer share (cut at a marker boundary: the two may both go on with ``<``); the
end of turn is what follows the answer. :meth:`Framing.cut` takes any rendered
turn apart the same way, so what comes back is what the model would have
generated after the prompt: the reasoning close it writes when the prompt
opened reasoning included, the end-of-turn stop token excluded.

Reasoning markers are learnt from an answer rendered with and without
``reasoning_content`` (the markers around the reasoning text), or, for a
template that drops reasoning from its history, from a prompt that opens it
(``<think>`` gives ``</think>``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from callscope.engine.templates.affixes import (
    boundary_before,
    closing_of,
    common_prefix,
    common_suffix,
    first_marker,
    inside_compound,
    last_marker,
)
from callscope.engine.templates.renders import ANSWER, REASONING, Renders


@dataclass(frozen=True, slots=True)
class Framing:
    """How a template frames the assistant's turn (see the module docstring)."""

    #: The render up to where the assistant's own text begins.
    header: str
    #: What the generation prompt adds after the header ("" or "<think>\n").
    prompt_tail: str
    #: What a rendered answer ends with after the assistant's text ("<|im_end|>\n").
    turn_tail: str
    reasoning_start: str = ""
    reasoning_end: str = ""
    #: The generation prompt (as the template renders it by default) leaves the model inside reasoning.
    opens_reasoning: bool = False
    #: The same with ``enable_thinking`` true / false, when the template reads that switch (None: it does not).
    opens_reasoning_thinking: bool | None = None
    opens_reasoning_no_thinking: bool | None = None
    #: The end of the generation prompt that a rendered turn writes again at its start: the prompt
    #: holds it, so the model does not write it (Command R+'s prompt adds a system turn after the
    #: history and ends with ``<|CHATBOT_TOKEN|>``, which a rendered answer starts with).
    prompt_holds: str = ""

    @property
    def end_of_turn(self) -> str:
        """The stop marker that ends the turn (the first marker of the turn's tail)."""
        return first_marker(self.turn_tail) or self.turn_tail.strip()

    def cut(self, render: str, reasoning: str = "") -> tuple[str, bool] | None:
        """``(what the model generated after the prompt, whether it starts inside reasoning)`` in ``render``.

        ``reasoning`` is written before the reasoning close when the prompt opens
        reasoning but the render has no close of its own (a template that drops
        reasoning from its history). None when ``render`` does not start with the header.
        """
        if not render.startswith(self.header):
            return None
        body = render[len(self.header) :]
        if self.prompt_holds and body.startswith(self.prompt_holds):
            body = body[len(self.prompt_holds) :]
        shared = len(common_suffix(body, self.turn_tail))
        if shared:
            body = body[: _cut_at_marker(body, len(body) - shared)]
        stop = self.end_of_turn
        if stop and body.rstrip().endswith(stop):  # the turn's stop token, spaced differently after a call
            body = body.rstrip()[: -len(stop)]
        tail = self.prompt_tail
        if tail and body.startswith(tail):
            body = body[len(tail) :]
        elif tail.strip() and body.startswith(tail.rstrip()):
            body = body[len(tail.rstrip()) :]
        if self.opens_reasoning and self.reasoning_end:
            end = self.reasoning_end.strip()
            if end not in body:
                body = reasoning + end + "\n\n" + body.lstrip()
            return body, True
        return body, False


def _cut_at_marker(body: str, at: int) -> int:
    """The start of the end-of-turn text at or after ``at``, moved forward off a marker it would cut."""
    while 0 < at < len(body) and not (body[at] in "<[" or body[at].isspace() or body[at - 1].isspace()):
        at += 1
    return inside_compound(body, at)


def frame(renders: Renders) -> Framing | None:
    """The framing of the analysed template; None when it renders no answer or no generation prompt."""
    prompt, answer = renders.prompt, renders.answer
    if prompt is None or answer is None or ANSWER not in answer:
        return None
    if answer.startswith(prompt):
        header = prompt
    else:
        header = prompt[: boundary_before(prompt, len(common_prefix(prompt, answer)))]
    at = answer.find(ANSWER)
    if at < len(header):
        header = header[: boundary_before(header, at)]
    turn_tail = answer[at + len(ANSWER) :]
    start, end = _reasoning_markers(renders, header)
    opener = last_marker(header)
    if end and not start and opener and closing_of(opener) == end.strip():
        # every render of the turn starts with the opener (the template writes it, the prompt ends with it):
        # it belongs to the model's text, not to the header
        start, header = opener, header[: header.rstrip().rfind(opener)]
    if not end and not start and opener and closing_of(opener) and header.rstrip().endswith(opener):
        # the prompt ends with a reasoning opener the answers never close (a template that drops reasoning
        # from its history): the model's text starts inside it and ends it with the opener's closing tag
        start, end, header = opener, closing_of(opener), header[: header.rstrip().rfind(opener)]
    tail = prompt[len(header) :]
    if not end:
        thinking = renders.prompt_thinking or ""
        start, end = _reasoning_tags(
            (tail, answer[len(header) : at], thinking[len(header) :] if thinking.startswith(header) else "")
        )

    holds = _held_by_prompt(tail, answer[len(header) : at])

    def opens(rendered: str | None) -> bool | None:
        if rendered is None or not rendered.startswith(header) or not start:
            return None
        rest = rendered[len(header) :]
        return start in rest and end not in rest[rest.rfind(start) :]

    return Framing(
        header,
        tail,
        turn_tail,
        start,
        end,
        opens_reasoning=bool(opens(prompt)),
        opens_reasoning_thinking=opens(renders.prompt_thinking) if renders.prompt_thinking != prompt else None,
        opens_reasoning_no_thinking=opens(renders.prompt_no_thinking) if renders.prompt_no_thinking != prompt else None,
        prompt_holds=holds,
    )


def _held_by_prompt(tail: str, lead: str) -> str:
    """The markers the prompt's tail ends with and an answer starts with again ("" when none).

    Only when the prompt adds more than that after the shared header (a system turn of
    instructions, as Command R+ writes): otherwise the tail is the model's start.
    """
    if not tail.strip() or not lead.strip():
        return ""
    for size in range(min(len(tail), len(lead)), 0, -1):
        piece = lead[:size]
        if tail.endswith(piece) and len(piece) < len(tail) and piece.strip() and last_marker(piece) and piece[0] in "<[":
            return piece
    return ""


_TAG = re.compile(r"<[^<>\s]{1,40}>|\[[^\[\]\s]{1,40}\]")


def _reasoning_tags(texts: tuple[str, ...]) -> tuple[str, str]:
    """Reasoning markers from the tags a template writes around the turn's start (``<think></think>``, a lone ``</think>``)."""
    for text in texts:
        for tag in _TAG.findall(text):
            closer = closing_of(tag)
            if closer:
                return tag, closer
            opener = tag.replace("</", "<", 1).replace("[/", "[", 1)
            if opener != tag and closing_of(opener) == tag:
                return opener, tag
    return "", ""


def _reasoning_markers(renders: Renders, header: str) -> tuple[str, str]:
    """The markers around reasoning in the answer rendered with ``reasoning_content`` ("" when it has none)."""
    text = renders.answer_reasoning
    if text is None or REASONING not in text or not text.startswith(header):
        return "", ""
    at = text.find(REASONING)
    before, after = text[len(header) : at], text[at + len(REASONING) : text.find(ANSWER, at)]
    start, end = last_marker(before), first_marker(after)
    if not end:
        return "", ""
    return start, end


__all__ = ["Framing", "frame"]
