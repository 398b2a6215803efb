"""A table's hands as its store keeps them: the deck written down before the deal, the
hand dealt again from it, and the record of a finished or voided hand."""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine import fair, fair2
from engine.cards import Deck
from engine.errors import PhhError
from engine.events import announced
from engine.hand import Hand
from engine.phh_export import export
from engine.table import Seat, Table
from engine.table_events import HandCancelled
from engine.variants import TableConfig
from server.store.records import FinishedHand, LiveHandState
from server.store.table_config import config_to_json
from server.table.moves import move_from_row

FairDeal = fair.FairDeal | fair2.Deal2
"""A provably fair deal as the server deals it: ``stud-deck/2``, or ``stud-deck/1`` (the
method of older hands, still dealt when a table is made with it: tests of old histories)."""


@dataclass(slots=True)
class NextDeal:
    """The server seed of the table's next hand, committed to before it is dealt, and the
    client seeds its players sent since (player -> seed; the last one of each counts).
    ``stud-deck/2`` commits to the whole deck, card by card, as soon as it is made."""

    number: int
    server_seed: bytes
    table_id: int
    method: str = fair2.METHOD
    seeds: dict[str, str] = field(default_factory=dict)
    committed: fair2.CommittedDeck | None = None

    def __post_init__(self) -> None:
        if self.method == fair2.METHOD:
            self.committed = fair2.CommittedDeck(
                self.server_seed, table_id=self.table_id, number=self.number
            )
        elif self.method != fair.METHOD:
            raise ValueError(f"no deck method {self.method!r}")

    @property
    def commitment(self) -> str:
        if self.committed is not None:
            return self.committed.commitment
        return fair.commitment(self.server_seed)

    def deal(self, players: Sequence[tuple[int, str, int]]) -> FairDeal:
        """The hand's seeds as dealt: the client seeds of the players dealt in, by seat."""
        seeds = tuple(sorted((seat, self.seeds[p]) for seat, p, _ in players if p in self.seeds))
        if self.committed is not None:
            return self.committed.deal(seeds)
        return fair.FairDeal(self.server_seed, self.table_id, self.number, seeds)


def server_seed(rng_factory: Callable[[], random.Random] | None = None) -> bytes:
    """A fresh server seed: 32 bytes from ``secrets``; ``rng_factory``: a seeded source for
    tests and benchmarks that need the same hands every run."""
    if rng_factory is None:
        return secrets.token_bytes(fair.SEED_BYTES)
    return rng_factory().randbytes(fair.SEED_BYTES)


def new_deck(
    deck_factory: Callable[[], Deck] | None, deal: FairDeal | None
) -> tuple[Deck, dict[str, Any]]:
    """A deck and what it takes to deal it again (sealed at rest by the store): the seeds
    of a provably fair ``deal``, or the whole order of the stacked deck ``deck_factory``
    makes (tests; such a hand carries no commitment)."""
    if deck_factory is not None:
        deck = deck_factory()
        return deck, {"order": deck.order(), "seed": None}
    if deal is None:
        raise ValueError("a hand is dealt from a stacked deck or a committed fair deal")
    return deal.deck(), deal.record()


def replay(config: TableConfig, seats: Sequence[Seat | None], live: LiveHandState) -> Hand:
    """The stored hand dealt again from its deck, its stored actions applied. Raises when
    it cannot be: the seats no longer hold its players, or the record does not replay."""
    for seat, player, stack in live.players:
        occupant = seats[seat] if 0 <= seat < len(seats) else None
        if occupant is None or occupant.player != player or occupant.stack < stack:
            raise ValueError(f"seat {seat} does not hold {player} with {stack} chips")
    seats_dealt = [(seat, stack) for seat, _, stack in live.players]
    # The hands killed at the deal (a tournament's rule 8) are killed again: the record's
    # actions follow those the deal made itself.
    hand = Hand(config, seats_dealt, deck_of(live), absent=live.absent)
    for row in live.actions:
        move_from_row(row).apply(hand)
    return hand


def resume(table: Table, config: TableConfig, live: LiveHandState) -> None:
    """Put the stored hand back in play at ``table`` (see :func:`replay`): its players sit
    in, but those away at the deal (a tournament's rule 8), still away."""
    hand = replay(config, table.seats, live)
    table.resume_hand(hand)
    for seat in live.absent:
        away = table.seats[seat]
        assert away is not None
        table.keep_wishes(away.player, leaving=False, sit_out_next_hand=False, sitting_out=True)


