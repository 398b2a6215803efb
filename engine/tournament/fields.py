"""Reading a tournament's settings from JSON, with the field at fault named in every refusal.

Operators post structures and formats through the admin API; a refusal says where, in the
path a client would follow (``structure.entries[3].bring_in``), so a form can point at it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

from engine.errors import ConfigError
from engine.protocol import ErrorCode


class FieldError(ConfigError):
    """A tournament setting refused: ``field`` is where (``entries[3].bring_in``), ``reason``
    why; the message joins them. A ``ValueError`` with the code ``bad_structure``."""

    code = ErrorCode.BAD_STRUCTURE

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}" if field else reason)
        self.field = field
        self.reason = reason


def joined(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent and name else parent or name


def record(
    data: object, at: str, *, required: Collection[str], optional: Collection[str] = ()
) -> Mapping[str, Any]:
    """``data`` as a JSON object holding every required key and no key unknown."""
    if not isinstance(data, Mapping):
        raise FieldError(at, "must be an object")
    for key in data:
        if key not in required and key not in optional:
            raise FieldError(joined(at, str(key)), "unknown field")
    for key in required:
        if key not in data:
            raise FieldError(joined(at, key), "missing")
    return data


def whole(value: object, at: str, *, minimum: int = 0) -> int:
    """A whole number at least ``minimum`` (a count, or chips): never a bool, a float or text."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise FieldError(at, "must be a whole number")
    if value < minimum:
        raise FieldError(at, f"must be at least {minimum}")
    return value


def optional_whole(value: object, at: str, *, minimum: int = 0) -> int | None:
    return None if value is None else whole(value, at, minimum=minimum)


def duration(value: object, at: str) -> float:
    """A positive, finite number of minutes (a fraction allowed: quick formats and tests)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise FieldError(at, "must be a number of minutes")
    if not math.isfinite(value) or value <= 0:
        raise FieldError(at, "must be above 0 minutes")
    return value


def choice(value: object, at: str, choices: Collection[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise FieldError(at, "must be one of " + ", ".join(sorted(choices)))
    return value
