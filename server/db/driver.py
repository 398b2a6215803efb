"""SQLAlchemy statements compiled once, for the database driver itself.

On the path of every action (:mod:`server.store.write_ahead`) a statement run through SQLAlchemy
costs far more in Python than in the database: its parameters processed, its cache key
found, its result wrapped. A :class:`DriverStatement` is the same statement, compiled for
the dialect once, with the same column types' conversions of its parameters (JSON text,
SQLite's datetimes), run on the driver's own cursor inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Dialect
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler


@dataclass(frozen=True, slots=True)
class DriverStatement:
    """A statement's SQL for one dialect, and how to order and convert its parameters."""

    sql: str
    names: tuple[str, ...]
    processors: tuple[Callable[[Any], Any] | None, ...]

    @classmethod
    def compile(cls, statement: ClauseElement, dialect: Dialect) -> DriverStatement:
        compiled = statement.compile(dialect=dialect)
        assert isinstance(compiled, SQLCompiler)
        names = tuple(compiled.positiontup or ())
        if not names and compiled.binds:
            raise ValueError("only positional parameter styles are compiled for the driver")
        processors = []
        for name in names:
            kind = compiled.binds[name].type
            processors.append(kind.dialect_impl(dialect).bind_processor(dialect))
        return cls(str(compiled), names, tuple(processors))

    def parameters(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """``values`` by name, in the statement's order, converted as SQLAlchemy would."""
        return tuple(
            value if process is None else process(value)
            for value, process in zip(
                (values[name] for name in self.names), self.processors, strict=True
            )
        )

    def many(self, rows: Iterable[Mapping[str, Any]]) -> list[tuple[Any, ...]]:
        return [self.parameters(row) for row in rows]
