"""Server settings, read from the environment (``STUD_*``) or given to ``create_app``.

The settings are grouped by concern, each group a model of its own: :class:`Node` (where
and as what this node runs, among the nodes of one cardroom), the tables' defaults
(:class:`~server.table.ports.TableDefaults`, the table's own), :class:`Database`,
:class:`DeckKeys`, :class:`Accounts`, :class:`PasswordHashing`, :class:`Limits` (the
gateway's), :class:`Websockets` and :class:`Operations`. :class:`Settings` is all of them
at once: it inherits every group, so each setting is declared once, in its group, and keeps
the one flat name operators know (docs/operators.md, docker-compose.yml): the environment
variable ``STUD_<NAME>``, the keyword ``Settings(<name>=...)``, the attribute
``settings.<name>`` and ``model_copy(update={"<name>": ...})``. ``settings.<group>``
(``settings.tables``, ``settings.limits``...) is that concern alone, a frozen copy to hand
to what needs no more of the settings.

Why not nested models (``settings.tables.action_clock_seconds`` the only way in):
pydantic-settings reads a nested model from ``STUD_TABLES__ACTION_CLOCK_SECONDS`` or a JSON
``STUD_TABLES``; keeping every flat name would take a settings source of our own, an alias
for every keyword, and ``model_copy(update=...)`` would no longer take the flat names.
Inheriting the groups keeps the names as they are with no layer translating them.

``DATABASE_URL`` and ``REDIS_URL`` are honoured without the prefix because hosting
platforms and docker-compose files set them that way; ``STUD_DATABASE_URL`` wins over
``DATABASE_URL`` when both are set. Without either, the database is SQLite in the data
directory (``STUD_DATA_DIR``: server/db/data_dir.py).

>>> Settings(database_url="postgresql://u:p@db/stud").database_url
'postgresql+asyncpg://u:p@db/stud'
>>> Settings(data_dir="/var/lib/stud").database_url
'sqlite+aiosqlite:////var/lib/stud/stud.db'
>>> Settings(action_clock_seconds=20).tables.action_clock_seconds
20.0
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Literal, TypeVar

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from server.db.data_dir import DEFAULT_DATA_DIR, default_database_url
from server.store.deck_seal import DeckSeal, load_seal
from server.table.ports import TableDefaults

__all__ = [
    "DEFAULT_DATABASE_URL",
    "Accounts",
    "Database",
    "DeckKeys",
    "Limits",
    "Node",
    "Operations",
    "PasswordHashing",
    "Settings",
    "TableDefaults",
    "Websockets",
]

DEFAULT_DATABASE_URL = default_database_url(DEFAULT_DATA_DIR)

# Plain driver names that hosting platforms hand out, and the async driver we run them on.
_ASYNC_DRIVERS = {
    "postgres": "postgresql+asyncpg",
    "postgresql": "postgresql+asyncpg",
    "sqlite": "sqlite+aiosqlite",
}


def _default_node_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class _Group(BaseModel):
    """One concern's settings: frozen on its own (``settings.<group>``), each field also a
    setting of :class:`Settings` under its own name."""

    model_config = ConfigDict(
        frozen=True, validate_default=True, validate_by_name=True, validate_by_alias=True
    )


class Node(_Group):
    """Where and as what this node runs: its address, its name among the nodes of one
    cardroom and the bus they share, its processes, its claim on the tables it runs, and
    the demo tables it opens."""

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)
    # This node's name among the nodes sharing one database and one Redis (one cardroom).
    node_id: str = Field(default_factory=_default_node_id, min_length=1, max_length=64)
    # None: the in-memory bus of a single process; redis://... the bus (and the leases) every
    # node shares; ...?cluster=yes names a node of a Redis Cluster (server/bus/redis_bus.py).
    redis_url: str | None = Field(
        default=None, validation_alias=AliasChoices("STUD_REDIS_URL", "REDIS_URL")
    )
    # A node's claim on a table lasts this long unless renewed (every third of it): when a
    # node dies, another takes its tables over within this time.
    lease_seconds: float = Field(default=5.0, ge=0.5, le=300)
    # Node processes serving this port (server/workers.py): several run as several nodes
    # (``<node_id>-w1``...), on PostgreSQL and Redis only.
    workers: int = Field(default=1, ge=1, le=256)
    # A worker whose event loop has not beaten its heartbeat for this long (hung, stopped)
    # is killed and started again; its tables fail over as after a crash.
    worker_watchdog_seconds: float = Field(default=10.0, ge=0.5, le=600)
    # What survives each young pass of the garbage collector (ten a second) is frozen, the
    # next passes skip it; everything is thawed for a full pass once the heap has grown by a
    # quarter since the last one, at most this often (server/collector.py); 0:
    # nothing frozen, CPython's own passes.
    collector_thaw_seconds: float = Field(default=60.0, ge=0)
    # Open a demo table of each main variant where house bots play (server/demo.py).
    demo: bool = False
    # The house bots' pause before each action, on average (uniform from half to 1.5 times).
    demo_think_seconds: float = Field(default=1.2, ge=0)

    @property
    def base_url(self) -> str:
        """Where this node's own HTTP answers, for clients it runs itself (the house bots)."""
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"


