"""The streaming protocols callscope reads, by id: the registry of :class:`~.spec.ProtocolSpec` declarations.

Built in: ``chat`` (``/v1/chat/completions``), ``responses`` (OpenAI Responses
API, ``/v1/responses``) and ``anthropic`` (Anthropic Messages,
``/v1/messages``), one module each. A request's URL path names its protocol; a
recorded stream names it in its first events (each protocol's events look like
no other's). A stream that matches none is of an unknown protocol: reported as
such, never as a truncated chat stream.

Adding a protocol: write its module (reader + ``SPEC``) and add it to
:data:`_BUILTIN`. One defined outside callscope (a plug-in, a test) needs no
edit here: ``register_protocol(SPEC)`` makes it known to capture, the proxy,
``serve``, the client profiles and both capture front ends, until
``unregister_protocol(id)``. :data:`PROTOCOLS` follows the registrations.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from callscope.engine.core.json_text import loads
from callscope.engine.streams import anthropic, chat, responses
from callscope.engine.streams.spec import NOT_JSON, ProtocolSpec
from callscope.engine.streams.sse import SseEvent

_BUILTIN: tuple[ProtocolSpec, ...] = (chat.SPEC, responses.SPEC, anthropic.SPEC)
_SPECS: dict[str, ProtocolSpec] = {spec.id: spec for spec in _BUILTIN}
DEFAULT_PROTOCOL = chat.SPEC.id


class _Ids(Sequence[str]):
    """Every known protocol id, built-in then registered: a live, read-only sequence (argparse ``choices`` too)."""

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: Any) -> Any:
        return tuple(_SPECS)[index]

    def __len__(self) -> int:
        return len(_SPECS)

    def __iter__(self) -> Iterator[str]:
        return iter(tuple(_SPECS))

    def __contains__(self, item: object) -> bool:
        return item in _SPECS

    def __repr__(self) -> str:
        return repr(tuple(_SPECS))


PROTOCOLS: Sequence[str] = _Ids()


def get_protocol(protocol: str) -> ProtocolSpec:
    """The spec of ``protocol``; a ValueError naming the known ones for any other id."""
    spec = _SPECS.get(protocol)
    if spec is None:
        raise ValueError(f"unknown protocol {protocol!r} (known: {', '.join(_SPECS)})")
    return spec


def all_protocols() -> tuple[ProtocolSpec, ...]:
    """Every protocol's spec, in :data:`PROTOCOLS` order."""
    return tuple(_SPECS.values())


def register_protocol(spec: ProtocolSpec, *, replace: bool = False) -> ProtocolSpec:
    """Make a protocol defined outside callscope known everywhere; returns ``spec``.

    Its id must not be a built-in one (or, without ``replace``, a registered one),
    and its endpoint must not end like another protocol's (a path names one protocol).
    """
    if any(spec.id == b.id for b in _BUILTIN):
        raise ValueError(f"protocol {spec.id!r} is already registered: built-in protocols cannot be replaced")
    if spec.id in _SPECS and not replace:
        raise ValueError(f"protocol {spec.id!r} is already registered (replace=True to replace it)")
    clash = next((s for s in _SPECS.values() if s.id != spec.id
                  and (s.tail.endswith(spec.tail) or spec.tail.endswith(s.tail))), None)
    if clash is not None:
        raise ValueError(f"protocol {spec.id!r}: its path {spec.path} is ambiguous with {clash.id}'s {clash.path}")
    _SPECS[spec.id] = spec
    return spec


def unregister_protocol(protocol: str) -> None:
    """Forget a protocol added with :func:`register_protocol`."""
    if any(protocol == b.id for b in _BUILTIN):
        raise ValueError(f"protocol {protocol!r}: built-in protocols cannot be removed")
    _SPECS.pop(protocol, None)


def expected_choices(body: dict[str, Any]) -> int:
    """How many choices a request asked for (``n``; 1 when absent or not a sensible number)."""
    n = body.get("n")
    return n if isinstance(n, int) and not isinstance(n, bool) and 1 <= n <= 128 else 1


def endpoint_path(protocol: str) -> str:
    return get_protocol(protocol).path


def protocol_for_path(path: str) -> str | None:
    """The protocol whose endpoint ``path`` ends in (``/x/v1/messages`` -> ``anthropic``), else None."""
    path = path.rstrip("/")
    for spec in _SPECS.values():
        if path.endswith(spec.tail):
            return spec.id
    return None


def end_text(protocol: str | None) -> str:
    """What a complete response of ``protocol`` ends with, for a message (any protocol's when unknown)."""
    return get_protocol(protocol).end_text if protocol in _SPECS else "its protocol's end"


def end_markers(protocol: str | None) -> tuple[bytes, ...]:
    """Bytes every end event of ``protocol`` holds (of every known protocol when None): a read without any
    of them ends nothing, and is not split into lines to find out."""
    specs = [_SPECS[protocol]] if protocol in _SPECS else list(_SPECS.values())
    return tuple(dict.fromkeys(end.encode() for spec in specs for end in spec.end_events))


def is_end_line(line: str, protocol: str | None) -> bool:
    """Whether a received line is the end event of ``protocol`` (of any known protocol when None)."""
    if protocol is not None:
        spec = _SPECS.get(protocol)
        return spec is not None and spec.is_end_line(line)
    return any(spec.is_end_line(line) for spec in _SPECS.values())


def detect(event: SseEvent, hint: str | None = None) -> str | None:
    """The protocol one event belongs to, or None if it looks like none of them.

    ``hint`` (the request's protocol) decides only what any protocol could send (an error object)
    or data that is not JSON at all.
    """
    try:
        obj: Any = loads(event.data)
    except ValueError:
        obj = NOT_JSON
    for spec in _SPECS.values():
        if spec.recognise(event, obj):
            return spec.id
    if obj is NOT_JSON or not isinstance(obj, dict):
        return hint
    names = {n for n in (event.event, obj.get("type")) if isinstance(n, str) and n}
    if "error" in obj or "error" in names:
        return hint or DEFAULT_PROTOCOL
    return None
