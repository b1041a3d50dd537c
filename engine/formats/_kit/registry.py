"""The table of format specs behind :mod:`callscope.engine.formats`: built-in modules loaded lazily, plus registered ones.

A built-in format is a module of ``callscope.engine.formats`` named by its id; its
``SPEC`` is imported only when something asks for it, so listing the ids (the
CLI's ``--help``) costs nothing and a replay imports one parser. Formats
defined elsewhere (a plug-in, a test) are registered as specs at run time and
behave exactly like the built-in ones; :attr:`FormatTable.generation` changes
with every registration so consumers can cache what they derive from the
table (a compiled marker pattern).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence

from callscope.engine.formats._kit.spec import FormatSpec


class UnknownFormat(ValueError):
    """Raised for a format id that no parser implements; the message lists the known ones."""

    def __init__(self, format_id: str, known: Sequence[str] | None = None) -> None:
        if known is None:  # raised outside the table (a CLI check): the ids known right now
            from callscope.engine.formats import FORMAT_IDS

            known = FORMAT_IDS
        super().__init__(f"unknown format {format_id!r}; known formats: {', '.join(known)}")
        self.format_id = format_id


class FormatTable:
    """Format ids in order (built-in first, then registered), each resolved to its spec on demand."""

    def __init__(self, package: str, builtin: Sequence[str]) -> None:
        self._package = package
        self._builtin = tuple(builtin)
        self._loaded: dict[str, FormatSpec] = {}
        self._registered: dict[str, FormatSpec] = {}
        self.generation = 0

    def ids(self) -> tuple[str, ...]:
        return self._builtin + tuple(self._registered)

    def get(self, format_id: str) -> FormatSpec:
        """The spec of ``format_id``; :class:`UnknownFormat` if there is none."""
        spec = self._registered.get(format_id) or self._loaded.get(format_id)
        if spec is not None:
            return spec
        if format_id not in self._builtin:
            raise UnknownFormat(format_id, self.ids())
        return self._load(format_id)

    def all(self) -> tuple[FormatSpec, ...]:
        """Every spec, in id order (imports every built-in format module)."""
        return tuple(self.get(format_id) for format_id in self.ids())

    def register(self, spec: FormatSpec, *, replace: bool = False) -> FormatSpec:
        if not isinstance(spec, FormatSpec):
            raise TypeError(f"register a FormatSpec, not {type(spec).__name__}")
        if spec.id in self._builtin or (spec.id in self._registered and not replace):
            raise ValueError(f"format {spec.id!r} is already registered")
        self._registered[spec.id] = spec
        self.generation += 1
        return spec

    def unregister(self, format_id: str) -> None:
        if format_id not in self._registered:
            raise ValueError(f"format {format_id!r} was not registered (built-in formats cannot be removed)")
        del self._registered[format_id]
        self.generation += 1

    def _load(self, format_id: str) -> FormatSpec:
        module = importlib.import_module(f"{self._package}.{format_id}")
        spec = getattr(module, "SPEC", None)
        if not isinstance(spec, FormatSpec) or spec.id != format_id:
            raise TypeError(f"{module.__name__} must define SPEC = FormatSpec(id={format_id!r}, ...)")
        self._loaded[format_id] = spec
        return spec


class LiveView(Sequence[str]):
    """A read-only sequence recomputed whenever the table changes: ``FORMAT_IDS`` and the like.

    Module-level names such as ``FORMAT_IDS`` are imported by value all over
    the code base; a view keeps them right after a format is registered.
    """

    def __init__(self, table: FormatTable, compute: Callable[[], tuple[str, ...]]) -> None:
        self._table = table
        self._compute = compute
        self._cache: tuple[int, tuple[str, ...]] | None = None

    def _items(self) -> tuple[str, ...]:
        cache = self._cache
        if cache is None or cache[0] != self._table.generation:
            cache = self._cache = (self._table.generation, self._compute())
        return cache[1]

    def __getitem__(self, index):  # type: ignore[override]
        return self._items()[index]

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __contains__(self, item: object) -> bool:
        return item in self._items()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LiveView):
            other = other._items()
        return self._items() == other if isinstance(other, tuple) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._items())


__all__ = ["FormatTable", "LiveView", "UnknownFormat"]
