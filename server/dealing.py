"""A table's hands as its store keeps them: the deck written down before the deal, the
hand dealt again from it, and the record of a finished or voided hand."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from engine.actions import Action
from engine.cards import Deck
from engine.errors import PhhError
from engine.hand import Hand
from engine.phh_export import export
from engine.table import Seat
from engine.table_events import HandCancelled
from engine.variants import TableConfig
from server.table_types import FinishedHand, LiveHandState


def new_deck(
    deck_factory: Callable[[], Deck] | None, rng_factory: Callable[[], random.Random]
) -> tuple[Deck, dict[str, Any]]:
    """A deck and what it takes to deal it again: its whole order, and the seed of the
    scramble of the burn cards should it run short. ``deck_factory``: a stacked deck."""
    if deck_factory is not None:
        deck = deck_factory()
        return deck, {"order": deck.order(), "seed": None}
    rng = rng_factory()
    order = Deck(rng=rng).order()
    seed = rng.getrandbits(64)
    return Deck(order=order, rng=random.Random(seed)), {"order": order, "seed": seed}


def replay(config: TableConfig, seats: Sequence[Seat | None], live: LiveHandState) -> Hand:
    """The stored hand dealt again from its deck, its stored actions applied. Raises when
    it cannot be: the seats no longer hold its players, or the record does not replay."""
    for seat, player, stack in live.players:
        occupant = seats[seat] if 0 <= seat < len(seats) else None
        if occupant is None or occupant.player != player or occupant.stack < stack:
            raise ValueError(f"seat {seat} does not hold {player} with {stack} chips")
    order, seed = live.deck.get("order"), live.deck.get("seed")
    if order is None:
        raise ValueError("the deck of the hand was not recorded")
    deck = Deck(order=order, rng=random.Random(seed) if seed is not None else None)
    hand = Hand(config, [(seat, stack) for seat, _, stack in live.players], deck)
    for action in live.actions:
        if action.get("timeout"):
            hand.timeout(action["seat"])
        else:
            hand.apply(Action(action["seat"], action["kind"], action.get("amount")))
    return hand


def _event_log(hand: Hand) -> list[dict[str, Any]]:
    return [e.record() for e in hand.events]


def finished_record(
    table_id: int,
    number: int,
    hand: Hand,
    players: dict[int, str],
    starting: dict[str, int],
) -> FinishedHand:
    """The record of a hand played out: its events, result, stacks, rake and PHH."""
    result = hand.result()
    try:
        phh = export(hand, table=str(table_id), players=[players[s] for s in hand.seats])
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
        rake=result.rake,
    )


def cancelled_record(
    table_id: int,
    number: int,
    hand: Hand,
    players: dict[int, str],
    reason: str,
    detail: str | None = None,
) -> FinishedHand:
    """The record of a hand voided: everyone keeps the chips they began with. ``detail``:
    why, in words (an operator's reason)."""
    starting = {players[s]: hand.starting[i] for i, s in enumerate(hand.seats)}
    cancelled = HandCancelled(hand=None, reason=reason, detail=detail)
    return FinishedHand(
        table_id=table_id,
        number=number,
        events=[*_event_log(hand), cancelled.record()],
        result={"cancelled": reason},
        players=dict(players),
        starting=starting,
        stacks=dict(starting),
        cancelled=True,
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
    )
