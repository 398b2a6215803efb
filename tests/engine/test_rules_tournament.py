"""Tournament tables: rule 8's tournament variant (absent hands killed once the starting hands
are dealt), blinding off, no leaving with chips, moves between hands, levels at the next hand,
and the players a hand knocks out with the chips they began it with.

Hands are played the way the server's table runner plays them: a hand is dealt with
``Table.start_hand``, players act through ``Hand.apply``, and the turn of a player who goes
away during the hand is played at once (a bring-in posted, else a fold), an ``absent`` action.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from decks import of_kind, play, stud_deck
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.actions import Action
from engine.cards import Deck
from engine.errors import ConfigError, IllegalAction, InvalidAction
from engine.events import Event, HandStarted, announced, from_record
from engine.hand import Hand
from engine.play import random_action
from engine.protocol import ErrorCode
from engine.table import DISQUALIFIED, Bust, Table, Transfer
from engine.table_events import SatIn, SatOut, SeatLeft, SeatTaken
from engine.variants import TableConfig

CASH = TableConfig()  # ante 1, bring-in 2, 5/10
TOURNEY = replace(CASH, absent_hands="killed_after_starting_hands")

# Seat 0 holds aces; the deuce of clubs brings in. A seat given three cards gets no more (its
# hand is killed, or folded, on third street).
ACES = "Ac Ad Kh | Qs | Js | Ts | 9s"
LOW = "4c 5c 2c | 6d | 7d | 8d | 9d"


def tournament(*stacks: int, config: TableConfig = TOURNEY) -> Table:
    t = Table(config, tournament=True)
    for number, chips in enumerate(stacks):
        t.seat_player(number, f"p{number}", chips)
    return t


def play_for_the_absent(t: Table) -> list[Event]:
    """The runner's moves for a player gone from the hand who is to act (cash rule 8)."""
    hand = t.hand
    assert hand is not None
    events: list[Event] = []
    while not hand.is_over():
        seat = hand.seat_to_act()
        occupant = t.seats[seat] if seat is not None else None
        if seat is None or occupant is None or not occupant.sitting_out:
            break
        kind = "bring_in" if "bring_in" in hand.legal_actions().kinds else "fold"
        events += hand.apply(Action(seat, kind), absent=True)
    return events


def act(t: Table, *steps: str) -> list[Event]:
    """Players' actions, each followed by the runner's moves for players gone away."""
    hand = t.hand
    assert hand is not None
    events: list[Event] = []
    for step in steps:
        events += play(hand, step)
        events += play_for_the_absent(t)
    return events


def finish_by_folding(t: Table) -> None:
    hand = t.hand
    assert hand is not None
    while not hand.is_over():
        legal = hand.legal_actions()
        act(t, f"{legal.seat} {'bring_in' if 'bring_in' in legal.kinds else 'fold'}")
    t.finish_hand()


def check_down(t: Table) -> None:
    hand = t.hand
    assert hand is not None
    while not hand.is_over():
        legal = hand.legal_actions()
        kind = next(k for k in ("bring_in", "check", "call") if k in legal.kinds)
        act(t, f"{legal.seat} {kind}")


def chips(*tables: Table) -> list[int]:
    return [s.stack + s.pending_chips for t in tables for s in t.seats if s is not None]


def actions(events: list[Event]) -> list[dict[str, object]]:
    return of_kind(events, "action")


def replayed(record: list[Event], config: TableConfig, deck: Deck) -> list[Event]:
    """A hand dealt again from its deck and its record, as a verifier or a resumed table
    would: the seats and the absent ones from ``hand_started``, then every action the record
    shows after those the deal made itself, an absent one as absent."""
    started = next(e for e in record if isinstance(e, HandStarted))
    hand = Hand(config, list(started.seats), deck, absent=started.absent)
    made = len(actions(hand.events))
    for data in actions(record)[made:]:
        amount = data["to"] if data["action"] in ("complete", "bet", "raise") else None
        action = Action(int(data["seat"]), str(data["action"]), amount)  # type: ignore[arg-type]
        hand.apply(action, absent=bool(data.get("absent")))
    return announced(hand.events)


