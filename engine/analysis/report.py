"""The `callscope.report/1` JSON document and the human-readable summary of analyses."""

from __future__ import annotations

import re
from typing import Any

from callscope.engine.analysis.analyzer import Analysis, StepTime, headline_times
from callscope.engine.core import rules
from callscope.engine.core.causes import UNFINISHED
from callscope.engine.core.json_text import loads
from callscope.engine.core.terminal import terminal_line
from callscope.engine.core.wire import chunk_json

REPORT_SCHEMA = "callscope.report/1"
#: Traces keep times to the microsecond; a first delta sooner than that is "at once".
MS_RESOLUTION = 0.001


def run_json(analysis: Analysis, include_chunks: bool = False) -> dict[str, Any]:
    """One entry of ``runs``; extra keys beyond the schema's contract are allowed."""
    run: dict[str, Any] = {
        "name": analysis.name,
        "source": analysis.source.to_json(),
        "unit": analysis.unit,
        "steps": analysis.step_count,
        "timed": analysis.timed,
        "calls": [call.to_json() for call in analysis.calls],
        "content": {"streamed": analysis.content_streamed, "final": analysis.terminal.content},
        "reasoning": analysis.terminal.reasoning,
        "finish_reason": analysis.finish_reason,
        "finish_cause": analysis.finish_cause,
        "ttfd": {"streaming": headline_times(analysis).first_delta.to_json(), "atomic": headline_times(analysis).atomic.to_json()},
        "violations": [v.to_json() for v in analysis.violations],
        "truncated": analysis.truncated,
    }
    if include_chunks:
        if analysis.source.kind == "capture":  # what the server sent, every field as sent (any protocol)
            run["chunks"] = [received_chunk(step.step, step.ms, step.data) for step in analysis.steps]
        else:
            run["chunks"] = [
                {"step": c.step, "ms": c.ms, "chunk": chunk_json(c, analysis.identity)} for c in analysis.chunks
            ]
    return run


def received_chunk(step: int, ms: float | None, data: bytes) -> dict[str, Any]:
    """A captured step (one server-sent event, its raw field lines) as ``--chunks`` shows it: the event's
    type and its data, parsed when it is JSON (the data lines of an event joined with newlines)."""
    event, parts = "", []
    for line in data.decode("utf-8", "replace").split("\n"):
        name, _, value = line.partition(":")
        value = value[1:] if value[:1] == " " else value
        if name == "data":
            parts.append(value)
        elif name == "event":
            event = value
    text = "\n".join(parts)
    try:
        chunk: Any = loads(text)
    except ValueError:
        chunk = None
    if not isinstance(chunk, dict):  # [DONE], a line that is not JSON: the text as it came
        chunk = {"data": text}
    entry: dict[str, Any] = {"step": step, "ms": ms, "chunk": chunk}
    if event:
        entry["event"] = event
    return entry


def report_json(analyses: list[Analysis], include_chunks: bool = False) -> dict[str, Any]:
    return {"schema": REPORT_SCHEMA, "runs": [run_json(a, include_chunks) for a in analyses]}


# ------------------------------------------------------------------ summary


def format_seconds(ms: float | None) -> str:
    """``840 ms``, ``29.21 s``, ``12 min 5 s``, ``3 h 2 min``: the unit a person reads fastest."""
    if ms is None:
        return "-"
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 600:
        return f"{seconds:.2f} s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def format_ratio(ratio: float) -> str:
    """One decimal below 10x (1.6x is not 2x), whole numbers above."""
    return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:.0f}x"


def describe_at(at: StepTime, unit: str) -> str:
    if at.step is None:
        return "never"
    where = f"{unit} {at.step}"
    return f"{format_seconds(at.ms)} ({where})" if at.ms is not None else where


def ttfd_gain(analysis: Analysis) -> str | None:
    """``54x sooner (28.67 s earlier)``, ``1.2x sooner (0.41 s earlier)``, ``no gain``: one wording for every run.

    None when either side never sent a tool-call delta (a cancelled stream's baseline never does).
    The CLI, the window and the proxy's turn lines all say it this way.
    """
    times = headline_times(analysis)
    s, a = times.first_delta, times.atomic
    if s.step is None or a.step is None:
        return None
    if s.ms is not None and a.ms is not None:
        if a.ms <= s.ms:
            return "no gain"
        saved = f"{(a.ms - s.ms) / 1000:.2f} s earlier"
        if s.ms < MS_RESOLUTION:  # at once, as far as a trace can tell: no ratio to quote
            return f"at once ({saved})"
        return f"{format_ratio(a.ms / s.ms)} sooner ({saved})"
    if a.step <= s.step or not s.step:
        return "no gain" if a.step <= s.step else None
    unit = analysis.unit
    return f"{format_ratio(a.step / s.step)} sooner ({plural(a.step - s.step, unit)} earlier)"


def format_why(analysis: Analysis) -> str | None:
    """Why a live run speaks its wire format, in a few words (None when the source did not say).

    The packaged model's chat template renders no tools, so a run of it uses callscope's
    ``emulated`` format (the tools taught in the prompt): the window says so next to the
    format, or a user would wonder why a demo shows a format no server sends.
    """
    reason = analysis.source.extra.get("format_reason") if analysis.source.kind == "model" else None
    if not isinstance(reason, str) or not reason or reason.startswith("chosen with"):
        return None  # the user named the format (callscope.engine.decode.prompting says "chosen with --format")
    return re.sub(r"\s*\(callscope: [\w.-]+\)$", "", reason)


#: Source ``extra`` keys that say in words why generation ended: a trace end record's ``detail``, a capture's error.
END_DETAIL_KEYS = ("end_detail", "error")


