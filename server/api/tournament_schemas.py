"""The tournaments' request and response bodies (``/tournaments``, ``/admin/tournaments``):
a format typed field by field for the OpenAPI schema, the engine judging the rules between
its fields (``bad_structure``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt

from server.api.schemas import MOST_SEATS, FairnessPublic, HandPlayerPublic
from server.store.table_config import CHIPS

Chips = Annotated[StrictInt, Field(ge=0, le=CHIPS)]


class LevelBody(BaseModel):
    """A level: its stakes (the table's ante, bring-in, small and big bet) and its length,
    in minutes or in hands (one of them)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["level"] = "level"
    ante: Chips
    bring_in: Chips
    small_bet: Chips
    big_bet: Chips
    minutes: float | None = Field(default=None, gt=0, le=24 * 60)
    hands: StrictInt | None = Field(default=None, gt=0, le=10_000)


class BreakBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: Literal["break"]
    minutes: float = Field(gt=0, le=24 * 60)


class StructureBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    starting_chips: StrictInt = Field(gt=0, le=CHIPS)
    entries: list[LevelBody | BreakBody] = Field(min_length=1, max_length=200)


class RebuysBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    levels: StrictInt = Field(gt=0, le=200, description="rebuys during the first this many levels")
    chips: StrictInt = Field(gt=0, le=CHIPS, description="the chips a rebuy buys")
    add_on_chips: StrictInt | None = Field(
        default=None, gt=0, le=CHIPS, description="one add-on at the end of the rebuys"
    )


class TournamentSpecBody(BaseModel):
    """A tournament's format (docs/tournaments.md, "Formats"); the engine judges the rules
    between its fields (``bad_structure``, with the field at fault)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["sit_and_go", "scheduled"]
    variant: str = Field(min_length=1, max_length=32, description="a game: seven_card_stud...")
    betting: Literal["fixed_limit", "pot_limit", "no_limit"]
    seats_per_table: StrictInt = Field(ge=2, le=MOST_SEATS)
    structure: StructureBody
    buy_in: Chips = Field(description="money, to the prize pool")
    fee: Chips = Field(description="money, to the house")
    min_entrants: StrictInt = Field(ge=2, le=100_000)
    max_entrants: StrictInt = Field(ge=2, le=100_000)
    payout_table: str = Field(min_length=1, max_length=32, description="sit_and_go, scheduled")
    late_registration_levels: StrictInt | None = Field(default=None, gt=0, le=200)
    re_entries: StrictInt = Field(default=0, ge=0, le=100)
    rebuys: RebuysBody | None = None

    def posted(self) -> dict[str, Any]:
        """The format as the engine reads it (``TournamentSpec.from_dict``)."""
        return self.model_dump(exclude_none=True)


class TournamentCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    template: str | None = Field(
        default=None, description="a shipped format by name (GET /tournaments/templates)"
    )
    spec: TournamentSpecBody | None = Field(
        default=None,
        description="a full format (kind, game, structure, money, options), instead of a "
        "template; refused bad_structure with the field at fault",
    )
    starts_at: datetime | None = Field(
        default=None, description="a scheduled tournament's start (aware time, to come)"
    )


class TournamentUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=64)
    spec: TournamentSpecBody | None = None
    starts_at: datetime | None = None
    reason: str | None = Field(default=None, max_length=500, description="kept in the audit log")


class RegistrationCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    request_id: str = Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="the client's id of this request: sent again, it finds the entry it made",
    )


class TournamentSummaryPublic(BaseModel):
    id: int
    name: str
    kind: str
    variant: str
    betting: str
    buy_in: int
    fee: int
    status: str
    starts_at: datetime | None
    entrants: int
    max_entrants: int
    prize_pool: int


class EntryPublic(BaseModel):
    player: str
    number: int = Field(description="1, or the count of re-entries before it plus one")
    status: str = Field(
        description="registered, playing, out, disqualified (out with no place), "
        "unregistered, refunded"
    )
    place: int | None
    prize: int | None
    rebuys: int = Field(default=0, description="the rebuys bought with this entry")
    add_on: bool = Field(default=False, description="whether it took the add-on")
    chips: int | None = Field(
        default=None,
        description="a playing entry's tournament chips at its last hand's end; none otherwise",
    )


class DealSharePublic(BaseModel):
    player: str
    chips: int = Field(description="their tournament chips when the amounts were worked out")
    amount: int = Field(description="money: what the deal pays them now")
    accepted: bool


class DealPublic(BaseModel):
    """A deal at the final table: proposed (its amounts shown once the hand in play ends),
    offered (shown, waiting for every player left to accept), or made."""

    number: int
    status: Literal["proposed", "offered", "made"]
    method: Literal["chip_chop", "icm"]
    played_for: int = Field(description="kept back from first place's prize: the winner's")
    proposer: str
    prizes: list[int] = Field(description="the prizes still to pay it shares, first place first")
    shares: list[DealSharePublic] = Field(description="in the final table's seat order")
    expires_at: datetime | None = Field(description="an offer's end, unless all accept first")


class TableSeatPublic(BaseModel):
    seat: int
    player: str
    stack: int = Field(description="their tournament chips at their last hand's end")


class TournamentTableSeatsPublic(BaseModel):
    """One of a running tournament's tables, as its director's journal seats it."""

    number: int = Field(description="the table's number in the tournament")
    table_id: int | None = Field(description="the table's id (watch it over the websocket)")
    seats: list[TableSeatPublic] = Field(description="its players, by seat")


class YourEntryPublic(BaseModel):
    """The signed-in caller's entry (their entry in play, else their latest)."""

    status: str = Field(
        description="registered, playing, out, disqualified, unregistered or refunded"
    )
    number: int = Field(description="1, or the count of re-entries before it plus one")
    stack: int | None = Field(description="playing: your chips at your last hand's end")
    table_id: int | None = Field(description="playing: your table's id (watch it)")
    table_number: int | None = Field(description="playing: your table's number")
    seat: int | None = Field(description="playing: your seat there")
    place: int | None
    prize: int | None


class TournamentPublic(TournamentSummaryPublic):
    template: str | None
    spec: dict[str, Any]
    draw_commitment: str = Field(description="SHA-256 of the seat draw's seed, revealed after it")
    payouts: list[int] = Field(
        description="the prizes by place for the entries and the prize pool so far (fixed "
        "once late registration, the rebuys and the add-on are over)"
    )
    entries: list[EntryPublic] | None = Field(
        description="every entry, in the order they came; none when asked ?entries=false"
    )
    tables: list[TournamentTableSeatsPublic] = Field(
        default_factory=list,
        description="while it runs, its tables by number with their players and chips",
    )
    you: YourEntryPublic | None = Field(
        default=None, description="your own entry, signed in; none for anyone else"
    )
    cancelled_reason: str | None
    deal: DealPublic | None = Field(
        default=None, description="the deal proposed or offered now, else the last deal made"
    )


class RegistrationPublic(BaseModel):
    tournament_id: int
    status: str
    number: int
    buy_in: int
    fee: int
    created: bool = Field(description="false: this request_id had registered already")


class PurchaseCreate(BaseModel):
    """A rebuy or the add-on asked of a running tournament."""

    model_config = ConfigDict(extra="forbid")

    request_id: str = Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="the client's id of this request: sent again, it finds the request it "
        "filed (paid once)",
    )


