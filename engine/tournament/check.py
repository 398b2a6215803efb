"""A finished tournament checked afterwards, from what the cardroom publishes once it is over:
the seed of its seat draws, its director's journal, its hands, its places and prizes.

The director decides everything from the facts of its journal (:mod:`engine.tournament.run`),
so anyone can decide it again. :func:`check_tournament` does, and stops at the first thing
that is not as recorded:

* **The seed.** SHA-256 of the revealed seed is the commitment published when the tournament
  was made, before anyone registered (``stud-seat-draw/1``, :mod:`engine.tournament.draw`).
* **The journal played again.** Every fact, in order, through :class:`TournamentRun`, with
  that seed: the start's draw, each hand's chips, each table broken and drawn again, the
  final table's draw. A fact the state cannot take is reported (a hand at a table the
  tournament no longer runs, a hand that made chips, ...).
* **Every hand where the draws put its players.** Each hand of the journal is a hand its
  table played: its players sat at the seats the draws and the moves gave them when it was
  dealt, and started and ended it with the chips the journal says; every hand played is in
  the journal. Each was dealt at the stakes of a level of the structure, in that level's
  game (a mixed tournament's levels name theirs). (That each hand was dealt fairly and
  played by the rules is checked hand by hand, as ``stud-verify`` checks any hand.)
* **Places and prizes.** The journal played to its end gives every player's place and
  prize (:mod:`engine.tournament.payouts`); they are the ones recorded, and the prizes sum
  to the prize pool. A disqualified player has none, and the chips they took out of play
  are the ones the ``chips_removed`` record after their disqualification says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import Refusal
from engine.fair import SEED_BYTES, commitment
from engine.tournament import journal
from engine.tournament.draw import METHOD
from engine.tournament.journal import RECORD_KINDS, REMOVED
from engine.tournament.payouts import Finish
from engine.tournament.run import Disqualified, Order, RunError, TournamentRun
from engine.tournament.spec import TournamentSpec


class TournamentMismatch(Exception):
    """What a tournament's record says that does not follow from its journal and seed."""


@dataclass(frozen=True, slots=True)
class Fact:
    """A fact of the director's journal, as published."""

    seq: int
    kind: str
    at: float
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class PlayedHand:
    """A hand a tournament table played: each seat dealt in, its player and chips before and
    after the hand."""

    table: int
    number: int
    seats: Mapping[int, tuple[str, int, int]]
    # Its game and stakes (ante, bring-in, small and big bet) as its start says; None: unsaid.
    game: str | None = None
    stakes: Mapping[str, int] | None = None


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's place and prize as the tournament records them."""

    player: str
    place: int | None
    prize: int | None


def replay(run: TournamentRun, fact: Fact) -> list[Order]:
    """One journal fact taken by ``run``, as the director takes it (a record of what the
    fact before decided is not taken again: ``engine.tournament.journal``)."""
    if fact.kind in journal.RECORD_KINDS:
        return []
    return journal.replay(run, fact.kind, fact.data, fact.at)


@dataclass(frozen=True, slots=True)
class Checked:
    """A tournament that checks out: what was checked, in a few lines."""

    lines: list[str]


