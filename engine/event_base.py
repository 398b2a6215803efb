"""The base of every event record, and the registry of their kinds.

Hand events (:mod:`engine.events`) and table events (:mod:`engine.table_events`) are records
of types built on :class:`Event`, each registered under its kind by :func:`event_type`, so
:func:`engine.events.decode` finds it. Neither module imports the other for it: both build on
this one, and :mod:`engine.events` imports the table's to have every kind registered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, TypeVar, cast

_E = TypeVar("_E", bound="Event")


class _Maker(Protocol):
    def __call__(self, cls: type[_E], fields: Iterable[Any], /) -> _E: ...


new_event = cast(_Maker, tuple.__new__)
"""The fast constructor of a record: ``new_event(Ante, (seat, amount, all_in))``, the
fields in order, all of them (the hand's hot path makes its records this way)."""


def _plain(value: Any) -> Any:
    """A field's JSON-ready value: tuples become lists, the wire's only container change."""
    return list(value) if type(value) is tuple else value


def _frozen(value: Any) -> Any:
    """A decoded JSON value as a record holds it: lists become tuples."""
    return tuple(value) if type(value) is list else value


class Event:
    """The base of every event record: its ``kind``, its audience ``to`` and its wire ``data``.

    A record type sets ``kind`` and writes :meth:`encode`; flat ones (each field one key of
    the same name, always present) need nothing more.
    """

    __slots__ = ()

    @property
    def kind(self) -> str:
        raise NotImplementedError

    @property
    def to(self) -> int | None:
        """Who may see it: None for everyone, else the one seat."""
        return None

    def visible_to(self, seat: int | None) -> bool:
        to = self.to
        return to is None or to == seat

    def encode(self) -> dict[str, Any]:
        """The ``data`` of the event as protocol v1 sends it (a fresh dict each call)."""
        fields: tuple[str, ...] = getattr(self, "_fields")  # noqa: B009 - the record's fields
        values: tuple[Any, ...] = self  # type: ignore[assignment]
        return {name: _plain(value) for name, value in zip(fields, values, strict=True)}

    @property
    def data(self) -> dict[str, Any]:
        """The wire ``data`` (see :meth:`encode`)."""
        return self.encode()

    def record(self) -> dict[str, Any]:
        """The event as a stored event log keeps it."""
        return {"kind": self.kind, "data": self.encode(), "to": self.to}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Event:
        """The record from its wire ``data`` (flat records; others override this)."""
        fields: tuple[str, ...] = getattr(cls, "_fields")  # noqa: B009 - the record's fields
        return new_event(cls, [_frozen(data[name]) for name in fields])

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and tuple.__eq__(self, other)  # type: ignore[operator]

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return tuple.__hash__(self)  # type: ignore[arg-type]


class UnknownEvent(Event):
    """An event of a kind this code does not know (a newer server's): kept as it came."""

    __slots__ = ("_kind", "_data", "_to")

    def __init__(self, kind: str, data: Mapping[str, Any], to: int | None = None) -> None:
        self._kind, self._data, self._to = kind, dict(data), to

    @property
    def kind(self) -> str:
        return self._kind

    @property
    def to(self) -> int | None:
        return self._to

    def encode(self) -> dict[str, Any]:
        return dict(self._data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnknownEvent) and (self._kind, self._data, self._to) == (
            other.kind,
            other.encode(),
            other.to,
        )

    def __hash__(self) -> int:
        return hash((self._kind, self._to))

    def __repr__(self) -> str:
        return f"UnknownEvent({self._kind!r}, {self._data!r}, {self._to!r})"


EVENT_TYPES: dict[str, type[Event]] = {}
"""Every record type by its kind (hand and table events)."""


_T = TypeVar("_T", bound=type[Event])


def event_type(cls: _T) -> _T:
    """Register a record type under its kind (a class decorator)."""
    EVENT_TYPES[cls.kind] = cls  # type: ignore[index]
    return cls


__all__ = ["EVENT_TYPES", "Event", "UnknownEvent", "event_type", "new_event"]
