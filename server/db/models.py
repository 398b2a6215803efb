"""The tables of the server, as SQLAlchemy 2 declarative models.

Portable SQL only (SQLite now, PostgreSQL later): named constraints, CHECKs that both
databases enforce, no dialect-specific defaults. Migrations in ``migrations/`` create
these tables; the server never calls ``create_all``.

Chips live in :class:`Wallet` rows. A wallet is a player's (one per account), the house
bankroll (the issuer of play money), the house's revenue (rake and time fees), or a table's
chip pool. Every change of a balance is a
:class:`LedgerEntry` made by ``server.accounts.ledger`` and nowhere else.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    false,
    func,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from server.db.types import BigId, Json, UTCDateTime, utcnow

# Named constraints: Alembic can then drop and alter them, on SQLite through batch mode.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Role(enum.StrEnum):
    """What an account may do: play (``player``, ``bot``: a program), run the cardroom
    (``operator``), or read the back office and change nothing (``support``)."""

    PLAYER = "player"
    OPERATOR = "operator"
    BOT = "bot"
    SUPPORT = "support"


STAFF_ROLES = (Role.OPERATOR, Role.SUPPORT)
"""The roles that may read the back office (``/admin``); only an operator may change it."""


class WalletKind(enum.StrEnum):
    PLAYER = "player"
    HOUSE = "house"
    TABLE = "table"
    TOURNAMENT = "tournament"  # a tournament's prize pool: the buy-ins, until paid as prizes


class TableStatus(enum.StrEnum):
    OPEN = "open"
    CLOSED = "closed"


def _one_of(column: str, values: type[enum.StrEnum]) -> str:
    return f"{column} IN ({', '.join(repr(v.value) for v in values)})"


class Account(Base):
    __tablename__ = "accounts"
    __table_args__ = (CheckConstraint(_one_of("role", Role), name="role"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Unique whatever its case (the index below): "Alice" may not impersonate "alice".
    username: Mapped[str] = mapped_column(String(32))
    password_hash: Mapped[str] = mapped_column(String(255))
    role: Mapped[str] = mapped_column(String(16), default=Role.PLAYER.value)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


Index("uq_accounts_username_lower", func.lower(Account.username), unique=True)


class Token(Base):
    """A bearer token; only its SHA-256 is stored, so a database leak leaks no session."""

    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)


class Wallet(Base):
    """A ledger account. Only the house bankroll, the issuer, may hold less than nothing."""

    __tablename__ = "wallets"
    __table_args__ = (
        CheckConstraint(_one_of("kind", WalletKind), name="kind"),
        CheckConstraint(f"balance >= 0 OR kind = '{WalletKind.HOUSE.value}'", name="balance"),
        CheckConstraint(
            f"(kind = '{WalletKind.PLAYER.value}') = (account_id IS NOT NULL)", name="owner"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # "player:<account id>", "house:bankroll", "house:revenue", "table:<table id>".
    name: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(16))
    account_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), unique=True, default=None
    )
    balance: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LedgerEntry(Base):
    """One movement of chips: ``amount`` leaves the debit wallet and reaches the credit one."""

    __tablename__ = "ledger_entries"
    __table_args__ = (
        CheckConstraint("amount > 0", name="amount"),
        CheckConstraint("debit_wallet_id <> credit_wallet_id", name="two_wallets"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    debit_wallet_id: Mapped[int] = mapped_column(
        ForeignKey("wallets.id", ondelete="RESTRICT"), index=True
    )
    credit_wallet_id: Mapped[int] = mapped_column(
        ForeignKey("wallets.id", ondelete="RESTRICT"), index=True
    )
    amount: Mapped[int] = mapped_column(BigInteger)
    # grant, buy_in, cash_out, rake, time_fee... (server.accounts.ledger.EntryKind)
    kind: Mapped[str] = mapped_column(String(32))
    # What caused it: a hand id, a table id, an operator's note.
    reference: Mapped[str | None] = mapped_column(String(128), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class TableRecord(Base):
    """A table as the operator created it: its full engine ``TableConfig`` as JSON."""

    __tablename__ = "tables"
    __table_args__ = (
        CheckConstraint(_one_of("status", TableStatus), name="status"),
        CheckConstraint("seats >= 2", name="seats"),
        CheckConstraint("min_buy_in > 0 AND max_buy_in >= min_buy_in", name="buy_in"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    variant: Mapped[str] = mapped_column(String(32))
    config: Mapped[dict[str, Any]] = mapped_column(Json)
    seats: Mapped[int] = mapped_column(Integer)
    min_buy_in: Mapped[int] = mapped_column(BigInteger)
    max_buy_in: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default=TableStatus.OPEN.value)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The fencing token of the node running the table: raised by every node that takes the
    # table over, checked by every write of the table (server.store.table_store).
    fence: Mapped[int] = mapped_column(BigInteger, default=0, server_default=text("0"))
    # Seconds; null: the node's defaults (STUD_ACTION_CLOCK_SECONDS, STUD_TIME_BANK_SECONDS).
    action_clock: Mapped[float | None] = mapped_column(Float, default=None)
    time_bank: Mapped[float | None] = mapped_column(Float, default=None)
    # Seconds between a hand that ended in a showdown and the next deal, to read it; null:
    # the node's default (STUD_SHOWDOWN_PAUSE_SECONDS).
    showdown_pause: Mapped[float | None] = mapped_column(Float, default=None)
    # An operator's pause (no new hand): why, and since when; null when not paused.
    paused_reason: Mapped[str | None] = mapped_column(Text, default=None)
    paused_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    # An operator asked to close the table; ``status`` turns closed once all are cashed out.
    closing_reason: Mapped[str | None] = mapped_column(Text, default=None)
    closed_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    # Spectators may chat at this table too (seated players always may).
    spectator_chat: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # Time collection: chips each seated player pays per period of this many seconds (0: none).
    time_fee: Mapped[int] = mapped_column(BigInteger, default=0, server_default=text("0"))
    time_fee_period: Mapped[float] = mapped_column(
        Float, default=1800.0, server_default=text("1800")
    )
    # A tournament's table (null: a cash table), and its number in the tournament. Its seats
    # hold tournament chips, which are not money: no chip pool, no ledger movement.
    tournament_id: Mapped[int | None] = mapped_column(
        ForeignKey("tournaments.id", ondelete="RESTRICT"), default=None, index=True
    )
    tournament_table: Mapped[int | None] = mapped_column(Integer, default=None)
    # The hand the tournament's director last let the table deal (it deals that one only).
    permitted_hand: Mapped[int | None] = mapped_column(Integer, default=None)
    # A mixed table: its rotation (engine.rotation JSON) and the first hand dealt under it,
    # ``{"rotation": {...} | null, "from_hand": N}``; null: a table of one game (``config``).
    rotation: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)


class LiveHand(Base):
    """The hand in progress at a table: its deck and its players, written before it is dealt.

    With :class:`LiveAction` it is all a node needs to resume the hand exactly where it was;
    the rows go in the transaction that records the finished (or cancelled) hand.
    """

    __tablename__ = "live_hands"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("tables.id", ondelete="RESTRICT"), primary_key=True
    )
    number: Mapped[int] = mapped_column(Integer)
    deck: Mapped[dict[str, Any]] = mapped_column(Json)  # {"order": [cards], "seed": int}
    players: Mapped[list[Any]] = mapped_column(Json)  # [[seat, player, stack], ...]
    # The rules it was dealt under (a change of the table's rules waits for the next hand).
    config: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
    # The seats dealt in while away (a tournament's rule 8): the hand killed theirs (null: none).
    absent: Mapped[list[int] | None] = mapped_column(Json, default=None)
    # A mixed table's hand: where it stands in the rotation (engine.rotation.Position JSON).
    rotation: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class LiveAction(Base):
    """One action (or time-out) of the hand in progress, written before anyone sees it."""

    __tablename__ = "live_actions"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("live_hands.table_id", ondelete="CASCADE"), primary_key=True
    )
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    action: Mapped[dict[str, Any]] = mapped_column(Json)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class HandRecord(Base):
    """A finished hand: its PHH text, its event log and its result (written by table actors)."""

    __tablename__ = "hands"
    __table_args__ = (UniqueConstraint("table_id", "number", name="uq_hands_table_number"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    table_id: Mapped[int] = mapped_column(ForeignKey("tables.id", ondelete="RESTRICT"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    phh: Mapped[str] = mapped_column(Text)
    events: Mapped[list[Any]] = mapped_column(Json)
    result: Mapped[dict[str, Any]] = mapped_column(Json)
    # The rules it was dealt under (server.store.table_config JSON): what a verifier replays it by.
    config: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
    # The seeds it was dealt from, sealed with the deck key (server/store/deck_seal.py): the whole
    # deck of a stud-deck/2 hand opened for an operator's audit (docs/fairness.md); None: none.
    deck: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
    # Chips raked from the hand into the house's revenue: its players' chips net to minus it.
    rake: Mapped[int] = mapped_column(BigInteger, default=0, server_default=text("0"))
    # A mixed table's hand: where it stood in the rotation (engine.rotation.Position JSON), the
    # journal the table's next hand's game is read from after a restart or a takeover.
    rotation: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class SeatRecord(Base):
    """A seat taken at a table and every chip its player has there (stack and chips added
    during a hand). The seats of a table hold exactly the chips of its pool (``table:<id>``),
    so a restart knows every chip; a table actor writes them, with its ledger movements."""

    __tablename__ = "seats"
    __table_args__ = (
        CheckConstraint("chips >= 0", name="chips"),
        CheckConstraint("seat >= 0", name="seat"),
        UniqueConstraint("table_id", "account_id", name="uq_seats_table_account"),
    )

    table_id: Mapped[int] = mapped_column(
        ForeignKey("tables.id", ondelete="RESTRICT"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), index=True
    )
    chips: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # Time collection: the end of the period the seat's player paid for (null: not paid).
    time_paid_until: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)


class HandPlayer(Base):
    """One player's part in a hand: seat, chips before and after. A hand's rows net to zero
    (chips move between the seats of one pool); they also index a player's hand history."""

    __tablename__ = "hand_players"

    hand_id: Mapped[int] = mapped_column(
        BigId, ForeignKey("hands.id", ondelete="CASCADE"), primary_key=True
    )
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer)
    starting: Mapped[int] = mapped_column(BigInteger)
    ending: Mapped[int] = mapped_column(BigInteger)


