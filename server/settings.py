"""Server settings, read from the environment (``STUD_*``) or given to ``create_app``.

``DATABASE_URL`` and ``REDIS_URL`` are honoured without the prefix because hosting
platforms and docker-compose files set them that way; ``STUD_DATABASE_URL`` wins over
``DATABASE_URL`` when both are set.

>>> Settings(database_url="postgresql://u:p@db/stud").database_url
'postgresql+asyncpg://u:p@db/stud'
"""

from __future__ import annotations

import os
import socket

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DATABASE_URL = "sqlite+aiosqlite:///./stud.db"

# Plain driver names that hosting platforms hand out, and the async driver we run them on.
_ASYNC_DRIVERS = {
    "postgres": "postgresql+asyncpg",
    "postgresql": "postgresql+asyncpg",
    "sqlite": "sqlite+aiosqlite",
}


def _default_node_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class Settings(BaseSettings):
    """Everything an operator may tune; defaults run one process on SQLite."""

    model_config = SettingsConfigDict(
        env_prefix="STUD_", extra="ignore", validate_by_name=True, validate_by_alias=True
    )

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    database_url: str = Field(
        default=DEFAULT_DATABASE_URL,
        validation_alias=AliasChoices("STUD_DATABASE_URL", "DATABASE_URL"),
    )
    # None: the in-memory bus of a single process; redis://... the bus every node shares.
    redis_url: str | None = Field(
        default=None, validation_alias=AliasChoices("STUD_REDIS_URL", "REDIS_URL")
    )
    # Play money granted to every new player or bot account.
    starting_bankroll: int = Field(default=10_000, ge=0)
    token_ttl_seconds: int = Field(default=24 * 3600, ge=1)
    # Table clocks (every table of this server): the time to act, the time bank on top of
    # it, the pause between hands, how long a freed seat is held for the first player on
    # the waiting list, and how long a player may sit out before being cashed out.
    action_clock_seconds: float = Field(default=15, gt=0)
    time_bank_seconds: float = Field(default=30, ge=0)
    pause_between_hands_seconds: float = Field(default=2, ge=0)
    waiting_offer_seconds: float = Field(default=30, gt=0)
    sit_out_limit_seconds: float = Field(default=600, gt=0)
    # A websocket that sends nothing (not even a ping) for this long is closed.
    ws_idle_seconds: float = Field(default=60, gt=0)
    # This node's name among the nodes sharing one database and one Redis (one cardroom).
    node_id: str = Field(default_factory=_default_node_id, min_length=1, max_length=64)
    # A node's claim on a table lasts this long unless renewed (every third of it): when a
    # node dies, another takes its tables over within this time.
    lease_seconds: float = Field(default=5.0, ge=0.5, le=300)
    # A database call that has not answered in this long counts as an outage (the table
    # pauses and tries again) rather than hanging the table.
    db_timeout_seconds: float = Field(default=5.0, gt=0)
    # Open a demo table of each main variant where house bots play (server/demo.py).
    demo: bool = False
    # The house bots' pause before each action, on average (uniform from half to 1.5 times).
    demo_think_seconds: float = Field(default=1.2, ge=0)
    # Argon2id cost (RFC 9106 low-memory profile by default); tune to the hardware.
    password_time_cost: int = Field(default=3, ge=1)
    password_memory_kib: int = Field(default=64 * 1024, ge=8)
    password_parallelism: int = Field(default=4, ge=1)

    @property
    def base_url(self) -> str:
        """Where this node's own HTTP answers, for clients it runs itself (the house bots)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    @field_validator("database_url")
    @classmethod
    def _async_driver(cls, url: str) -> str:
        """Accept ``postgres://`` and ``sqlite:///`` URLs and run them on async drivers."""
        scheme, sep, rest = url.partition("://")
        if sep and scheme in _ASYNC_DRIVERS:
            return f"{_ASYNC_DRIVERS[scheme]}://{rest}"
        return url
