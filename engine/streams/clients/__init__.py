"""Client profiles: what the client libraries people use assemble from a stream, each a fast emulation.

A stream can be fine by callscope's own reading and still break the clients people
use, and the clients disagree with each other. So every capture is also read by
client profiles, each the way one library assembles it, and each call's verdict
says what each of them ended with (id, name, arguments, or the exception it raised).

A profile is one module with a :class:`~.base.ClientProfile` declaration (the library,
the exact version it follows, the protocols it reads with an assembler class per
protocol, whether it is a default) plus one line in :data:`PROFILES` below. Each is a
plain-Python emulation of the library's assembly, written from reading its source; the
differential test (``tests/system/test_differential.py``) serves the quirks library to the real libraries
and checks every profile predicts exactly what they end with.

Profiles run as the events arrive (:class:`ProfileRun`), on the JSON the protocol reader
already decoded: a few microseconds per chunk each, no SDK in the hot path.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from callscope.engine.streams.clients import (
    ai_sdk,
    anthropic_python,
    anthropic_ts,
    langchain_js,
    langchain_python,
    naive,
    openai_node,
    openai_python,
)
from callscope.engine.streams.clients.base import (
    GENERATED_ID,
    NOT_JSON,
    AssembledCall,
    Assembler,
    ClientProfile,
    ClientRun,
    Raised,
    describe,
    plain_fragment,
)
from callscope.engine.streams.sse import SseEvent

__all__ = [
    "GENERATED_ID", "NOT_JSON", "PROFILES", "AssembledCall", "Assembler", "ClientProfile", "ClientRun",
    "ProfileRun", "ProfileRuns", "Raised", "default_profiles", "parse_profiles", "plain_fragment", "register_profile",
    "run_profiles", "start_runs", "unregister_profile",
]

#: Every profile by id, in the order reports list them (the registry: one line per profile module).
PROFILES: dict[str, ClientProfile] = {
    p.id: p
    for p in (
        openai_python.PROFILE,
        openai_node.PROFILE,
        ai_sdk.PROFILE,
        langchain_python.PROFILE,
        langchain_js.PROFILE,
        anthropic_python.PROFILE,
        anthropic_ts.PROFILE,
        naive.PROFILE,
    )
}
#: The profiles callscope ships (a plug-in's come after them and can be removed).
BUILTIN_PROFILES: tuple[str, ...] = tuple(PROFILES)


def register_profile(profile: ClientProfile) -> ClientProfile:
    """Make a profile defined outside callscope (a plug-in, a test) known to capture, the proxy, replay and
    ``callscope clients`` (``--client ID``; with ``default=True`` it judges every stream), until
    :func:`unregister_profile`. Its id must be new."""
    if profile.id in PROFILES or profile.id in ("all", "none"):
        raise ValueError(f"client profile {profile.id!r} is already registered")
    PROFILES[profile.id] = profile
    return profile


def unregister_profile(profile_id: str) -> None:
    if profile_id in BUILTIN_PROFILES:
        raise ValueError(f"client profile {profile_id!r} is callscope's own: built-in profiles cannot be removed")
    PROFILES.pop(profile_id, None)


OPENAI_PYTHON = openai_python.PROFILE.id
NAIVE = naive.PROFILE.id
ANTHROPIC_PYTHON = anthropic_python.PROFILE.id
ALL = "all"


def default_profiles() -> tuple[str, ...]:
    return tuple(p.id for p in PROFILES.values() if p.default)


def parse_profiles(text: str) -> tuple[str, ...]:
    """``openai-python,naive`` -> the ids; ``all`` -> every profile; ``none`` -> no profile; raises ValueError
    naming an unknown one."""
    names = tuple(part.strip() for part in text.split(",") if part.strip())
    if names == ("none",):
        return ()
    if names == (ALL,):
        return tuple(PROFILES)
    unknown = [n for n in names if n not in PROFILES]
    if unknown or not names:
        raise ValueError(f"unknown client profile {', '.join(unknown) or text!r} "
                         f"(known: {', '.join(PROFILES)}, all, none)")
    return names


class ProfileRun:
    """One profile reading one stream, an event at a time; it stops at the first exception (the library's)."""

    __slots__ = ("profile", "assembler", "fragment", "error", "error_step", "deliberate")

    def __init__(self, profile: ClientProfile, protocol: str, tools: frozenset[str] | None) -> None:
        self.profile = profile.id
        self.assembler = profile.assembler(protocol)(protocol, tools)
        #: The assembler's fast lane (:meth:`Assembler.fragment`), bound once: it is called on most chunks.
        self.fragment = self.assembler.fragment
        self.error: str | None = None
        self.error_step: int | None = None
        self.deliberate = False

    def feed(self, step: int, event: SseEvent, obj: Any, fragment: tuple[int, int, str] | None = None) -> None:
        """One event: ``obj`` its decoded data; ``fragment`` what :func:`plain_fragment` made of it."""
        if self.error is not None:
            return
        try:
            if fragment is None or not self.fragment(*fragment):
                self.assembler.event(event, obj)
        except Exception as exc:  # what the library raises is the verdict
            self._raised(exc, step)

    def _raised(self, exc: BaseException, step: int | None) -> None:
        self.error, self.error_step = describe(exc), step
        self.fragment = _stopped  # a library that raised reads nothing more
        self.deliberate = isinstance(exc, Raised) and exc.deliberate

    def result(self, last_step: int | None = None) -> ClientRun:
        run = ClientRun(self.profile)
        if self.error is None:
            try:
                run.calls, run.content = self.assembler.finish()
            except Exception as exc:
                self._raised(exc, last_step)
        if self.error is not None:
            run.calls, run.content = {}, {}
            run.error, run.error_step, run.deliberate = self.error, self.error_step, self.deliberate
        return run


#: Plain fragments of one call held back at most, before the runs get them joined (:class:`ProfileRuns`).
BATCH_FRAGMENTS = 256


class ProfileRuns:
    """Every selected profile's run on one stream, fed together, an event at a time.

    Consecutive plain fragments of one call (most of a streamed call's chunks) are held and handed to each
    run's fast lane joined, up to :data:`BATCH_FRAGMENTS` at a time: appending a fragment copies the whole
    argument string so far, so a call of n fragments costs O(n^2) bytes read one at a time, and a batch cuts
    that (and the per-chunk calls) by its size. A run whose fast lane refuses the joined text reads the held
    events one by one, as it would have. Nothing a run ends with depends on when it got them: a run reports only
    its end state, and a fast lane never raises, so the step a library raised at is kept.
    """

    __slots__ = ("runs", "_key", "_held")

    def __init__(self, runs: list[ProfileRun]) -> None:
        self.runs = runs
        self._key: tuple[int, int] | None = None  # (choice, index) of the fragments held
        self._held: list[tuple[int, SseEvent, Any, tuple[int, int, str]]] = []

    def __len__(self) -> int:
        return len(self.runs)

    def feed(self, step: int, event: SseEvent, obj: Any, fragment: tuple[int, int, str] | None) -> None:
        """One event (``obj`` its decoded data, ``fragment`` what :func:`plain_fragment` made of it)."""
        if not self.runs:
            return
        if fragment is not None:
            key = (fragment[0], fragment[1])
            if key != self._key:
                self.flush()
                self._key = key
            self._held.append((step, event, obj, fragment))
            if len(self._held) >= BATCH_FRAGMENTS:
                self.flush()
            return
        self.flush()
        for run in self.runs:
            run.feed(step, event, obj)

    def flush(self) -> None:
        """Hand the held fragments on: joined to each fast lane that takes them, else one event at a time."""
        held = self._held
        if not held:
            return
        choice, index = self._key  # type: ignore[misc]
        text = held[0][3][2] if len(held) == 1 else "".join(fragment[2] for _, _, _, fragment in held)
        self._held, self._key = [], None
        for run in self.runs:
            if not run.fragment(choice, index, text):
                for step, event, obj, fragment in held:
                    run.feed(step, event, obj, fragment)

    def results(self, last_step: int | None = None) -> list[ClientRun]:
        """What every run ended with (``last_step``: where a raise at the end of the stream is reported), the
        fragments still held handed on first."""
        self.flush()
        return [run.result(last_step) for run in self.runs]


def _stopped(choice: int, index: int, text: str) -> bool:
    return True


def start_runs(protocol: str, profiles: Iterable[str], tools: frozenset[str] | None = None) -> ProfileRuns:
    """A run of every selected profile that reads ``protocol``."""
    return ProfileRuns([ProfileRun(PROFILES[p], protocol, tools) for p in profiles if PROFILES[p].reads(protocol)])


def run_profiles(protocol: str, events: Iterable[tuple[int, SseEvent, Any]], profiles: Iterable[str],
                 tools: frozenset[str] | None = None) -> list[ClientRun]:
    """Every selected profile that reads ``protocol``, on ``(step, event, decoded JSON)`` (NOT_JSON when not)."""
    runs = start_runs(protocol, profiles, tools)
    last = None
    chat = protocol == "chat"
    for step, event, obj in events:
        last = step
        runs.feed(step, event, obj, plain_fragment(obj) if chat else None)
    return runs.results(last)