def check_tournament(
    spec: TournamentSpec,
    *,
    tournament_id: int,
    seed: bytes,
    committed: str,
    journal: Sequence[Fact],
    hands: Sequence[PlayedHand],
    standings: Sequence[Standing],
) -> Checked:
    """Everything :mod:`this module <engine.tournament.check>` says, or
    :class:`TournamentMismatch` naming the first thing that is not as recorded."""
    if len(seed) != SEED_BYTES:
        raise TournamentMismatch(f"the revealed seed is {len(seed)} bytes, not {SEED_BYTES}")
    if commitment(seed) != committed:
        raise TournamentMismatch(
            f"the revealed seed does not match the commitment published before the start: "
            f"SHA-256 of the seed is {commitment(seed)}, the commitment {committed}"
        )
    for expected, fact in enumerate(journal, 1):
        if fact.seq != expected:
            raise TournamentMismatch(f"the journal goes from fact {expected - 1} to {fact.seq}")
    if not journal or journal[0].kind != "started":
        raise TournamentMismatch("the journal does not begin with the start")
    started = journal[0].data
    prize_pool = int(started["prize_pool"])
    entrants = len(started["players"])
    if prize_pool != spec.buy_in * entrants:
        raise TournamentMismatch(
            f"the prize pool at the start was {prize_pool}, but {entrants} entrants paid a "
            f"buy-in of {spec.buy_in} each ({spec.buy_in * entrants})"
        )
    played = {(hand.table, hand.number): hand for hand in hands}
    if len(played) != len(hands):
        raise TournamentMismatch("a hand is given twice")
    run = TournamentRun(spec, tournament_id=tournament_id, seed=seed, prize_pool=prize_pool)
    checked = 0
    removing: list[tuple[str, int]] = []  # the chips the fact before takes out of play
    for fact in journal:
        if fact.kind == REMOVED:
            _check_removed(fact, removing)
            continue
        if fact.kind in RECORD_KINDS:  # a deal's record: its fact made it again
            continue
        if removing:
            raise TournamentMismatch(
                f"journal fact {fact.seq - 1} takes {removing[0][0]}'s chips out of play, "
                f"but no {REMOVED} record follows it"
            )
        if fact.kind == "hand":
            key = (int(fact.data["table"]), int(fact.data["number"]))
            hand = played.pop(key, None)
            if hand is None:
                raise TournamentMismatch(
                    f"journal fact {fact.seq}: hand {key[1]} at table {key[0]} is not among "
                    f"the hands the tables played"
                )
            _check_hand(run, fact, hand)
            checked += 1
        try:
            orders = replay(run, fact)
        except (RunError, Refusal, KeyError, TypeError, ValueError) as error:
            raise TournamentMismatch(f"journal fact {fact.seq} ({fact.kind}): {error}") from None
        removing = [(o.player, o.chips) for o in orders if isinstance(o, Disqualified)]
        after = journal[fact.seq :]  # only its records may follow the fact that ends it
        if run.over and any(later.kind not in RECORD_KINDS for later in after):
            raise TournamentMismatch(f"the tournament was over at journal fact {fact.seq}")
    if removing:
        raise TournamentMismatch(
            f"the journal's last fact takes {removing[0][0]}'s chips out of play, but no "
            f"{REMOVED} record follows it"
        )
    if played:
        table, number = min(played)
        raise TournamentMismatch(
            f"hand {number} at table {table} was played but is not in the journal"
        )
    if not run.over:
        raise TournamentMismatch("the journal does not play the tournament to a winner")
    _check_places(run, standings, run.prize_pool)
    first = run.draws[0]
    tables = len(first.draw.quotas)
    later = len(run.draws) - 1
    return Checked(
        [
            f"seat draw ({METHOD}): the revealed seed matches the commitment {committed}",
            f"the start drew {entrants} players to {tables} table{'s' * (tables > 1)}"
            + (f"; {later} later draw{'s' * (later > 1)} (tables broken, the final table)")
            * bool(later),
            f"{checked} hands: each player sat where the draws and moves put them, with the "
            f"chips the journal gives",
            f"{len(journal)} journal facts played again: every place and prize as recorded, "
            f"the prizes summing to the prize pool of {run.prize_pool}",
            "places: "
            + ", ".join(f"{f.player} {_placed(f.place, f.prize)}" for f in _by_place(run)),
        ]
    )


def _check_removed(fact: Fact, removing: list[tuple[str, int]]) -> None:
    """A ``chips_removed`` record against what the fact before it decided."""
    said = (str(fact.data.get("player")), fact.data.get("chips"))
    if not removing:
        raise TournamentMismatch(
            f"journal fact {fact.seq} takes {said[1]} chips of {said[0]} out of play, but the "
            f"fact before it disqualifies nobody"
        )
    wanted = removing.pop(0)
    if said != wanted:
        raise TournamentMismatch(
            f"journal fact {fact.seq} takes {said[1]} chips of {said[0]} out of play, but the "
            f"fact before it takes {wanted[1]} of {wanted[0]}"
        )