class OperatorRequestBody(BaseModel):
    """An operator's request to a running tournament (pause, resume...)."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(min_length=1, max_length=500, description="why (kept in the audit log)")
    request_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="sent again, it finds the request it filed instead of filing another",
    )


class TournamentRequestPublic(BaseModel):
    id: int
    kind: str
    data: dict[str, Any]
    asked_by: str
    request_id: str | None
    status: Literal["waiting", "done", "refused"] = Field(
        description="waiting for the tournament's director, taken (done), or refused"
    )
    fact_seq: int | None = Field(description="its fact in the tournament's journal, once done")
    outcome: dict[str, Any] | None


# ---------------------------------------------------------------------- an operator's moves,
# disqualifications, added time, and the results

PlayerName = Annotated[str, Field(min_length=1, max_length=32, description="the player's name")]


class MoveRequestBody(OperatorRequestBody):
    """Move a player between their hands: to ``table`` and ``seat`` (0 up to the seats per
    table less one), or to the table's last seat to open when ``seat`` is left out, or to the
    table the director picks (the fewest players) when ``table`` is left out too."""

    player: PlayerName
    table: StrictInt | None = Field(
        default=None, ge=1, le=100_000, description="the tournament's table number"
    )
    seat: StrictInt | None = Field(default=None, ge=0, lt=MOST_SEATS)

    def data(self) -> dict[str, Any]:
        return self.model_dump(include={"player", "table", "seat"}, exclude_none=True)


class DisqualifyRequestBody(OperatorRequestBody):
    """Disqualify a player: out with no place and no prize, their chips out of play."""

    player: PlayerName

    def data(self) -> dict[str, Any]:
        return {"player": self.player}


class AddTimeRequestBody(OperatorRequestBody):
    """Lengthen the level (or break) in play."""

    minutes: float = Field(gt=0, le=24 * 60, description="the time added, in minutes")

    def data(self) -> dict[str, Any]:
        return {"minutes": self.minutes}


class StakesPublic(BaseModel):
    ante: int
    bring_in: int
    small_bet: int
    big_bet: int


class ClockPublic(BaseModel):
    level: int = Field(description="the level in play (during a break, the level just played)")
    on_break: bool
    paused: bool
    stakes: StakesPublic | None = Field(description="the level's stakes; none on a break")
    next_stakes: StakesPublic | None
    seconds_left: float | None = Field(description="a timed level or break: its time left")
    hands_left: int | None = Field(description="a level of hands: the hands left to begin")
    hand_for_hand: bool


class SeatedPublic(BaseModel):
    seat: int
    player: str
    chips: int = Field(description="at their last hand's end")


class StandingTablePublic(BaseModel):
    number: int = Field(description="the table's number in the tournament")
    table_id: int | None = Field(description="the table's id (GET /admin/tables...)")
    dealing: bool = Field(description="playing a hand, or allowed to deal its next")
    players: list[SeatedPublic]


class WaitingMovePublic(BaseModel):
    player: str
    table: int | None
    seat: int | None


class WaitingPublic(BaseModel):
    """An operator's moves and disqualifications waiting for the player's hand to end."""

    moves: list[WaitingMovePublic]
    disqualifications: list[str]


class ChipsPublic(BaseModel):
    issued: int = Field(description="every tournament chip given out")
    in_play: int = Field(description="the players' stacks, at their tables' last hand ends")
    removed: int = Field(description="out of play with disqualified players")


class StandingPublic(BaseModel):
    player: str
    entry: int = Field(description="the entry's number (re-entries count up)")
    status: str = Field(description="registered, playing, out or disqualified")
    place: int | None
    prize: int | None
    chips: int = Field(description="their chips now (the winner's: every chip in play)")
    chips_removed: int | None = Field(description="a disqualified player's chips, out of play")


class TournamentResultsPublic(BaseModel):
    """A tournament's results once over; while it runs, its standing now."""

    tournament_id: int
    name: str
    status: str
    started_at: datetime | None
    finished_at: datetime | None
    entries: int
    players: int
    prize_pool: int = Field(description="the pool at the start (before it, as it stands)")
    prizes_paid: int
    payouts: list[int] = Field(description="the prizes by place (a forfeited place's shared)")
    chips: ChipsPublic
    players_left: int
    disqualified: list[str]
    clock: ClockPublic | None = Field(description="none before the start and once over")
    tables: list[StandingTablePublic]
    waiting: WaitingPublic
    standings: list[StandingPublic] = Field(
        description="players still in by chips, then places, best first; disqualified last"
    )