class Database(_Group):
    """The database and how the node waits on it."""

    # The embedded default's own directory (owner-only): its SQLite database and deck key.
    data_dir: Path = DEFAULT_DATA_DIR
    # Empty: SQLite in data_dir (stud.db).
    database_url: str = Field(
        default="",
        validation_alias=AliasChoices("STUD_DATABASE_URL", "DATABASE_URL"),
    )
    # A database call that has not answered in this long counts as an outage (the table
    # pauses and tries again) rather than hanging the table.
    db_timeout_seconds: float = Field(default=5.0, gt=0)
    # PostgreSQL connections a node keeps open, and how many more it may open at a peak;
    # a call that finds none free within db_timeout_seconds is an outage, not a hang.
    # (The actions of all the node's tables are written through one at a time.)
    db_pool_size: int = Field(default=10, ge=1, le=500)
    db_pool_overflow: int = Field(default=10, ge=0, le=500)


class DeckKeys(_Group):
    """The key that seals the deck of a hand in progress in the database
    (server/store/deck_seal.py), and when a whole deck is shown to the hand's players."""

    # 32 bytes in base64 or hex, or a file holding it (in production: a secret handed to the
    # process). Neither: the embedded SQLite keeps a key file beside its database, in its data
    # directory; PostgreSQL refuses to start. Old keys (a JSON list) are only read, for a
    # rotation (docs/operators.md).
    deck_key: SecretStr | None = None
    deck_key_file: str | None = None
    deck_old_keys: list[SecretStr] = Field(default_factory=list)
    # A stud-deck/2 hand's whole deck (every position, card and salt) published to the hand's
    # players that many seconds after it ended (GET /hands/{id}/deck); None: never (the
    # default: only an operator opens it, GET /admin/hands/{id}/deck; docs/fairness.md).
    publish_deck_after_seconds: float | None = Field(default=None, ge=0)


class Accounts(_Group):
    """New accounts and their sign-ins."""

    # Play money granted to every new player or bot account.
    starting_bankroll: int = Field(default=10_000, ge=0)
    token_ttl_seconds: int = Field(default=24 * 3600, ge=1)
    # Each node checks its signed-in websockets' tokens against the database this often:
    # the backstop for a logout or suspension whose message the bus lost.
    session_check_seconds: float = Field(default=5.0, gt=0)


class PasswordHashing(_Group):
    """Argon2id's cost (RFC 9106 low-memory profile by default; tune to the hardware), and
    the threads hashing on their own, with at most ``password_hash_queue`` hashes waiting:
    a login or registration beyond that is answered 503 server_busy at once."""

    password_time_cost: int = Field(default=3, ge=1)
    password_memory_kib: int = Field(default=64 * 1024, ge=8)
    password_parallelism: int = Field(default=4, ge=1)
    password_hash_threads: int = Field(default=2, ge=1, le=64)
    password_hash_queue: int = Field(default=16, ge=0)