# ----------------------------------------------------------------- rule 8, tournament variant


def test_roberts8_tournament_absent_hand_is_killed_once_the_starting_hands_are_dealt() -> None:
    """Robert's 8, cardroom rule 8 (tournament play): an absent player is dealt in, antes,
    and their hand is killed as soon as every player has the starting hand, before anyone
    acts; the ante stays in the pot and no more cards come to the seat."""
    t = tournament(100, 100, 100)
    assert t.leave_tournament(1) == [SatOut(seat=1, after_hand=False)]
    hand = t.start_hand(stud_deck([ACES, "2d 3d 8h", LOW]))
    assert hand.seats == [0, 1, 2] and hand.absent == (1,)
    kinds = [e.kind for e in hand.events if e.to is None]
    assert kinds.index("street_dealt") < kinds.index("action") < kinds.index("turn")
    assert [a["seat"] for a in of_kind(hand.events, "ante")] == [0, 1, 2]
    assert actions(hand.events) == [
        {"seat": 1, "action": "fold", "absent": True, "to": 0, "stack": 99}
    ]
    assert hand.seat_to_act() == 2 and hand.legal_actions().kinds == ("bring_in", "complete")
    act(t, "2 bring_in", "0 complete 5", "2 call")
    fourth = of_kind(hand.events, "street_dealt")[1]["deals"]
    assert [d["seat"] for d in fourth] == [0, 2]
    check_down(t)
    t.finish_hand()
    assert chips(t) == [100 - 6 + 13, 99, 100 - 6]


def test_roberts8_tournament_absent_bring_in_is_posted_then_the_hand_is_killed() -> None:
    """Robert's 8 (tournament play), SCS 10: an absent player who has the low card has the
    bring-in taken from the stack, then the hand is killed; the next player acts on the
    bring-in as at a cash table, and the forced bet is forfeited, never returned."""
    t = tournament(100, 100, 100)
    t.leave_tournament(2)
    hand = t.start_hand(stud_deck([ACES, "2d 3d 8h | 7s", "4c 5c 2c"]))
    assert actions(hand.events) == [
        {"seat": 2, "action": "bring_in", "absent": True, "amount": 2, "to": 2, "stack": 97},
        {"seat": 2, "action": "fold", "absent": True, "to": 2, "stack": 97},
    ]
    legal = hand.legal_actions()
    assert (legal.seat, legal.kinds, legal.call) == (0, ("fold", "call", "complete"), 2)
    act(t, "0 fold")  # seat 1 holds the one hand left: the antes and the dead bring-in are its
    assert hand.is_over()
    t.finish_hand()
    assert chips(t) == [99, 99 + 3 + 2, 97]


def test_roberts8_tournament_the_bring_in_is_called_like_any_other() -> None:
    """Robert's 8 (tournament play): after the absent bring-in is killed the others call,
    complete or fold as usual; a call of the dead bring-in is no raise, and the next round
    opens with the live hands only."""
    t = tournament(100, 100, 100)
    t.leave_tournament(2)
    hand = t.start_hand(stud_deck([ACES, "2d 3d 8h | 7s | 6s | 5s | 4s", "4c 5c 2c"]))
    act(t, "0 call", "1 call")
    assert hand.street == 1 and hand.total == [3, 3, 3]
    assert [d["seat"] for d in of_kind(hand.events, "street_dealt")[1]["deals"]] == [0, 1]
    check_down(t)
    t.finish_hand()
    assert sum(chips(t)) == 300 and chips(t)[2] == 97