RequestId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="the client's id of this request: sent again, it finds the request it filed",
    ),
]


class DealProposalBody(BaseModel):
    """A deal proposed at the final table (docs/tournaments.md, "Deals at the final table")."""

    model_config = ConfigDict(extra="forbid")

    method: Literal["chip_chop", "icm"]
    played_for: Chips = Field(
        default=0, description="kept back from first place's prize, played on for"
    )
    request_id: RequestId


class DealAnswerBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    offer: StrictInt = Field(ge=1, le=2**31 - 1, description="the deal's number, as shown")
    request_id: RequestId


class DealRequestPublic(TournamentRequestPublic):
    deal: DealPublic | None = Field(description="the deal as it stands after the request")


class DrawPublic(BaseModel):
    method: str = Field(description="stud-seat-draw/1 (docs/fairness.md)")
    commitment: str = Field(description="SHA-256 of the seed, published before the start")
    seed: str = Field(description="the seed of every draw of the tournament, in hex")


class FactPublic(BaseModel):
    seq: int = Field(description="1, 2, 3... in the order the director took them")
    kind: str = Field(
        description="started, hand, woke, paused, resumed, time_added, moved, disqualified..."
    )
    at: float = Field(description="when, in seconds since the epoch (the clock's facts)")
    data: dict[str, Any]


class TournamentTablePublic(BaseModel):
    table: int = Field(description="the table's number in the tournament")
    table_id: int


class TournamentRecordPublic(BaseModel):
    """A finished tournament as stud-verify checks it (docs/fairness.md): its seat draw with
    its seed revealed, its journal, its places and prizes; its hands, a page at a time, at
    GET /tournaments/{id}/hands."""

    id: int
    name: str
    status: str
    spec: dict[str, Any]
    draw: DrawPublic
    journal: list[FactPublic] = Field(description="every fact of play the director journaled")
    entries: list[EntryPublic]
    tables: list[TournamentTablePublic]
    hands: int = Field(description="how many hands its tables played")
    started_at: datetime | None
    finished_at: datetime | None


class TournamentHandPublic(BaseModel):
    """A tournament's hand as everyone at its table saw it: the upcards and the cards shown
    at the showdown, each opened against the deck's commitment; no down card kept hidden."""

    id: int
    table_id: int
    table: int = Field(description="the table's number in the tournament")
    number: int = Field(description="the hand's number at its table")
    level: int | None = Field(description="the level it was played at")
    seat: None = Field(description="none: the hand as a spectator saw it")
    players: list[HandPlayerPublic]
    result: dict[str, Any]
    events: list[dict[str, Any]]
    fairness: FairnessPublic | None
    created_at: datetime


class TournamentHandPagePublic(BaseModel):
    hands: list[TournamentHandPublic]
    next_after: int | None = Field(description="pass as ?after= for the next page")
