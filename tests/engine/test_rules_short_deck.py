"""Number of players and the not-enough-cards procedure (SCS 1, SCS 18, Robert's 15)."""

from __future__ import annotations

import pytest
from decks import cards, check_down, new_hand, of_kind, play, stud_deck

from engine.cards import CARD_COUNT, Deck, format_card
from engine.errors import IllegalAction, InvalidAction
from engine.hand import Hand
from engine.table import Table
from engine.variants import TableConfig

STUD = TableConfig()


def spread(seats: int, per_seat: int, skip: str = "") -> list[str]:
    """Hands of ``per_seat`` cards for ``seats`` seats, taken in card order (2c 2d 2h 2s 3c ...)."""
    left = [c for c in range(CARD_COUNT) if c not in cards(skip)]
    return [
        " ".join(format_card(left[k * per_seat + j]) for j in range(per_seat)) for k in range(seats)
    ]


def all_dealt(hand: Hand) -> list[int]:
    return [c for seat_cards in hand.cards for c in seat_cards] + hand.common


def test_scs18_common_card_with_eight_players() -> None:
    """SCS 18, Robert's 15: eight players and three burns leave too few cards for seventh
    street: the dealer burns and turns one common card that plays in every hand; the high
    board including it starts the last round."""
    boards = {
        0: "As Kh Jd 9c",  # ace high: the high board before the common card
        1: "Qs 2d 5h 6c",  # pairs whatever the common card is (queens or deuces)
        2: "3c 4d 5s 7h",
        3: "3d 4h 6d 8c",
        4: "3h 5c 7c 9d",
        5: "3s 6h 8d Tc",
        6: "4c 7d 9h Jc",
        7: "4s 8h Td Kc",
    }
    pool = "Qc Qd Qh 2c"  # the three burn cards and the bottom card
    holes = {1: "2h 2s"}
    used = set(cards(" ".join(boards.values()) + pool + holes[1]))
    spare = [format_card(c) for c in range(CARD_COUNT) if c not in used]
    for seat in (0, 2, 3, 4, 5, 6, 7):
        holes[seat], spare = " ".join(spare[:2]), spare[2:]
    assert not spare
    hands = []
    for seat in range(8):
        door, *rest = boards[seat].split()
        hands.append(f"{holes[seat]} {door} | {' | '.join(rest)}")
    hand = new_hand(hands, burns="Qc Qd Qh", then="2c")
    while hand.street < 4:
        legal = hand.legal_actions()
        kind = next(k for k in ("bring_in", "check", "call") if k in legal.kinds)
        play(hand, f"{legal.seat} {kind}")
    assert of_kind(hand.events, "deck_procedure") == [
        {"street": "seventh", "procedure": "common_card"}
    ]
    common = of_kind(hand.events, "common_card")[0]["card"]
    assert common in pool.split()
    assert of_kind(hand.events, "street_dealt")[-1]["street"] == "sixth"
    assert [len(c) for c in hand.cards] == [6] * 8
    assert hand.seat_to_act() == 1  # seat 1's board pairs with the common card
    assert of_kind(hand.events, "announcement", kind="high_board")[-1]["seat"] == 1
    check_down(hand)
    # Seat 1 holds three deuces; with the common card (SCS 19: seven cards) a full house or
    # four deuces, the only hand that beats seat 7's aces.
    assert hand.result().net[1] == 8 * 3 - 3


def test_scs9_every_pair_the_common_card_makes_on_board_is_announced() -> None:
    """SCS 9, SCS 18, Robert's 15: the common card plays in every hand, so each board it pairs
    shows a new pair, and the dealer announces all pairs on board: one announcement a board."""
    boards = [
        "As Kh Jd 9c",
        "Qs 2h 5h 6c",  # pairs queens or deuces with the common card
        "Qh 2s 7s 8s",  # likewise
        "3d 4h 6d 8c",
        "3h 5c 7c 9d",
        "3s 6h 8d Tc",
        "4c 7d 9h Jc",
        "4s 8h Td Kc",
    ]
    pool = "Qc Qd 2c 2d"  # the three burn cards and the bottom card: every queen and deuce
    used = set(cards(" ".join(boards) + " " + pool))
    spare = [format_card(c) for c in range(CARD_COUNT) if c not in used]
    hands = []
    for seat, board in enumerate(boards):
        door, *rest = board.split()
        hands.append(f"{spare[2 * seat]} {spare[2 * seat + 1]} {door} | {' | '.join(rest)}")
    hand = new_hand(hands, burns="Qc Qd 2c", then="2d")
    while hand.street < 4:
        legal = hand.legal_actions()
        kind = next(k for k in ("bring_in", "check", "call") if k in legal.kinds)
        play(hand, f"{legal.seat} {kind}")
    kinds = [e.kind for e in hand.events]
    after = hand.events[kinds.index("common_card") :]
    common = of_kind(after, "common_card")[0]["card"]
    assert common in pool.split()
    plural = {"Q": "queens", "2": "deuces"}[common[0]]
    said = [a for a in of_kind(after, "announcement") if f"pair of {plural}" in a["text"]]
    # Each paired board said once; the one that opens the last round in the high hand's words.
    assert sorted(a["seat"] for a in said) == [1, 2]
    assert said[0]["text"] == f"pair of {plural}"
    assert said[1] == {
        "kind": "high_board",
        "seat": said[1]["seat"],
        "text": f"pair of {plural} is high",
    }
    # Announced before the high board that opens the last round.
    assert [e.kind for e in after[1:3]] == ["announcement"] * 2
    assert after[2].data["kind"] == "high_board"


