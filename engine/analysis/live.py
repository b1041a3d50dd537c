"""The one interface of a stream analysed while it arrives: feed, a growing snapshot, finish.

Every live source (a model decoding token by token, a server's SSE stream, and
whatever comes next) ends in the same panes, so the GUI drives them all the
same way: it feeds what arrived, shows :meth:`LiveAnalysis.provisional` at
once and :meth:`LiveAnalysis.refresh`-es it after each batch, and on a failure
keeps what was received through :meth:`LiveAnalysis.finish`. Only the item fed
differs: a decoded token for :class:`~callscope.engine.analysis.analyzer.Analyzer`, a
received line for :class:`callscope.engine.streams.conformance.CaptureAnalyzer`.

The interface lives here, below both analyzers and the GUI state, so that
capture code never imports inspector (GUI) code to be driven live.
"""

from __future__ import annotations

from typing import Protocol, TypeVar, runtime_checkable

from callscope.engine.analysis.analyzer import RUNNING, Analysis, StepRecord

__all__ = ["RUNNING", "LiveAnalysis"]

Item = TypeVar("Item", contravariant=True)


@runtime_checkable
class LiveAnalysis(Protocol[Item]):
    """An analyzer a live source feeds one item at a time, on the GUI thread only."""

    #: Every step fed so far (the GUI asks whether anything arrived).
    steps: list[StepRecord]

    def feed(self, item: Item) -> None:
        """One item as the source delivered it (a token, a received line)."""

    def provisional(self) -> Analysis:
        """An analysis of what was fed so far, ``finish_cause`` :data:`RUNNING`.

        It shares the analyzer's lists, so structures built on it see later items;
        its scalar fields change only through :meth:`refresh`.
        """
        ...

    def refresh(self, analysis: Analysis) -> None:
        """Bring a :meth:`provisional` analysis's values up to date after feeding."""

    def finish(self, cause: str = ...) -> Analysis:
        """End the stream (``stop|length|cancelled|error``) and return the final verdict; idempotent."""
        ...
