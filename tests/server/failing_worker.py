"""A worker process that fails before it serves (as one whose database refuses it would), for
the supervisor's tests: a module of its own, light for the fresh interpreter that imports it."""

from __future__ import annotations

from typing import Any


def never_starts(*args: Any) -> None:
    raise SystemExit(3)