class Limits(_Group):
    """The gateway's limits (server/edge/rate_limits.py), each kept per node, and the node's
    own load. "per minute" limits are token buckets: that many at once, refilled at that
    many a minute."""

    # Failed logins from one address (across all accounts); once spent, the address may
    # still log in to the accounts that logged in from it before.
    login_failures_per_address_per_minute: int = Field(default=20, ge=1)
    register_per_address_per_minute: int = Field(default=5, ge=1)
    # After this many failed logins in a row, an account waits before its next try: the
    # base delay, doubled with every further failure up to the cap (a success forgets);
    # only that account waits, from every address.
    login_free_failures: int = Field(default=3, ge=0)
    login_failure_delay_seconds: float = Field(default=1.0, gt=0)
    login_failure_delay_max_seconds: float = Field(default=300.0, gt=0)
    # New accounts from one address granted the starting bankroll in a window; more are
    # created with an empty wallet.
    starting_grants_per_address: int = Field(default=3, ge=0)
    starting_grant_window_seconds: float = Field(default=24 * 3600, gt=0)
    # Websocket messages a connection may send: a token bucket each for actions (with the
    # seed a seat gives each hand), chat and everything else (a second's rate, and the
    # burst on top of it). Actions and seeds over their rate are paced (they wait), others
    # refused; a bot on a quick table acts tens of times a second, a person once in a few
    # seconds.
    ws_actions_per_second: float = Field(default=50, gt=0)
    ws_actions_burst: int = Field(default=100, ge=1)
    ws_chat_per_second: float = Field(default=1, gt=0)
    ws_chat_burst: int = Field(default=5, ge=1)
    ws_other_per_second: float = Field(default=5, gt=0)
    ws_other_burst: int = Field(default=20, ge=1)
    # A connection refused this many messages for their rate is closed (code 4029); after
    # each such refusal it is not read until its bucket has a token again.
    ws_rate_strikes: int = Field(default=10, ge=1)
    # Snapshots this node serves to spectators (from its mirrors of the tables), a second,
    # all connections together, with the burst on top: a flood of watchers costs the node
    # a bounded share of its time, and never the tables' (a refusal is rate_limited).
    spectator_snapshots_per_second: float = Field(default=200, gt=0)
    spectator_snapshots_burst: int = Field(default=400, ge=1)
    # Open websockets per client address and per signed-in account, on this node.
    ws_sockets_per_address: int = Field(default=50, ge=1)
    ws_sockets_per_account: int = Field(default=8, ge=1)
    # The largest HTTP request body taken, in bytes (server/api/body_limit.py): every route
    # takes a small JSON object; a larger body is refused 413 body_too_large as it is read.
    http_body_max_bytes: int = Field(default=16 * 1024, ge=1024)
    # HTTP requests (websocket handshakes among them) read in one turn of the event loop;
    # more wait for the next turns, so that a storm of new sockets cannot hold up the
    # frames of players already seated.
    http_requests_per_turn: int = Field(default=1, ge=1)
    # Frames from websockets not signed in handled in one turn of the event loop, all such
    # connections together; more wait for the next turns (a flood of anonymous watchers
    # slows itself, never the seated players).
    ws_anonymous_frames_per_turn: int = Field(default=2, ge=1)
    # The node's event loop this many seconds behind (the median lateness of a timer over
    # the last second) for a second on end sheds new work (connections, logins, seats,
    # listings) with server_busy until it is back under half of it
    # (server/edge/overload.py); 0: never shed.
    overload_lag_seconds: float = Field(default=0.25, ge=0)