def test_roberts8_tournament_only_players_away_at_the_deal_are_killed() -> None:
    """Robert's 8 (tournament play): the hands killed are those of the players away when the
    starting hands are dealt; a player who goes away once the action began is killed when the
    betting reaches them (the cash rule)."""
    t = tournament(100, 100, 100, 100)
    t.leave_tournament(3)
    hand = t.start_hand(stud_deck([ACES, "2d 3d 8h", LOW, "Jc Jh Th"]))
    assert [(a["seat"], a["action"]) for a in actions(hand.events)] == [(3, "fold")]
    act(t, "2 bring_in")
    t.leave_tournament(1)
    assert not hand.folded[1]
    assert actions(act(t, "0 call")) == [
        {"seat": 0, "action": "call", "amount": 2, "to": 2, "stack": 97},
        {"seat": 1, "action": "fold", "absent": True, "to": 0, "stack": 99},
    ]
    assert hand.street == 1


def test_roberts8_cash_rule_deals_no_absent_hand() -> None:
    """Robert's 8 outside tournaments (the default `absent_hands`): a hand is killed only when
    the betting reaches it, so no hand is dealt as absent; nor is an absent seat not dealt in."""
    deck = stud_deck([ACES, "2d 3d 8h", LOW])
    with pytest.raises(InvalidAction) as cash:
        Hand(CASH, [(0, 100), (1, 100), (2, 100)], deck, absent=[1])
    assert cash.value.code == ErrorCode.BAD_SEATS
    with pytest.raises(InvalidAction):
        Hand(TOURNEY, [(0, 100), (1, 100)], deck, absent=[4])
    with pytest.raises(ConfigError):
        TableConfig(absent_hands="killed_eventually")  # type: ignore[arg-type]
    hand = Hand(CASH, [(0, 100), (1, 100), (2, 100)], stud_deck([ACES, "2d 3d 8h", LOW]))
    assert hand.absent == () and actions(hand.events) == []
    assert "absent" not in hand.events[0].data  # a cash hand's record is as it always was


def test_roberts8_tournament_hand_replays_from_its_record() -> None:
    """A hand is its deck plus its record: ``hand_started`` names the absent seats, so the hand
    deals again to the same events, on the wire and back."""
    t = tournament(100, 100, 100, 100)
    t.leave_tournament(1)
    t.leave_tournament(2)
    cards = [ACES, "2d 3d 8h", "4c 5c 2c", "Jc Jh Th | 6d | 7d | 8d | 9d"]
    hand = t.start_hand(stud_deck(cards))
    assert hand.folded == [False, True, True, False]
    assert hand.events[0].data["absent"] == [1, 2]
    act(t, "3 complete 5", "0 call")
    check_down(t)
    record = [from_record(e.record()) for e in announced(hand.events)]
    assert replayed(record, TOURNEY, stud_deck(cards)) == announced(hand.events)
    assert sum(hand.stacks) == 400


def test_roberts8_tournament_the_last_hand_standing_takes_the_pot() -> None:
    """Heads-up with the other player away, the hand is killed and the present player takes
    the antes; everyone away, the last hand in position order is not killed. With a player
    all in on the ante, the present bring-in has nobody to bet against once the absent hand is
    killed: the cards are dealt out, the absent hand never plays."""
    t = tournament(100, 100)
    t.leave_tournament(0)
    hand = t.start_hand(stud_deck([ACES, "4c 5c 2c"]))
    assert hand.is_over() and hand.stacks == [99, 101]

    everyone = tournament(100, 100)
    everyone.leave_tournament(0)
    everyone.leave_tournament(1)
    alone = everyone.start_hand(stud_deck(["Ac Ad 2c", "4c 5c Kh"]))
    assert actions(alone.events) == [
        {"seat": 0, "action": "bring_in", "absent": True, "amount": 2, "to": 2, "stack": 97},
        {"seat": 0, "action": "fold", "absent": True, "to": 2, "stack": 97},
    ]
    assert alone.is_over() and alone.stacks == [97, 103]

    short = tournament(100, 100, 1)  # seat 2 all in for the ante; seat 0 has the low card
    short.leave_tournament(1)
    cards = ["Ac Ad 2c | Qs | Js | Ts | 9s", "9c 9d Tc", "4c 5c Kh | 3s | 3h | 3d | 2h"]
    dealt = short.start_hand(stud_deck(cards))
    assert dealt.is_over() and dealt.folded == [False, True, False]
    assert of_kind(dealt.events, "turn") == []
    assert [s["seat"] for s in of_kind(dealt.events, "showdown")] == [0, 2]
    assert dealt.stacks == [99, 99, 3]  # three threes take the antes


