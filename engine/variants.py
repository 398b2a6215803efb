"""Stud variants and table settings as data.

A variant is a list of streets plus the rules that tell games apart (who brings
in, who acts first later, how hands are judged). Every alternate rule of the
rule books is a field of :class:`TableConfig`, never a branch on a variant name.

>>> find_variant("razz").showdown
'razz'
>>> [len(s.cards) for s in find_variant("seven_card_stud").streets]
[3, 1, 1, 1, 1]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, get_args

from engine.errors import ConfigError
from engine.protocol import ErrorCode

Showdown = Literal["high", "razz", "high_low"]
Structure = Literal["fixed_limit", "pot_limit", "no_limit"]
CardOrder = Literal["low", "high"]
TieRule = Literal["suit", "position"]
OddChipTie = Literal["highest_card_by_suit", "lowest_position"]
AllInOpener = Literal["next_best_board", "next_seat"]
ShortAllIn = Literal["half_bet", "largest_increase"]
AbsentHands = Literal["killed_when_action_reaches", "killed_after_starting_hands"]


@dataclass(frozen=True, slots=True)
class Street:
    """One round of cards followed by one betting round."""

    name: str
    cards: tuple[bool, ...]  # True = dealt face up, in dealing order
    big_bet: bool = False  # fixed limit: this round bets the big bet
    open_pair_option: bool = False  # fixed limit: an open pair allows the big bet here


@dataclass(frozen=True, slots=True)
class Variant:
    name: str
    title: str  # as players say it (the lobby, the page)
    streets: tuple[Street, ...]
    showdown: Showdown
    bring_in_card: CardOrder  # "low": lowest upcard brings in; "high": highest
    board_order: CardOrder  # "high": best high board acts first; "low": best low board (razz)
    order_tie: TieRule  # default tie-break for order of play after the first round
    aces_low: bool = False  # aces rank low for bring-in and board order (razz)
    phh_code: str | None = None
    max_players: int = 8

    @property
    def card_count(self) -> int:
        return sum(len(s.cards) for s in self.streets)


def _streets(*specs: tuple[str, str], open_pair_at: int | None = None) -> tuple[Street, ...]:
    """Build streets from ("third", "ddu") pairs; the big bet starts on the third round."""
    return tuple(
        Street(
            name,
            tuple(c == "u" for c in cards),
            big_bet=index >= 2,
            open_pair_option=index == open_pair_at,
        )
        for index, (name, cards) in enumerate(specs)
    )


_SEVEN = (("third", "ddu"), ("fourth", "u"), ("fifth", "u"), ("sixth", "u"), ("seventh", "d"))

VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            "seven_card_stud",
            "Seven-Card Stud",
            _streets(*_SEVEN, open_pair_at=1),
            showdown="high",
            bring_in_card="low",
            board_order="high",
            order_tie="suit",
            phh_code="F7S",
        ),
        Variant(
            "seven_card_stud_hi_lo",
            "Stud Hi-Lo (8 or better)",
            _streets(*_SEVEN),
            showdown="high_low",
            bring_in_card="low",
            board_order="high",
            order_tie="position",
            phh_code="F7S/8",
        ),
        Variant(
            "razz",
            "Razz",
            _streets(*_SEVEN),
            showdown="razz",
            bring_in_card="high",
            board_order="low",
            order_tie="suit",
            aces_low=True,
            phh_code="FR",
        ),
        Variant(
            "five_card_stud",
            "Five-Card Stud",
            _streets(
                ("second", "du"), ("third", "u"), ("fourth", "u"), ("fifth", "u"), open_pair_at=1
            ),
            showdown="high",
            bring_in_card="low",
            board_order="high",
            order_tie="suit",
            max_players=10,
        ),
        Variant(
            "five_card_stud_hi_lo",
            "Five-Card Stud Hi-Lo",
            _streets(("second", "du"), ("third", "u"), ("fourth", "u"), ("fifth", "u")),
            showdown="high_low",
            bring_in_card="low",
            board_order="high",
            order_tie="position",
            max_players=10,
        ),
        Variant(
            "six_card_stud",
            "Six-Card Stud",
            _streets(
                ("second", "du"), ("third", "u"), ("fourth", "u"), ("fifth", "u"), ("sixth", "d")
            ),
            showdown="high",
            bring_in_card="low",
            board_order="high",
            order_tie="suit",
        ),
        Variant(
            "eight_card_stud",
            "Eight-Card Stud",
            _streets(
                ("third", "ddu"),
                ("fourth", "u"),
                ("fifth", "u"),
                ("sixth", "u"),
                ("seventh", "d"),
                ("eighth", "d"),
            ),
            showdown="high",
            bring_in_card="low",
            board_order="high",
            order_tie="suit",
            # Eight players can use up every card, common cards included, before eighth street.
            max_players=7,
        ),
    )
}


def find_variant(name: str) -> Variant:
    try:
        return VARIANTS[name]
    except KeyError:
        raise ConfigError(f"unknown variant {name!r}", code=ErrorCode.UNKNOWN_VARIANT) from None


@dataclass(frozen=True, slots=True)
class TableConfig:
    """Everything that decides how a hand plays; defaults are RULES.md's.

    ``None`` in a field named after a variant rule means "the variant's default".
    """

    variant: Variant = field(default_factory=lambda: VARIANTS["seven_card_stud"])
    structure: Structure = "fixed_limit"
    ante: int = 1
    bring_in: int = 2
    small_bet: int = 5
    big_bet: int = 10
    # Fixed limit: a bet and this many raises; None = no cap.
    max_raises: int | None = 3
    # Fixed limit: no cap while only two players who are not all-in remain.
    uncapped_heads_up: bool = True
    # SCS 4 alternate: the bring-in may complete when action returns to it uncompleted.
    bring_in_may_complete_later: bool = False
    # SCS 11: "ante_and_bring_in" (default) or "ante" (alternate) needed to be dealt in.
    eligibility: Literal["ante_and_bring_in", "ante"] = "ante_and_bring_in"
    # Which upcard brings in (SCS/HL 3 alternate, Hoyle's five-card stud); None = variant's.
    bring_in_card: CardOrder | None = None
    # Tie-break between equal bring-in cards on the first round: the suit decides (SCS 3, Razz 3),
    # or the seat nearest the dealer's left (Hoyle's five-card stud: "the player nearest the
    # dealer's left bets first").
    bring_in_tie: TieRule = "suit"
    # Tie-break for order of play after the first round (SCS 8, SCS/HL 3, razz 4); None = variant's.
    order_tie: TieRule | None = None
    # Fixed limit: an open pair on the open-pair street allows the big bet (SCS 5).
    open_pair_big_bet: bool = True
    burn_cards: bool = True
    # Five-card stud option: the last card is dealt face down.
    last_card_down: bool = False
    # Hi-lo: highest rank a qualifying low may hold; None = any unpaired five (SCS/HL 2).
    low_qualifier: int | None = 8
    # Hi-lo Kansas City rules: aces high only, straights and flushes count against the low.
    kansas_city_low: bool = False
    # SCS 9 alternate: announce "possible straight" / "possible flush" in low-limit games.
    announce_possibles: bool = False
    # Fixed limit: an all-in raise of at least this fraction of a bet counts as a full raise.
    all_in_full_fraction: float = 0.5
    # The settings below exist so that PHH hands replay as PokerKit plays them
    # (engine.phh_rules.phh_config, docs/phh.md); their defaults are the rule books'.
    # Ante of each position when they differ (PHH lists one per player); None = ``ante`` for all.
    ante_by_position: tuple[int, ...] | None = None
    # Antes as dead money: all in the main pot, which every live seat may win, even one
    # all in for part of its ante. Off: antes are contributions like any bet (side pots layer them).
    antes_dead: bool = False
    # An ante above the second-highest posted is trimmed to it (PHH's ante_trimming_status).
    trim_antes: bool = False
    # Odd chips of a tie: one each to the highest cards by suit, or all to the tied seat
    # nearest the dealer's left ("lowest_position").
    odd_chip_tie: OddChipTie = "highest_card_by_suit"
    # The seat chosen to open (bring in, or best board) is all in: the best board among seats
    # with chips opens and, on the first round, acts on the bring-in as if posted
    # ("next_best_board"); or the next seat clockwise opens and must itself bring in ("next_seat").
    all_in_opener: AllInOpener = "next_best_board"
    # Fixed limit, an all-in wager short of a full one: reopens when it is half a bet or more and
    # raises build on the last full bet ("half_bet"); or reopens only when its increase is at least
    # the largest of the round, the next raise going to the high bet plus the larger of that
    # increase and the bet ("largest_increase", no-limit style).
    short_all_in: ShortAllIn = "half_bet"
    # Fixed limit: short all-in wagers count toward the raise cap.
    cap_counts_short_all_ins: bool = False
    # A short bring-in (all in for less): others call the full bring-in, or only what was posted.
    short_bring_in_call: Literal["full", "posted"] = "full"
    # Not enough cards: folded hands are scrambled back in with the burn cards.
    reuse_folded_cards: bool = False
    # The common card counts in the board that decides who acts first.
    common_card_in_order: bool = True
    # SCS 12: a seat that folds without facing a bet is dealt on until a bet is made.
    deal_to_unfaced_folds: bool = True
    # Showdown: hands that cannot win anything are mucked before the pots are made, so layers
    # left with the same contenders merge and split as one pot (odd chips fall differently).
    pots_by_contenders: bool = False
    # The rake (engine.pots.rake): this percentage of each pot, in hundredths at most (2.5 is
    # 2.5%), rounded down to whole chips, main pot first...
    rake_percent: float = 0
    # ...at most this many chips from one hand (None: no cap)...
    rake_cap: int | None = None
    # ...and only from a hand that reaches this street, counted from 1 (the variant's first
    # street): 2, the default, is "no flop, no drop" (no rake when the hand ends on the first).
    rake_from_street: int = 2
    # Robert's 8, cardroom rule 8: an absent player's hand is killed when the betting reaches
    # it (cash games); or, in tournament play, as soon as every player has the starting hand
    # ("killed_after_starting_hands": the antes and an absent bring-in are posted first).
    absent_hands: AbsentHands = "killed_when_action_reaches"

    def __post_init__(self) -> None:
        for name in ("ante", "bring_in", "small_bet", "big_bet"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{name} must be a whole number of chips >= 0")
        if self.small_bet <= 0:
            raise ConfigError("small_bet must be positive")
        if self.big_bet < self.small_bet:
            raise ConfigError("big_bet must be at least small_bet")
        if self.bring_in > self.small_bet:
            raise ConfigError("bring_in may not exceed small_bet")
        if self.max_raises is not None and self.max_raises < 0:
            raise ConfigError("max_raises must be >= 0 or None")
        fraction = self.all_in_full_fraction
        if not isinstance(fraction, int | float) or isinstance(fraction, bool):
            raise ConfigError("all_in_full_fraction must be a number")
        if not 0 < fraction <= 1:
            raise ConfigError("all_in_full_fraction must be above 0 and at most 1 (a bet)")
        if self.low_qualifier is not None and not 5 <= self.low_qualifier <= 13:
            raise ConfigError("low_qualifier must be between 5 and 13, or None")
        if self.last_card_down and len(self.variant.streets[-1].cards) != 1:
            raise ConfigError("last_card_down applies to a last street of one card")
        if self.ante_by_position is not None and any(
            not isinstance(a, int) or isinstance(a, bool) or a < 0 for a in self.ante_by_position
        ):
            raise ConfigError("ante_by_position must hold whole numbers of chips >= 0")
        if self.absent_hands not in get_args(AbsentHands):
            raise ConfigError(f"absent_hands must be one of {', '.join(get_args(AbsentHands))}")
        self._check_rake()

    def _check_rake(self) -> None:
        percent = self.rake_percent
        if not isinstance(percent, int | float) or isinstance(percent, bool):
            raise ConfigError("rake_percent must be a number")
        if not 0 <= percent <= 100:
            raise ConfigError("rake_percent must be between 0 and 100")
        if abs(percent * 100 - round(percent * 100)) > 1e-6:
            raise ConfigError("rake_percent has at most two decimals (2.5, 4.75)")
        cap = self.rake_cap
        if cap is not None and (not isinstance(cap, int) or isinstance(cap, bool) or cap < 0):
            raise ConfigError("rake_cap must be a whole number of chips >= 0, or None")
        street, streets = self.rake_from_street, len(self.variant.streets)
        if not isinstance(street, int) or isinstance(street, bool) or not 1 <= street <= streets:
            raise ConfigError(f"rake_from_street must be a street from 1 to {streets}")

    @property
    def rake_basis_points(self) -> int:
        """The rake in hundredths of a percent: whole numbers, so chips are never floats."""
        return round(self.rake_percent * 100)

    @property
    def effective_bring_in_card(self) -> CardOrder:
        return self.bring_in_card or self.variant.bring_in_card

    @property
    def effective_order_tie(self) -> TieRule:
        return self.order_tie or self.variant.order_tie

    @property
    def streets(self) -> tuple[Street, ...]:
        streets = self.variant.streets
        if self.last_card_down and streets[-1].cards == (True,):
            streets = streets[:-1] + (replace(streets[-1], cards=(False,)),)
        return streets

    def with_variant(self, name: str) -> TableConfig:
        return replace(self, variant=find_variant(name))
