"""A table's actor built from what the database holds, as a node takes the table.

The seated players with the chips their seat rows hold, the hand numbers carried on, and
the hand in progress dealt again from its stored deck and replayed to where it was (or,
when that cannot be done, voided with every chip back: ``TableActor.resume``). A table
whose actor died on this node is built again with what that actor knew of its players; a
table another node ran a moment ago keeps its players as that node last told
(``server.cardroom.gossip``); after a restart of the cardroom nobody is connected yet, so everyone
sits out. At a tournament's table nobody is sat out for it: a disconnected tournament player
keeps their seat and is dealt in, playing by the clock (sitting out there is blinded off, the
hand killed at the deal); its director's permit and stakes are the table's row's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from engine.cards import Deck
from engine.table_events import TableResumed
from server.bus.memory import Bus
from server.cardroom.gossip import HeardTable
from server.cardroom.table_stats import CountingStore, TableStats
from server.db.models import TableRecord
from server.metrics import Metrics
from server.settings import Settings
from server.store import table_store, tables
from server.store.deck_seal import DeckSeal
from server.store.write_ahead import WriteAhead
from server.table import mixed
from server.table.actor import TableActor
from server.table.lease import LeaseProof
from server.table.level_games import LevelGames
from server.table.ports import TableSettings


class Room(Protocol):
    """What building an actor takes of the node's cardroom (a ``Cardroom``)."""

    node_id: str
    bus: Bus
    settings: Settings
    seal: DeckSeal
    write_ahead: WriteAhead
    metrics: Metrics

    @property
    def sessionmaker(self) -> async_sessionmaker[AsyncSession]: ...

    @property
    def deck_factory(self) -> Callable[[], Deck] | None: ...


async def build_actor(
    room: Room,
    record: TableRecord,
    stats: TableStats,
    fence: int,
    lease: LeaseProof,
    *,
    previous: TableActor | None = None,
    seen: HeardTable | None = None,
) -> TableActor:
    """The table's actor, not yet started. ``previous``: this node's actor that died;
    ``seen``: the table as the node that ran it last told."""
    async with room.sessionmaker() as session:
        seats = await table_store.seated_players(session, table_id=record.id)
        time_paid = await table_store.time_paid(session, table_id=record.id)
        last = await table_store.last_hand_number(session, table_id=record.id)
        live = await table_store.live_hand(session, table_id=record.id, seal=room.seal)
        journal = await tables.last_hand(session, table_id=record.id) if record.rotation else None
    store = table_store.DatabaseTableStore(
        room.sessionmaker, seal=room.seal, fence=fence, write_ahead=room.write_ahead
    )
    actor = TableActor(
        record.id,
        tables.table_config(record),
        bus=room.bus,
        store=CountingStore(store, stats),
        settings=table_settings(room.settings, record),
        deck_factory=room.deck_factory,
        metrics=room.metrics,
        # A new run numbers its events from a block past anything the previous node may
        # have sent: clients see the gap and resync. The same run started again after a
        # crash carries on its numbers.
        run=previous.run_number if previous is not None else fence,
        lease=lease,
        tournament_id=record.tournament_id,
    )
    actor.permitted_hand = record.permitted_hand
    # A mixed table: its rotation, and where the journal's last hand left it (the next hand's
    # game follows from that: server.table.mixed); this node's actor that died knew it too.
    config = tables.table_config(record)
    actor.mix = (
        LevelGames.of_level(record.rotation, config)  # a mixed tournament's: the row's level
        if record.tournament_id is not None
        else mixed.TableRotation.of_record(record.rotation, config)
    )
    if previous is not None and previous.mix is not None:
        actor.mix = previous.mix
    elif actor.mix is not None and journal is not None:
        actor.mix.remember(*journal)
    if previous is not None:
        sitting_out = {s.player for s in previous.table.seats if s is not None and s.sitting_out}
        actor.restore(
            seats,
            hand_number=max(last, previous.hand_number),
            seq=previous.seq,
            sitting_out=sitting_out,
            waiting=previous.waiting,
            connections={p: s.connections for p, s in previous.players.items()},
            time_paid=time_paid,
            check_when_free={p for p, s in previous.players.items() if s.check_when_free},
            ops=previous.ops,
        )
        actor.permitted_hand = previous.permitted_hand
        return actor
    actor.ops.restore(paused=record.paused_reason, closing=record.closing_reason)
    # A table another node was running a moment ago keeps its players as they were;
    # after a restart of the cardroom nobody is connected yet, so everyone sits out.
    away = None if record.tournament_id is None else set[str]()  # None: everyone sits out
    actor.restore(
        seats,
        hand_number=last,
        sitting_out=set(seen.sitting_out) if seen is not None else away,
        waiting=list(seen.waiting) if seen is not None else None,
        time_paid=time_paid,
        check_when_free=set(seen.check_when_free) if seen is not None else None,
    )
    resumed = None
    if live is not None and live.number > last:
        resumed = actor.resume(live)
    if resumed and seen is not None:
        # What players asked for the end of the resumed hand (leave, sit out) still holds,
        # and who sat out during it: the table goes on acting for them (server.table.absence).
        # Who was away at the deal (a tournament's rule 8) sits out as the node last told.
        absent = {p for seat, p, _ in live.players if seat in live.absent} if live else set()
        for player in {*seen.after_hand, *seen.sitting_out, *absent}:
            wishes = seen.after_hand.get(player, {})
            actor.table.keep_wishes(
                player,
                leaving=bool(wishes.get("leaving")),
                sit_out_next_hand=bool(wishes.get("sit_out")),
                sitting_out=player in seen.sitting_out,
            )
    if resumed is not None or seen is not None:
        actor.announce(
            TableResumed(
                hand=live.number if live is not None and resumed else None,
                node=room.node_id,
                resumed=bool(resumed),
            )
        )
    return actor


def table_settings(settings: Settings, record: TableRecord) -> TableSettings:
    """The table's rules of play: its record's, the node's table defaults
    (``Settings.tables``) where it sets none."""
    defaults = settings.tables
    return TableSettings(
        seat_count=record.seats,
        min_buy_in=record.min_buy_in,
        max_buy_in=record.max_buy_in,
        action_clock=defaults.action_clock_seconds
        if record.action_clock is None
        else record.action_clock,
        time_bank=defaults.time_bank_seconds if record.time_bank is None else record.time_bank,
        pause_between_hands=defaults.pause_between_hands_seconds,
        showdown_pause=defaults.showdown_pause_seconds
        if record.showdown_pause is None
        else record.showdown_pause,
        waiting_offer=defaults.waiting_offer_seconds,
        sit_out_limit=defaults.sit_out_limit_seconds,
        spectator_chat=record.spectator_chat,
        time_fee=record.time_fee,
        time_fee_period=record.time_fee_period,
    )