# ----------------------------------------------------------------- blinded off, leaving


def test_absent_player_is_blinded_off_until_out() -> None:
    """A tournament player who leaves is sat out and blinded off until they are out of
    chips: dealt every hand, however short (all in for the ante), antes and bring-ins lost."""
    t = tournament(200, 7, 200)
    t.leave_tournament(1)
    rng = random.Random(5)
    hands = 0
    away = t.seats[1]
    assert away is not None
    while away.stack > 0:
        before = away.stack
        hand = t.start_hand(Deck(rng=rng))
        assert 1 in hand.seats and hand.folded[1]
        finish_by_folding(t)
        hands += 1
        assert away.stack < before
    assert hands >= 3
    assert t.busts == [Bust(1, "p1", before)]
    assert 1 not in t.dealt_in()
    assert sum(chips(t)) == 407


def test_absent_player_who_comes_back_plays_the_next_hand() -> None:
    """A player back before the deal of the next hand is dealt in and plays: no hand of
    theirs is killed; back during a hand already killed, they wait for the next."""
    t = tournament(100, 100, 100)
    t.leave_tournament(1)
    hand = t.start_hand(stud_deck([ACES, "2d 3d 8h", LOW]))
    t.sit_in(1)  # too late for this hand: it is dead
    assert hand.folded[1]
    finish_by_folding(t)
    second = t.start_hand(stud_deck([ACES, "2d 3d 8h | 7s", LOW]))
    assert second.absent == () and actions(second.events) == []
    act(t, "2 bring_in", "0 call", "1 call")
    assert second.folded == [False, False, False] and second.street == 1


def test_leaving_with_chips_is_refused_and_leaving_sits_out() -> None:
    """No leaving a tournament with chips: ``leave`` is refused (`chips_in_play`), changing
    nothing; the player's leave sits them out, in a hand or between hands, and the hand in
    progress is played for them by the cash rule."""
    t = tournament(100, 100, 100)
    with pytest.raises(IllegalAction) as refused:
        t.leave(0)
    assert refused.value.code == ErrorCode.CHIPS_IN_PLAY
    assert t.seats[0] is not None and not t.seats[0].leaving and not t.seats[0].sitting_out
    hand = t.start_hand(stud_deck([ACES, "2d 3d 8h", LOW]))
    act(t, "2 bring_in")
    assert t.leave_tournament(0) == [SatOut(seat=0, after_hand=False)]
    assert actions(play_for_the_absent(t)) == [
        {"seat": 0, "action": "fold", "absent": True, "to": 0, "stack": 99}
    ]
    act(t, "1 fold")
    assert hand.is_over()
    t.finish_hand()
    assert 0 in t.dealt_in()  # still in the tournament, blinded off
    with pytest.raises(IllegalAction) as again:
        t.leave(0, removed="kicked")
    assert again.value.code == ErrorCode.CHIPS_IN_PLAY and t.removals == {}


def test_a_disqualified_player_has_their_hand_killed_and_may_not_sit_in_again() -> None:
    """The director disqualifies a player during their hand: they sit out, the hand is
    played for them (a fold at their turn), and they may not sit in again (`disqualified`);
    a player removed for another cause may come back."""
    t = tournament(100, 100, 100)
    hand = t.start_hand(stud_deck([ACES, "2d 3d 8h", LOW]))
    act(t, "2 bring_in")
    assert t.leave_tournament(0, removed=DISQUALIFIED) == [SatOut(seat=0, after_hand=False)]
    with pytest.raises(IllegalAction) as refused:
        t.sit_in(0)
    assert refused.value.code == ErrorCode.DISQUALIFIED
    assert t.seats[0] is not None and t.seats[0].sitting_out
    assert actions(play_for_the_absent(t)) == [
        {"seat": 0, "action": "fold", "absent": True, "to": 0, "stack": 99}
    ]
    act(t, "1 fold")
    assert hand.is_over()
    t.leave_tournament(1, removed="kicked")
    assert t.sit_in(1) == [SatIn(seat=1)]


