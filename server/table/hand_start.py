"""The start of a table's hand, as its actor deals it: the next hand's deck committed to
ahead of its deal (client seeds come in meanwhile), and the deal itself.

A hand starts between hands, when its clock falls due: a mixed table switches to the game it
deals next, the time fees due are collected (a stack that cannot pay sits out), and the hand is
written ahead (:mod:`server.table.journal`) before anyone sees it, then dealt and told. The
actor's parts it uses are :class:`Port`'s.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from typing import Protocol

from engine.cards import Deck
from engine.events import Event
from engine.table import Table
from engine.table_events import DeckCommitted, HandNumber
from server.store.records import LiveHandState
from server.table import dealing, mixed, time_collection
from server.table.journal import Journal
from server.table.operators import TableOps
from server.table.player_commands import PlayerState
from server.table.ports import TableSettings
from server.table.publisher import Publisher


class Port(Protocol):
    """What dealing a hand needs of the table's actor."""

    table_id: int
    table: Table
    settings: TableSettings
    ops: TableOps
    mix: mixed.TableRotation | None
    journal: Journal
    publisher: Publisher
    clock: Callable[[], float]
    wall_clock: Callable[[], float]
    rng_factory: Callable[[], random.Random] | None
    deck_factory: Callable[[], Deck] | None
    deck_method: str
    next_deal: dealing.NextDeal | None
    hand_number: int
    between_hands: asyncio.Event
    last_action_at: float | None

    @property
    def holds_play(self) -> bool: ...

    def player_state(self, player: str) -> PlayerState: ...

    def dealt(self, players: Sequence[tuple[int, str, int]]) -> None: ...

    def tell(self, events: list[Event]) -> None: ...

    def tell_hand(self, events: list[Event], after: list[Event] | None = None) -> None: ...

    async def finish_hand(self) -> None: ...


def commit_next_hand(actor: Port) -> None:
    """Draw the next hand's server seed and publish its commitment, unless done: client
    seeds are taken from then until its deal (a stacked deck has none)."""
    number = actor.hand_number + 1
    if actor.deck_factory is not None or (
        actor.next_deal is not None and actor.next_deal.number == number
    ):
        return
    actor.next_deal = dealing.NextDeal(
        number, dealing.server_seed(actor.rng_factory), actor.table_id, actor.deck_method
    )
    actor.publisher.publish(DeckCommitted(hand=number, commitment=actor.next_deal.commitment))


async def start_hand(actor: Port) -> None:
    """Deal the next hand, if two or more are dealt in and nothing holds play: the game a
    mixed table deals next, the time fees due, the hand written ahead, then told."""
    if len(actor.table.dealt_in()) < 2 or actor.holds_play:
        return
    mixed.switch_game(actor.table, actor.mix, actor.hand_number + 1)  # between hands only
    due = time_collection.fees_due(
        actor.table,
        fee=actor.settings.time_fee,
        period=actor.settings.time_fee_period,
        now=actor.wall_clock(),
        paid_until=lambda player: actor.player_state(player).time_paid_until,
    )
    for n in due.short:  # a stack that cannot pay sits out
        occupant = actor.table.seats[n]
        assert occupant is not None
        actor.tell(actor.table.sit_out(n, busted=True))
        actor.player_state(occupant.player).sat_out_at = actor.clock()
    fees = due.fees
    dealt = actor.table.dealt_in()
    if len(dealt) < 2:
        return
    seats = actor.table.seats
    players = [
        (n, seats[n].player, seats[n].stack - fees.get(n, 0))  # type: ignore[union-attr]
        for n in dealt
    ]
    number = actor.hand_number + 1
    commit_next_hand(actor)  # dealt without the pause between hands: no seed came
    committed, actor.next_deal = actor.next_deal, None
    deal = committed.deal(players) if committed is not None else None
    deck, deck_record = dealing.new_deck(actor.deck_factory, deal)
    config = actor.ops.config_json(actor.table.config)
    game = actor.mix.schedule(number, players=len(dealt)) if actor.mix is not None else None
    paid_until = due.paid_until
    live = LiveHandState(
        actor.table_id,
        number,
        deck_record,
        players,
        config=config,
        time_fees={seats[n].player: fee for n, fee in fees.items()},  # type: ignore[union-attr]
        time_paid_until=paid_until,
        # Away and dealt in (a tournament table's players sitting out): killed at the deal.
        absent=tuple(n for n in dealt if seats[n].sitting_out),  # type: ignore[union-attr]
        rotation=game.position.to_dict() if game is not None else None,
    )
    await actor.journal.start_hand(live)
    for n, fee in fees.items():  # written with the hand's start: out of the stacks now
        occupant = seats[n]
        assert occupant is not None
        actor.tell(actor.table.collect_time(n, fee))
        actor.player_state(occupant.player).time_paid_until = paid_until
    actor.hand_number = number
    hand = actor.table.start_hand(deck)
    actor.between_hands.clear()
    actor.last_action_at = actor.clock()
    actor.dealt(players)
    actor.publisher.publish(HandNumber(hand=actor.hand_number))
    told = actor.mix.dealt(number, game) if actor.mix is not None else None
    if told is not None:  # a mixed table's game, and where its rotation stands
        actor.publisher.publish(told)
    actor.tell_hand(list(hand.events))
    # The next hand's seeds may come in all through this one.
    commit_next_hand(actor)
    if hand.is_over():  # every hand but one killed at the deal (a tournament's rule 8)
        await actor.finish_hand()