def test_scs18_reshuffle_the_burn_cards_and_the_last_card() -> None:
    """SCS 18, Robert's 15: deal all but the last card; the last card joins the burn cards,
    they are scrambled, the dealer burns again and deals on."""
    hands = spread(7, 6)
    seventh = spread(1, 7, skip=" ".join(hands) + " Ac Ad Ah")[0]  # burn, five cards, bottom
    hand = new_hand(hands, burns="Ac Ad Ah", then=seventh)
    burns_and_last = set(cards("Ac Ad Ah")) | {cards(seventh)[0], cards(seventh)[-1]}
    check_down(hand)
    assert of_kind(hand.events, "deck_procedure") == [
        {"street": "seventh", "procedure": "reshuffled_burns"}
    ]
    assert [len(c) for c in hand.cards] == [7] * 7
    direct = cards(seventh)[1:6]
    assert [hand.cards[seat][6] for seat in range(5)] == direct
    assert {hand.cards[5][6], hand.cards[6][6]} <= burns_and_last
    assert len(set(all_dealt(hand))) == 49


def test_scs18_skip_the_burn_when_that_is_enough() -> None:
    """SCS 18, Robert's 15: if still short, the dealer does not burn so that every player gets
    a fresh card; the folded hands in the muck are not used."""
    hands = spread(8, 3)
    hand = Hand(STUD, [(s, 100) for s in range(8)], stud_deck(hands, STUD))
    seat = hand.seat_to_act()
    assert seat is not None
    play(hand, f"{seat} bring_in")
    folded = (seat + 1) % 8
    play(hand, f"{folded} fold")
    mucked = set(hand.cards[folded])
    check_down(hand)
    assert of_kind(hand.events, "deck_procedure") == [
        {"street": "seventh", "procedure": "reshuffled_no_burn"}
    ]
    live = [s for s in range(8) if s != folded]
    assert all(len(hand.cards[s]) == 7 for s in live)
    dealt = [c for s in live for c in hand.cards[s]]
    assert len(set(dealt)) == 49 and not mucked & set(dealt)


def test_scs18_bottom_card_is_never_dealt_straight_from_the_deck() -> None:
    """SCS 18: the bottom card of the deck is never dealt (until it is scrambled with the burns)."""
    deck = Deck(order=list(range(CARD_COUNT)))
    assert deck.dealable() == CARD_COUNT - 1
    dealt, common, procedure = deck.deal_round(51, burn=False)
    assert (len(dealt), common, procedure) == (51, None, None)
    assert CARD_COUNT - 1 not in dealt


def test_scs1_at_most_eight_players_in_seven_card_stud() -> None:
    """SCS 1: seven-card stud seats at most eight (nine risks running out of cards);
    five-card stud seats ten."""
    assert len(Table(STUD).seats) == 8
    with pytest.raises(InvalidAction):
        Table(STUD, seat_count=9)
    assert len(Table(STUD.with_variant("five_card_stud")).seats) == 10


def test_too_many_players_for_one_deck_is_refused() -> None:
    """SCS 1: a hand is refused when the first street cannot be dealt from one deck."""
    with pytest.raises(IllegalAction) as caught:
        Hand(STUD, [(s, 100) for s in range(18)], Deck(order=list(range(CARD_COUNT))))
    assert caught.value.code == "too_many_players"


def test_eight_card_stud_seats_at_most_seven() -> None:
    """SCS 18 with Hoyle's eight-card stud: eight players could use up every card, so the
    variant seats seven; seven players who all stay get a common card on eighth street."""
    config = STUD.with_variant("eight_card_stud")
    assert len(Table(config).seats) == 7
    with pytest.raises(IllegalAction):
        Hand(config, [(s, 100) for s in range(8)], Deck(order=list(range(CARD_COUNT))))
    hand = Hand(config, [(s, 100) for s in range(7)], stud_deck(spread(7, 3), config))
    check_down(hand)
    assert [d["procedure"] for d in of_kind(hand.events, "deck_procedure")] == [
        "reshuffled_burns",
        "common_card",
    ]
    assert all(len(c) == 7 for c in hand.cards) and len(hand.common) == 1
    assert hand.result().showdown