def test_the_director_seats_players_not_a_buy_in() -> None:
    """A tournament table's seats are the director's: no buy-in, no waiting list, no chips
    added by a player (`tournament_table`); and a cash table has no director's seating."""
    t = tournament(100)
    for refused in (
        lambda: t.choose_seat("ann", 100),
        lambda: t.join_waiting_list("ann"),
        lambda: t.check_add_chips(0, 10),
    ):
        with pytest.raises(IllegalAction) as error:
            refused()
        assert error.value.code == ErrorCode.TOURNAMENT_TABLE
    assert t.waiting == []
    cash = Table(CASH)
    cash.sit(0, "bob", 100)
    for refused in (
        lambda: cash.seat_player(1, "ann", 100),
        lambda: cash.give_up_player(0),
        lambda: cash.leave_tournament(0),
    ):
        with pytest.raises(IllegalAction):
            refused()
    assert [s.player for s in cash.seats if s is not None] == ["bob"]
    with pytest.raises(ConfigError):
        Table(CASH, tournament=True)  # a tournament kills absent hands by its own rule
    with pytest.raises(ConfigError):
        t.reconfigure(CASH, 8, t.rules)
    assert t.config == TOURNEY


# ----------------------------------------------------------------- moves between hands


def test_players_move_between_hands_only() -> None:
    """Moves: a player in the hand in progress is never taken away (refused, changing
    nothing); between hands they leave with every chip and sit at the other table with them,
    away still if they were; chips are conserved across the tables."""
    a, b = tournament(100, 100, 100), tournament(100, 100)
    a.leave_tournament(2)
    a.start_hand(stud_deck([ACES, "2d 3d 8h", "4c 5c 2c"]))
    with pytest.raises(IllegalAction) as refused:
        a.give_up_player(2)
    assert refused.value.code == ErrorCode.HAND_IN_PROGRESS
    assert a.seats[2] is not None
    finish_by_folding(a)
    transfer, events = a.give_up_player(2)
    assert transfer == Transfer("p2", 97, True)
    assert events == [SeatLeft(seat=2, player="p2", cashed_out=97, removed="moved")]
    assert a.seats[2] is None
    assert b.seat_player(4, transfer.player, transfer.chips, sitting_out=transfer.sitting_out) == [
        SeatTaken(seat=4, player="p2", stack=97),
        SatOut(seat=4, after_hand=False),
    ]
    assert sum(chips(a, b)) == 500
    hand = b.start_hand(Deck(rng=random.Random(3)))
    assert hand.seats == [0, 1, 4] and hand.folded[2]  # still away: killed at the new table


def test_a_player_seated_during_a_hand_waits_for_the_next() -> None:
    """A moved player seated while a hand is in progress is not in it (never two hands at
    once) and is dealt the next; one not in the hand may be moved on during it."""
    t = tournament(100, 100)
    hand = t.start_hand(Deck(rng=random.Random(4)))
    t.seat_player(5, "ann", 300)
    assert 5 not in hand.seats
    transfer, _ = t.give_up_player(5)
    assert transfer == Transfer("ann", 300, False)
    t.seat_player(5, "ann", 300)
    with pytest.raises(IllegalAction) as taken:
        t.seat_player(5, "cat", 300)
    assert taken.value.code == ErrorCode.SEAT_TAKEN
    with pytest.raises(IllegalAction) as twice:
        t.seat_player(6, "ann", 300)
    assert twice.value.code == ErrorCode.ALREADY_SEATED
    with pytest.raises(InvalidAction):
        t.seat_player(6, "cat", 0)
    finish_by_folding(t)
    assert t.dealt_in() == [0, 1, 5] and sum(chips(t)) == 500