def deck_of(live: LiveHandState) -> Deck:
    """The stored hand's deck: derived again from its seeds, or its stacked order."""
    record = live.deck
    if record.get("method") == fair2.METHOD:
        return fair2.Deal2.from_record(record, table_id=live.table_id, number=live.number).deck()
    if "server_seed" in record:
        return fair.FairDeal.from_record(record, table_id=live.table_id, number=live.number).deck()
    order, seed = record.get("order"), record.get("seed")
    if order is None:
        raise ValueError(record.get("unreadable", "the deck of the hand was not recorded"))
    return Deck(order=order, rng=random.Random(seed) if seed is not None else None)


def _event_log(hand: Hand) -> list[dict[str, Any]]:
    return [e.record() for e in announced(hand.events)]  # as told: no turn played at once


def finished_record(
    table_id: int,
    number: int,
    hand: Hand,
    players: dict[int, str],
    starting: dict[str, int],
    *,
    rotation: dict[str, Any] | None = None,
) -> FinishedHand:
    """The record of a hand played out: its events, result, stacks, rake, PHH (with the seeds
    of a provably fair deal as user fields: docs/fairness.md) and rules; ``rotation``: a mixed
    table's hand, its position in the rotation."""
    result = hand.result()
    fields: dict[str, Any] = {"table": str(table_id), "players": [players[s] for s in hand.seats]}
    deal = hand.deck.fair
    if deal is not None:
        fields["_deck_method"] = deal.method
        fields["_deck_commitment"] = deal.commitment
        revealed = deal.revealed()  # stud-deck/1 only: stud-deck/2 reveals no seed
        if revealed is not None:
            fields["_server_seed"] = revealed
        fields["_client_seeds"] = [f"{seat}:{seed}" for seat, seed in deal.client_seeds]
        fields["_table_id"] = table_id
        fields["_hand_number"] = number
    try:
        phh = export(hand, **fields)
    except PhhError:
        phh = ""  # PHH has no code for the game (engine.phh_export)
    return FinishedHand(
        table_id=table_id,
        number=number,
        events=_event_log(hand),
        result={
            "net": {str(s): v for s, v in result.net.items()},
            "shares": result.shares,
            "pots": result.pots,
            "showdown": result.showdown,
            **({"rake": result.rake} if result.rake else {}),
        },
        players=dict(players),
        starting=dict(starting),
        stacks={players[s]: v for s, v in result.stacks.items()},
        phh=phh,
        config=config_to_json(hand.config),
        rake=result.rake,
        deck=sealed_deck(hand),
        rotation=rotation,
    )


def sealed_deck(hand: Hand) -> dict[str, Any] | None:
    """What the store keeps, sealed, of a stud-deck/2 hand's deal once it is over: its seeds,
    from which the whole deck opens for an operator's audit (docs/fairness.md)."""
    deal = hand.deck.fair
    return deal.record() if isinstance(deal, fair2.Deal2) else None


def revealed_seed(hand: Hand) -> str | None:
    """The server seed a voided hand reveals (docs/fairness.md), as ``hand_ended`` would: a
    ``stud-deck/1`` hand's; a ``stud-deck/2`` hand reveals none."""
    deal = hand.deck.fair
    return deal.revealed() if deal is not None else None


def cancelled_record(
    table_id: int,
    number: int,
    hand: Hand,
    players: dict[int, str],
    reason: str,
    detail: str | None = None,
    *,
    rotation: dict[str, Any] | None = None,
) -> FinishedHand:
    """The record of a hand voided: everyone keeps the chips they began with. ``detail``:
    why, in words (an operator's reason). A voided hand keeps its place in a rotation."""
    starting = {players[s]: hand.starting[i] for i, s in enumerate(hand.seats)}
    cancelled = HandCancelled(
        hand=None, reason=reason, detail=detail, server_seed=revealed_seed(hand)
    )
    return FinishedHand(
        table_id=table_id,
        number=number,
        events=[*_event_log(hand), cancelled.record()],
        result={"cancelled": reason},
        players=dict(players),
        starting=starting,
        stacks=dict(starting),
        cancelled=True,
        config=config_to_json(hand.config),
        deck=sealed_deck(hand),
        rotation=rotation,
    )


def unresumable_record(live: LiveHandState, reason: str) -> FinishedHand:
    """The record of a stored hand that could not be dealt again: void, every chip back."""
    starting = {player: stack for _, player, stack in live.players}
    return FinishedHand(
        table_id=live.table_id,
        number=live.number,
        events=[HandCancelled(hand=None, reason="resume_failed", detail=reason).record()],
        result={"cancelled": "resume_failed"},
        players={seat: player for seat, player, _ in live.players},
        starting=starting,
        stacks=dict(starting),
        cancelled=True,
        rotation=live.rotation,
    )