class Websockets(_Group):
    """The websocket itself: how long a silent one lives, compression, and who may open one."""

    # A websocket that sends nothing (not even a ping) for this long is closed.
    ws_idle_seconds: float = Field(default=60, gt=0)
    # permessage-deflate on websockets. Off by default: the frames are small JSON, and
    # compressing each costs more of the node's time than the bytes it saves.
    ws_compression: bool = False
    # Browser origins allowed to open a websocket (exact, as "https://play.example.com");
    # empty: the page's own host only. A client that sends no Origin (not a browser) may.
    ws_allowed_origins: list[str] = Field(default_factory=list)


class Operations(_Group):
    """What operators see of the node: its logs, its metrics, the back office's live list."""

    # Log lines as plain text, or as JSON objects one a line (with the table and its hand).
    log_format: Literal["text", "json"] = "text"
    # GET /metrics (Prometheus) answers anyone, like /healthz: operators keep it on their
    # own network. False: only staff (operator or support) tokens.
    metrics_public: bool = True
    # The back office's live list flags a table whose hand has not moved for this long
    # (above the action clock and the time bank together, which end any turn).
    stuck_after_seconds: float = Field(default=60, gt=0)
    # Log every stall of the event loop longer than this many milliseconds, with where the
    # loop was and the collector's share (server/edge/stalls.py); 0: no watch.
    stall_watch_ms: float = Field(default=0, ge=0)


_G = TypeVar("_G", bound=BaseModel)


def _view(group: type[_G], settings: Settings) -> _G:
    """The group's settings alone, as ``settings`` has them (already checked: not again)."""
    return group.model_construct(**{name: getattr(settings, name) for name in group.model_fields})


class Settings(
    Node,
    TableDefaults,
    Database,
    DeckKeys,
    Accounts,
    PasswordHashing,
    Limits,
    Websockets,
    Operations,
    BaseSettings,
):
    """Everything an operator may tune; defaults run one process on SQLite. Every group's
    settings under their flat names (the module's docstring says why)."""

    model_config = SettingsConfigDict(
        env_prefix="STUD_",
        extra="ignore",
        validate_by_name=True,
        validate_by_alias=True,
        frozen=False,
    )

    @property
    def node(self) -> Node:
        return _view(Node, self)

    @property
    def tables(self) -> TableDefaults:
        """How this node's tables play where their own records say nothing."""
        return _view(TableDefaults, self)

    @property
    def database(self) -> Database:
        return _view(Database, self)

    @property
    def deck_keys(self) -> DeckKeys:
        return _view(DeckKeys, self)

    @property
    def accounts(self) -> Accounts:
        return _view(Accounts, self)

    @property
    def password_hashing(self) -> PasswordHashing:
        return _view(PasswordHashing, self)

    @property
    def limits(self) -> Limits:
        return _view(Limits, self)

    @property
    def websockets(self) -> Websockets:
        return _view(Websockets, self)

    @property
    def operations(self) -> Operations:
        return _view(Operations, self)

    def deck_seal(self) -> DeckSeal:
        """The seal of this server's decks, or :class:`~server.store.deck_seal.DeckKeyError`."""
        return load_seal(
            self.database_url,
            key=self.deck_key.get_secret_value() if self.deck_key is not None else None,
            key_file=self.deck_key_file,
            old_keys=[key.get_secret_value() for key in self.deck_old_keys],
        )

    @model_validator(mode="after")
    def _database_in_the_data_dir(self) -> Settings:
        """No database named: the embedded default's, in the data directory."""
        if not self.database_url:
            self.database_url = default_database_url(self.data_dir)
        return self

    @field_validator("database_url")
    @classmethod
    def _async_driver(cls, url: str) -> str:
        """Accept ``postgres://`` and ``sqlite:///`` URLs and run them on async drivers."""
        scheme, sep, rest = url.partition("://")
        if sep and scheme in _ASYNC_DRIVERS:
            return f"{_ASYNC_DRIVERS[scheme]}://{rest}"
        return url