# ----------------------------------------------------------------- levels, eliminations


def test_a_new_level_takes_effect_at_the_next_hand() -> None:
    """A new level's stakes: the hand in progress keeps its own, the next hand is dealt at
    the new ones; stakes that cannot be played are refused, changing nothing."""
    t = tournament(100, 100, 100)
    hand = t.start_hand(stud_deck([ACES, "2d 3d 8h", LOW]))
    t.set_stakes(ante=2, bring_in=3, small_bet=6, big_bet=12)
    assert hand.config.ante == 1
    assert (hand.legal_actions().bring_in, hand.legal_actions().to_choices) == (2, (5,))
    finish_by_folding(t)
    second = t.start_hand(stud_deck([ACES, "2d 3d 8h", LOW]))
    assert [a["amount"] for a in of_kind(second.events, "ante")] == [2, 2, 2]
    assert (second.legal_actions().bring_in, second.legal_actions().to_choices) == (3, (6,))
    with pytest.raises(ConfigError):
        t.set_stakes(ante=2, bring_in=7, small_bet=6, big_bet=12)
    assert t.config == replace(TOURNEY, ante=2, bring_in=3, small_bet=6, big_bet=12)


def test_players_out_in_the_same_hand_are_reported_with_their_starting_chips() -> None:
    """Players a hand leaves without chips are reported with the chips they began it with
    (players out in the same hand finish by them); short stacks are dealt in, all in."""
    t = tournament(100, 3, 6)
    assert t.dealt_in() == [0, 1, 2]
    quads = "As Ah Ad | Ac | Kh | Ks | Kd"
    straight = "3c 4c 2c | 5h | 6h | 7h | 8h"
    flush = "9d Td 5d | Jd | Qd | 3d | 4d"
    hand = t.start_hand(stud_deck([quads, straight, flush]))
    act(t, "1 bring_in", "2 complete 5", "0 call")
    assert hand.is_over()
    t.finish_hand()
    assert t.busts == [Bust(1, "p1", 3), Bust(2, "p2", 6)]
    assert chips(t) == [109, 0, 0]
    assert t.dealt_in() == [0]
    transfer, _ = t.give_up_player(1)
    assert transfer.chips == 0 and t.leave(2) == 0  # out: they go with nothing
    t.seat_player(1, "p3", 50)
    t.start_hand(Deck(rng=random.Random(1)))
    assert t.busts == []


# ----------------------------------------------------------------- every hand keeps the rules


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_tournament_hands_kill_every_absent_hand_and_keep_every_chip(
    data: st.DataObject,
) -> None:
    """Any players away, any stacks, any play: each absent hand is killed before a player
    acts (an absent bring-in posted first) unless it is the last hand, killed hands get no
    more cards, chips are conserved, and the hand replays from its record."""
    players = data.draw(st.integers(2, 8))
    stacks = data.draw(st.lists(st.integers(1, 60), min_size=players, max_size=players))
    away = data.draw(st.sets(st.integers(0, players - 1)))
    seed = data.draw(st.integers(0, 2**32))
    t = tournament(*stacks)
    for number in away:
        t.leave_tournament(number)
    hand = t.start_hand(Deck(rng=random.Random(seed)))
    rng = random.Random(seed)
    while not hand.is_over():
        hand.apply(random_action(hand, rng))
    done = actions(hand.events)
    first_own = next((k for k, a in enumerate(done) if not a.get("absent")), len(done))
    for number in away:
        assert all(k < first_own for k, a in enumerate(done) if a["seat"] == number)
        assert hand.folded[hand.index_of[number]] or hand.folded.count(False) == 1
        later = [d for e in of_kind(hand.events, "street_dealt")[1:] for d in e["deals"]]
        assert number not in [d["seat"] for d in later]
    assert sum(hand.stacks) == sum(stacks)
    record = [from_record(e.record()) for e in announced(hand.events)]
    assert replayed(record, TOURNEY, Deck(rng=random.Random(seed))) == announced(hand.events)