def end_detail(analysis: Analysis) -> str | None:
    """Why generation ended, in words, when the source said (``None`` otherwise)."""
    for key in END_DETAIL_KEYS:
        value = analysis.source.extra.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def describe_finish(analysis: Analysis) -> str:
    """``tool_calls (generation ended: stop)``; never a bare ``None``: say why no finish chunk went out.

    The end cause carries its detail when the source gave one (``error: connection lost ...``).
    """
    detail = end_detail(analysis)
    if detail is not None:
        ended = f"{analysis.finish_cause}: {detail}"
    elif analysis.truncated and analysis.finish_cause not in UNFINISHED:
        ended = "unknown: the recording has no end record"
    elif analysis.finish_cause == "cancelled":
        ended = "cancelled by the user"
    else:
        ended = analysis.finish_cause
    if analysis.finish_reason is not None:
        return f"{analysis.finish_reason} (generation ended: {ended})"
    stream_enders = [v.rule for v in analysis.violations if v.rule in rules.STREAM_ENDERS]
    if stream_enders:
        why = f"the stream ended early ({stream_enders[0]})"
    elif analysis.finish_cause in UNFINISHED:
        why = f"generation ended: {ended}"
    else:
        why = "no finish chunk was sent"
    return f"none, {why}" + ("" if why.startswith("generation") else f"; generation ended: {ended}")


def thinking_sentence(inferred: dict[str, Any]) -> str:
    """``--thinking auto``'s inference in one line: what, from which characters, why."""
    where = (
        f"{inferred['marker']!r} at characters {inferred['start']}-{inferred['end']}"
        if inferred.get("marker")
        else f"no marker in {inferred['end']} characters"
    )
    return f"auto, inferred {inferred['inferred']} from {where}: {inferred['reason']}"


def content_read_sentence(read: dict[str, Any]) -> str:
    """``capture --template``: what the server's content holds when read with the template's parser."""
    calls = read.get("calls") or []
    left = []
    if calls:
        left.append(f"{plural(len(calls), 'tool call')} left in content ({', '.join(str(c['name']) for c in calls)})")
    if read.get("reasoning"):
        left.append(f"reasoning left in content: {_clip(read['reasoning'])}")
    verdict = "; ".join(left) or "no tool call or reasoning left in it"
    thinking = read.get("thinking_inferred")
    how = f"; thinking {thinking_sentence(thinking)}" if thinking else ""
    return f"content read as {read['format']} (the template's parser): {verdict}{how}"


def summary_text(analysis: Analysis) -> str:
    src = analysis.source
    lines = [
        f"{analysis.name}: {src.kind}"
        + (f" {src.path}" if src.path else "")
        + f", format {src.format or '-'}, policy {src.policy}, {plural(analysis.step_count, analysis.unit)}"
        + ("" if analysis.timed else " (untimed)"),
    ]
    description = src.extra.get("description")
    if description:
        lines.append(f"  {description}")
    inferred = src.extra.get("thinking_inferred")
    if inferred:
        lines.append(f"thinking: {thinking_sentence(inferred)}")
    read = src.extra.get("content_read")
    if read:
        lines.append(content_read_sentence(read))
    if analysis.calls:
        lines.append("calls:")
        for call in analysis.calls:
            verdict = "reconstructs" if call.reconstructs else "DOES NOT reconstruct"
            if call.reconstructs and call.cut:
                verdict = "cut mid-call (arguments unfinished)"
            lines.append(
                f"  [{call.index}] {call.name} id={call.id} {verdict}; first delta {describe_at(call.first_delta, analysis.unit)}"
                f"; {len(call.streamed_arguments)} chars of arguments"
            )
    else:
        lines.append("calls: none")
    if analysis.terminal.reasoning:
        lines.append(f"reasoning: {_clip(analysis.terminal.reasoning)}")
    if analysis.terminal.content:
        lines.append(f"content: {_clip(analysis.terminal.content)}")
    lines.append(f"finish_reason: {describe_finish(analysis)}")
    gain = ttfd_gain(analysis)
    times = headline_times(analysis)
    lines.append(
        f"time to first tool-call delta: {describe_at(times.first_delta, analysis.unit)} {src.policy}"
        f" vs {describe_at(times.atomic, analysis.unit)} atomic" + (f", {gain}" if gain else "")
    )
    if analysis.violations:
        lines.append(f"violations ({len(analysis.violations)}):")
        for v in analysis.violations:
            where = f"{analysis.unit} {v.step}" if v.step is not None else "-"
            call = f" call {v.call_index}" if v.call_index is not None else ""
            lines.append(f"  {v.rule} @ {where}{call}: {v.detail}")
    else:
        lines.append("violations: none")
    return "\n".join(terminal_line(line) for line in lines)  # names, ids and details are the sender's


def chunks_text(analysis: Analysis) -> str:
    lines = []
    for c in analysis.chunks:
        when = f"{c.ms:9.1f} ms" if c.ms is not None else "         -"
        body = {"role": "assistant", "finish": f"finish_reason={c.finish_reason}"}.get(c.kind)
        if body is None:
            head = f"index={c.index} " if c.index is not None else ""
            if c.kind == "header":
                head += f"id={c.call_id} name={c.name!r} "
            else:  # a captured server may re-send them on later fragments: shown as sent
                head += f"id={c.call_id} " if c.call_id is not None else ""
                head += f"name={c.name!r} " if c.name is not None else ""
            body = head + repr(c.text)
        lines.append(f"step {c.step:>6} {when}  {c.kind:<9} {body}")
    return "\n".join(terminal_line(line) for line in lines)


def plural(count: int, noun: str) -> str:
    """``1 token``, ``2 tokens``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _clip(text: str, limit: int = 120) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"