Index("ix_hand_players_account_hand", HandPlayer.account_id, HandPlayer.hand_id)


class AuditEntry(Base):
    """One operator action (or a node's move of a table), written in the transaction of the
    change it records and never changed after (``server.accounts.audit_log`` only appends):
    who, what, when, on what, the values before and after, and why."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    # None: a node acted on its own (a table moved between nodes).
    actor_id: Mapped[int | None] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), index=True
    )
    # The staff account's name when it acted, or ``node:<id>``.
    actor: Mapped[str] = mapped_column(String(80))
    # "table.create", "player.credit"... (server.accounts.audit_log.AuditAction)
    action: Mapped[str] = mapped_column(String(64), index=True)
    target_kind: Mapped[str] = mapped_column(String(32))  # "table", "player"...
    target_id: Mapped[str] = mapped_column(String(64))
    before: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
    after: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
    reason: Mapped[str | None] = mapped_column(Text, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)


Index("ix_audit_log_target", AuditEntry.target_kind, AuditEntry.target_id)


class Suspension(Base):
    """An account an operator suspended, while it is (unsuspending deletes the row; the
    audit log keeps the history): every token of the account is refused, and its login.
    A table of its own, so an account row and every query of it stay as they were."""

    __tablename__ = "account_suspensions"

    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="CASCADE"), primary_key=True
    )
    suspended_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The operator's name when they acted (as the audit log keeps it).
    suspended_by: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text)


class TournamentStatus(enum.StrEnum):
    """A tournament's life: taking entries, then played, then over (finished, or cancelled
    with every entry refunded)."""

    REGISTERING = "registering"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class EntryStatus(enum.StrEnum):
    """An entry's life: registered (buy-in and fee paid), then playing, then out; or taken
    back before the start (``unregistered``) or with the tournament (``refunded``)."""

    REGISTERED = "registered"
    PLAYING = "playing"
    OUT = "out"
    UNREGISTERED = "unregistered"
    REFUNDED = "refunded"


class TournamentRecord(Base):
    """A tournament as an operator made it: its format (``engine.tournament.spec``) as JSON,
    and the commitment to the seed of its seat draw, published before anyone registers."""

    __tablename__ = "tournaments"
    __table_args__ = (CheckConstraint(_one_of("status", TournamentStatus), name="status"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    # The template it was made from, if any ("stud-sng-9"...).
    template: Mapped[str | None] = mapped_column(String(32), default=None)
    spec: Mapped[dict[str, Any]] = mapped_column(Json)
    status: Mapped[str] = mapped_column(
        String(16), default=TournamentStatus.REGISTERING.value, index=True
    )
    # A scheduled tournament's start; null for a sit-and-go (it starts when it fills).
    starts_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    created_by: Mapped[str] = mapped_column(String(32))
    # SHA-256 (hex) of the seat draw's seed, and the seed sealed at rest with the deck key.
    draw_commitment: Mapped[str] = mapped_column(String(64))
    draw_seed: Mapped[dict[str, Any]] = mapped_column(Json)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    cancelled_reason: Mapped[str | None] = mapped_column(Text, default=None)
    # The node whose director runs it, until when (a lease in the row, renewed each round:
    # another node takes the tournament over once it lapses).
    director_node: Mapped[str | None] = mapped_column(String(80), default=None)
    director_until: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)


class TournamentEntry(Base):
    """One paid entry of a player (a re-entry is another row, ``number`` counting them), the
    request that made it (a retried registration finds it), its place and prize once out."""

    __tablename__ = "tournament_entries"
    __table_args__ = (
        CheckConstraint(_one_of("status", EntryStatus), name="status"),
        CheckConstraint("number >= 1", name="number"),
        UniqueConstraint(
            "tournament_id", "account_id", "number", name="uq_tournament_entries_number"
        ),
        UniqueConstraint(
            "tournament_id", "account_id", "request_id", name="uq_tournament_entries_request"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="RESTRICT"), index=True
    )
    account_id: Mapped[int] = mapped_column(
        ForeignKey("accounts.id", ondelete="RESTRICT"), index=True
    )
    number: Mapped[int] = mapped_column(Integer, default=1)
    request_id: Mapped[str | None] = mapped_column(String(64), default=None)
    status: Mapped[str] = mapped_column(String(16), default=EntryStatus.REGISTERED.value)
    buy_in: Mapped[int] = mapped_column(BigInteger)
    fee: Mapped[int] = mapped_column(BigInteger)
    registered_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    left_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    place: Mapped[int | None] = mapped_column(Integer, default=None)
    prize: Mapped[int | None] = mapped_column(BigInteger, default=None)


class TournamentFact(Base):
    """One fact of a running tournament, in the order its director took it: the start (its
    players), each hand of its tables (the chips of its players at its start and end), a
    pause, a resume, the clock's wake, a player's deal proposed, accepted or declined (and,
    after the fact that decided it, the record of a deal offered, made or withdrawn:
    ``server.tournaments.final_deals``). Replayed in ``seq`` order, the facts give the
    director's state back exactly (``engine.tournament.run``); never changed once written."""

    __tablename__ = "tournament_facts"
    __table_args__ = (UniqueConstraint("tournament_id", "seq", name="uq_tournament_facts_seq"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(
        ForeignKey("tournaments.id", ondelete="RESTRICT"), index=True
    )
    seq: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(32))
    # Seconds since the epoch: the director's clock when it took the fact.
    at: Mapped[float] = mapped_column(Float)
    data: Mapped[dict[str, Any]] = mapped_column(Json)


class TournamentRequest(Base):
    """What a player or an operator asked of a running tournament, waiting for its director
    (``server.tournaments.requests``): taken in ``id`` order as a fact of the journal
    (``fact_seq``) or refused (``outcome`` holds the code), by whichever node directs it."""

    __tablename__ = "tournament_requests"
    __table_args__ = (
        UniqueConstraint(
            "tournament_id", "asked_by", "request_id", name="uq_tournament_requests_request_id"
        ),
        Index("ix_tournament_requests_waiting", "tournament_id", "done_at"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="RESTRICT"))
    kind: Mapped[str] = mapped_column(String(32))
    data: Mapped[dict[str, Any]] = mapped_column(Json)
    # Who asked: a player's name, or "operator:<name>".
    asked_by: Mapped[str] = mapped_column(String(80))
    request_id: Mapped[str | None] = mapped_column(String(64), default=None)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    done_at: Mapped[datetime | None] = mapped_column(UTCDateTime, default=None)
    fact_seq: Mapped[int | None] = mapped_column(Integer, default=None)
    # {"ok": true, ...} once taken, or {"code": ..., "message": ...} once refused.
    outcome: Mapped[dict[str, Any] | None] = mapped_column(Json, default=None)