def _check_hand(run: TournamentRun, fact: Fact, hand: PlayedHand) -> None:
    """A hand fact against the hand played: its seats are the state's, its chips the fact's."""
    where = f"hand {hand.number} at table {hand.table}"
    _check_game(run, hand, where)
    state = run.tables.get(hand.table)
    if state is None:
        raise TournamentMismatch(f"{where} was played at a table the draws had not opened")
    starting, ending = fact.data["starting"], fact.data["stacks"]
    for seat, (player, start, end) in sorted(hand.seats.items()):
        placed = state.seats.get(seat)
        if placed != player:
            at = next((s for s, p in state.seats.items() if p == player), None)
            theirs = f"seat {at}" if at is not None else "another table"
            raise TournamentMismatch(
                f"{where} dealt {player} in at seat {seat}, but the draws and moves seated "
                f"{placed or 'nobody'} there and {player} at {theirs}"
            )
        if (starting.get(player), ending.get(player)) != (start, end):
            raise TournamentMismatch(
                f"{where}: {player} played it from {start} chips to {end}, the journal "
                f"says from {starting.get(player)} to {ending.get(player)}"
            )
    dealt = {player for player, _, _ in hand.seats.values()}
    for player in sorted(set(starting) - dealt):
        if starting[player] != ending.get(player):
            raise TournamentMismatch(
                f"{where}: {player} was not dealt in, but the journal has their chips go "
                f"from {starting[player]} to {ending.get(player)}"
            )


def _check_game(run: TournamentRun, hand: PlayedHand, where: str) -> None:
    """The hand was dealt at a level's stakes, in that level's game."""
    if hand.stakes is None or hand.game is None:
        return
    structure = run.spec.structure
    number = structure.level_of(hand.stakes)
    if number is None:
        raise TournamentMismatch(f"{where} was dealt at stakes no level of the structure has")
    game = run.spec.game_of(structure.levels[number - 1])
    if hand.game != game:
        raise TournamentMismatch(f"{where} was dealt {hand.game} at level {number}, of {game}")


def _check_places(run: TournamentRun, standings: Sequence[Standing], prize_pool: int) -> None:
    """Each player's places (one an entry: a re-entry is placed again) and prizes, a deal's
    amounts among them, as recorded."""
    dealt: dict[str, int] = {}
    for offer in run.deals.made:
        for share in offer.shares:
            dealt[share.player] = dealt.get(share.player, 0) + share.amount
    recorded: dict[str, list[Standing]] = {}
    for standing in standings:
        recorded.setdefault(standing.player, []).append(standing)
    finishes: dict[str, list[Finish]] = {}
    for finish in run.finishes:
        finishes.setdefault(finish.player, []).append(finish)
    for player, theirs in sorted(finishes.items()):
        mine = recorded.pop(player, None)
        if mine is None:
            raise TournamentMismatch(f"{player} played but has no entry recorded")
        expected = sorted((f.place for f in theirs), reverse=True)
        placed = sorted((s.place for s in mine if s.place is not None), reverse=True)
        prize = sum(f.prize for f in theirs) + dealt.get(player, 0)
        paid = sum(s.prize or 0 for s in mine)
        if placed != expected or paid != prize:
            raise TournamentMismatch(
                f"{player} finished {_places(expected, prize)} by the journal, but the "
                f"tournament records {_places(placed, paid)}"
            )
    for player, left in sorted(recorded.items()):  # never placed: disqualified, or absent
        paid = sum(s.prize or 0 for s in left)
        for standing in left:
            if standing.place is not None or paid != dealt.get(player, 0):
                raise TournamentMismatch(
                    f"{player} is recorded {_placed(standing.place, standing.prize)}, but did "
                    f"not play by the journal"
                )
    paid = sum(finish.prize for finish in run.finishes) + sum(dealt.values())
    if paid != prize_pool or sum(run.prizes) != prize_pool:
        raise TournamentMismatch(f"the prizes sum to {paid}, the prize pool was {prize_pool}")


def _places(places: Sequence[int], prize: int) -> str:
    """``2nd (150)``; ``9th and 4th (40)`` for a player who entered twice."""
    if not places:
        return _placed(None, prize)
    *before, last = places
    return " and ".join([*(_placed(p, 0) for p in before), _placed(last, prize)])


def _by_place(run: TournamentRun) -> list[Finish]:
    return sorted(run.finishes, key=lambda finish: (finish.place, finish.player))


def _placed(place: int | None, prize: int | None) -> str:
    """``2nd (150)``, ``5th`` (no prize), ``no place``."""
    if place is None:
        return "no place" + (f" with a prize of {prize}" if prize else "")
    suffix = "th" if 10 <= place % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(place % 10, "th")
    return f"{place}{suffix}" + (f" ({prize})" if prize else "")
