"""Splitting a raw generation into steps, with synthetic times (``replay-text``)."""

from __future__ import annotations

from collections.abc import Iterator


class BadStep(ValueError):
    pass


def parse_step(spec: str) -> tuple[str, int]:
    """``char`` | ``byte`` | ``N`` (N characters per step) -> (unit, size)."""
    if spec in ("char", "byte"):
        return spec, 1
    try:
        size = int(spec)
    except ValueError:
        raise BadStep(f"--step takes char, byte or a positive number of characters, not {spec!r}") from None
    if size < 1:
        raise BadStep(f"--step must be at least 1, not {size}")
    return "char", size


def split_steps(text: str, unit: str, size: int) -> Iterator[bytes]:
    """The byte pieces of ``text``: ``size`` characters per step, or one byte per step."""
    if unit == "byte":
        data = text.encode("utf-8")
        for i in range(0, len(data), size):
            yield data[i : i + size]
        return
    for i in range(0, len(text), size):
        yield text[i : i + size].encode("utf-8")


def step_ms(step: int, rate: float | None) -> float | None:
    """Synthetic time of step ``step`` (1-based) at ``rate`` steps per second."""
    return None if rate is None else step * 1000.0 / rate


def step_count(text: str, unit: str, size: int) -> int:
    """How many pieces :func:`split_steps` cuts ``text`` into."""
    length = len(text.encode("utf-8")) if unit == "byte" else len(text)
    return -(-length // size)


def rate_problem(text: str, unit: str, size: int, rate: float) -> str | None:
    """Why ``rate`` cannot time ``text``'s steps, or None.

    The synthetic times must be what a trace can hold (``callscope.engine.recordings.trace.MAX_MS``):
    a rate so slow that the last step lands past it would give a report of
    times no recording could store, and ``--record`` a trace that does not load.
    """
    from callscope.engine.recordings.trace import MAX_MS

    last = step_ms(step_count(text, unit, size), rate)
    if last is not None and last > MAX_MS:
        return f"--rate {rate:g} puts the last of {step_count(text, unit, size):,} steps at {last:g} ms, past the 1e12 ms (31 years) a trace holds"
    return None
