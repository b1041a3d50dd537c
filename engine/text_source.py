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
