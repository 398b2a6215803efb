"""Stud hands in PHH, the Poker Hand History format: read, write, replay, export.

A PHH file is TOML (https://phh.readthedocs.io). PokerKit, PHH's reference
implementation, settles a few rules differently from RULES.md, so PHH hands
replay under the ``phh`` rules profile (:func:`phh_config`, docs/phh.md) and
reach the stacks PokerKit computes. Only fixed-limit seven-card stud (``F7S``),
stud hi-lo (``F7S/8``) and razz (``FR``) have PHH codes.

Pure like the rest of the engine: text in, text or numbers out.

>>> text = '''variant = 'F7S'
... antes = [1, 1]
... bring_in = 2
... small_bet = 5
... big_bet = 10
... starting_stacks = [50, 50]
... actions = ['d dh p1 AsAd2c', 'd dh p2 KsKd3c', 'p1 pb', 'p2 f']
... '''
>>> replay(loads(text))
[51, 49]
"""

from __future__ import annotations

import datetime
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NamedTuple

from engine.cards import CARD_COUNT, UNKNOWN, Card, Deck, format_cards, parse_card
from engine.errors import EngineError, InvalidAction
from engine.events import Action
from engine.hand import Hand
from engine.variants import VARIANTS, TableConfig

#: PHH variant codes of the stud games, and the engine variant each one names.
PHH_VARIANTS: dict[str, str] = {
    v.phh_code: name for name, v in VARIANTS.items() if v.phh_code is not None
}

#: The ``phh`` rules profile: where PokerKit departs from RULES.md (docs/phh.md says why).
PHH_RULES: dict[str, Any] = {
    "max_raises": 3,  # four bets a street: the completion or bet and three raises...
    "uncapped_heads_up": False,  # ...even heads-up
    "cap_counts_short_all_ins": True,
    "short_all_in": "largest_increase",
    "all_in_opener": "next_seat",
    "short_bring_in_call": "posted",
    "open_pair_big_bet": False,
    "order_tie": "position",
    "odd_chip_tie": "lowest_position",
    "reuse_folded_cards": True,
    "common_card_in_order": False,
    "deal_to_unfaced_folds": False,
    "bring_in_may_complete_later": False,
    "eligibility": "ante",
    "burn_cards": True,
    "low_qualifier": 8,
    "kansas_city_low": False,
    "structure": "fixed_limit",
    "pots_by_contenders": True,
}

_REQUIRED = ("variant", "antes", "bring_in", "small_bet", "big_bet", "starting_stacks", "actions")


class PhhError(InvalidAction):
    """A hand history that cannot be read, or that the rules cannot replay."""

    code = "bad_phh"


# ---------------------------------------------------------------------- profile


def phh_config(
    variant: str,
    antes: int | Sequence[int] = 0,
    bring_in: int = 0,
    small_bet: int = 1,
    big_bet: int = 2,
    ante_trimming: bool = False,
) -> TableConfig:
    """The table settings PokerKit plays a PHH hand by (``variant`` is a PHH code or a name).

    ``antes`` is one ante for all or one per position. ``ante_trimming`` is PHH's
    ``ante_trimming_status``: off, antes are dead money in the main pot.

    >>> phh_config("FR", 1, 2, 5, 10).odd_chip_tie
    'lowest_position'
    """
    name = PHH_VARIANTS.get(variant, variant)
    if name not in VARIANTS:
        raise PhhError(f"unknown stud variant {variant!r}", code="bad_variant")
    if isinstance(antes, int):
        ante, by_position = antes, None
    else:
        values = tuple(antes)
        uniform = len(set(values)) <= 1
        ante, by_position = (values[0] if values else 0), (None if uniform else values)
    return TableConfig(
        variant=VARIANTS[name],
        ante=ante,
        ante_by_position=by_position,
        bring_in=bring_in,
        small_bet=small_bet,
        big_bet=big_bet,
        antes_dead=not ante_trimming,
        **PHH_RULES,
    )


def is_phh_config(config: TableConfig) -> bool:
    """Whether a hand played with ``config`` can be written as PHH and replayed by PokerKit."""
    if config.variant.phh_code is None or config.bring_in >= config.small_bet:
        return False
    if not (config.ante or config.ante_by_position or config.bring_in):
        return False
    return all(getattr(config, key) == value for key, value in PHH_RULES.items()) and (
        config.bring_in_card is None and config.last_card_down is False
    )


# ---------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class HandHistory:
    """One PHH hand; ``fields`` keeps every other field of the file (written back as read)."""

    variant: str
    antes: tuple[int, ...]
    bring_in: int
    small_bet: int
    big_bet: int
    starting_stacks: tuple[int, ...]
    actions: tuple[str, ...]
    ante_trimming_status: bool = False
    finishing_stacks: tuple[int, ...] | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)

    def config(self) -> TableConfig:
        """The ``phh`` profile for this hand, antes as PokerKit posts them (see _antes)."""
        try:
            return phh_config(
                self.variant, _antes(self), self.bring_in, self.small_bet, self.big_bet,
                self.ante_trimming_status,
            )
        except EngineError as exc:
            raise PhhError(str(exc), code="bad_phh") from None


def loads(text: str) -> HandHistory:
    """Read one hand from a ``.phh`` text (the first one of a ``.phhs`` text)."""
    hands = loads_all(text)
    if not hands:
        raise PhhError("no hand in this file")
    return hands[0]


def loads_all(text: str) -> list[HandHistory]:
    """Read every hand of a ``.phh`` (one hand) or ``.phhs`` (tables ``[1]``, ``[2]``...) text."""
    try:
        document = tomllib.loads(text, parse_float=Decimal)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise PhhError(f"not TOML: {exc}") from None
    if "variant" in document or "actions" in document:
        return [from_fields(document)]
    tables = [v for v in document.values() if isinstance(v, dict)]
    if not tables:
        raise PhhError("no hand in this file")
    return [from_fields(t) for t in tables]


def from_fields(document: Mapping[str, Any]) -> HandHistory:
    """A hand from parsed TOML fields; fields starting with ``_`` are ignored."""
    missing = [name for name in _REQUIRED if name not in document]
    if "bring_in" in missing and "antes" not in missing:
        missing.remove("bring_in")  # PokerKit needs antes or a bring-in; 0 if absent
    if missing:
        raise PhhError(f"missing field(s): {', '.join(missing)}")
    variant = document["variant"]
    if not isinstance(variant, str):
        raise PhhError("variant must be a string")
    variant = variant.strip()
    if variant not in PHH_VARIANTS:
        raise PhhError(f"variant {variant!r} is not a stud game this server plays")
    stacks = _chips_list(document["starting_stacks"], "starting_stacks")
    if len(stacks) < 2:
        raise PhhError("a hand needs at least two players")
    raw_antes = document["antes"]
    if isinstance(raw_antes, list):
        antes = _chips_list(raw_antes, "antes")[: len(stacks)]
        antes += (0,) * (len(stacks) - len(antes))
    else:
        antes = (_chips(raw_antes, "antes"),) * len(stacks)
    actions = document["actions"]
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise PhhError("actions must be a list of strings")
    trimming = document.get("ante_trimming_status", False)
    if not isinstance(trimming, bool):
        raise PhhError("ante_trimming_status must be true or false")
    finishing = document.get("finishing_stacks")
    known = set(_REQUIRED) | {"ante_trimming_status", "finishing_stacks"}
    return HandHistory(
        variant=variant,
        antes=antes,
        bring_in=_chips(document.get("bring_in", 0), "bring_in"),
        small_bet=_chips(document["small_bet"], "small_bet"),
        big_bet=_chips(document["big_bet"], "big_bet"),
        starting_stacks=stacks,
        actions=tuple(actions),
        ante_trimming_status=trimming,
        finishing_stacks=None if finishing is None else _chips_list(finishing, "finishing_stacks"),
        fields={k: v for k, v in document.items() if k not in known and not k.startswith("_")},
    )


def _chips(value: Any, name: str) -> int:
    """Whole chips: an int, or a number with nothing after the point (PHH allows decimals)."""
    if isinstance(value, bool):
        raise PhhError(f"{name} must be a number of chips")
    if isinstance(value, str):
        try:
            value = Decimal(value.replace(",", ""))
        except ArithmeticError:
            raise PhhError(f"{name}: not a number: {value!r}") from None
    if isinstance(value, float):
        value = Decimal(repr(value))
    if isinstance(value, Decimal):
        if not value.is_finite() or value != value.to_integral_value():
            raise PhhError(f"{name}: {value} is not a whole number of chips")
        value = int(value)
    if not isinstance(value, int) or value < 0:
        raise PhhError(f"{name} must be a whole number of chips >= 0")
    return value


def _chips_list(value: Any, name: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise PhhError(f"{name} must be a list")
    return tuple(_chips(v, name) for v in value)


def _antes(history: HandHistory) -> tuple[int, ...]:
    """Each position's ante as PokerKit posts it.

    Heads-up, PokerKit gives each player the other's ante (a blind-game habit), and
    with ``ante_trimming_status`` an ante above the second-highest is trimmed to it.
    """
    antes = history.antes
    if len(antes) == 2:
        antes = (antes[1], antes[0])
    if history.ante_trimming_status:
        posted = sorted(min(a, s) for a, s in zip(antes, history.starting_stacks, strict=True))
        cutoff = posted[-2]
        antes = tuple(min(a, cutoff) for a in antes)
    return antes


# ---------------------------------------------------------------------- actions


class Step(NamedTuple):
    """One parsed action: ``verb`` is dh, db, pb, cc, cbr, f or sm."""

    verb: str
    player: int  # position index, -1 for the dealer's board cards
    cards: tuple[Card, ...] | None = None  # sm: None = muck; () with dash = show what is known
    amount: int | None = None
    dash: bool = False


def parse_action(text: str, players: int) -> Step | None:
    """Parse one PHH action; None for a comment alone. Liberal: any spacing, ``#`` anywhere.

    >>> parse_action("p2 cbr 10 # raise", 3)
    Step(verb='cbr', player=1, cards=None, amount=10, dash=False)
    """
    words = text.split("#", 1)[0].split()
    if not words:
        return None
    if words[0] == "d":
        if len(words) < 3 or words[1] not in ("dh", "db"):
            raise PhhError(f"not a dealing action: {text!r}")
        if words[1] == "db":
            return Step("db", -1, _cards("".join(words[2:]), text))
        if len(words) < 4:
            raise PhhError(f"no cards in {text!r}")
        return Step("dh", _player(words[2], players, text), _cards("".join(words[3:]), text))
    if len(words) < 2:
        raise PhhError(f"not an action: {text!r}")
    player = _player(words[0], players, text)
    verb = words[1]
    rest = words[2:]
    if verb in ("pb", "cc", "f"):
        if rest:
            raise PhhError(f"{verb} takes nothing more: {text!r}")
        return Step(verb, player)
    if verb == "cbr":
        if len(rest) != 1:
            raise PhhError(f"cbr takes one amount: {text!r}")
        return Step(verb, player, amount=_chips(rest[0], "cbr"))
    if verb == "sm":
        if not rest:
            return Step(verb, player)
        if rest == ["-"]:
            return Step(verb, player, (), dash=True)
        return Step(verb, player, _cards("".join(rest), text))
    if verb == "sd":
        raise PhhError("stud has no draw: 'sd' does not apply")
    raise PhhError(f"unknown action {verb!r} in {text!r}")


def _player(word: str, players: int, text: str) -> int:
    if len(word) < 2 or word[0] not in "pP" or not word[1:].isdigit():
        raise PhhError(f"not a player: {word!r} in {text!r}")
    index = int(word[1:]) - 1
    if not 0 <= index < players:
        raise PhhError(f"no player {word} in a hand of {players}")
    return index


def _cards(text: str, action: str) -> tuple[Card, ...]:
    if not text or len(text) % 2:
        raise PhhError(f"not a list of cards: {action!r}")
    try:
        return tuple(
            UNKNOWN if text[k : k + 2] == "??" else parse_card(text[k : k + 2])
            for k in range(0, len(text), 2)
        )
    except EngineError:
        raise PhhError(f"not a list of cards: {action!r}") from None


# ---------------------------------------------------------------------- replay


class _Plan(NamedTuple):
    holes: list[list[list[Card]]]  # [street][position] -> cards dealt there
    common: dict[int, Card]  # street -> common card
    steps: list[tuple[Any, ...]]  # ("street", s) | ("bet", position, verb, amount) | ("show",)
    shown: dict[int, list[Card]]  # position -> cards that play at the showdown


def _plan(history: HandHistory, config: TableConfig) -> _Plan:
    """Read the actions once: which cards fall on which street, and what each seat shows.

    Dealing follows PokerKit: a deal after a betting action (or a card too many for a
    seat's street) starts the next street; cards a file leaves out are unknown.
    Showing follows PokerKit too: only the cards a seat shows at the last showdown play
    (``pN sm`` mucks, ``pN sm -`` shows the cards dealt, a partial show hides the rest).
    """
    n = len(history.starting_stacks)
    sizes = [len(s.cards) for s in config.streets]
    faces = [s.cards for s in config.streets]
    last = len(sizes) - 1
    holes: list[list[list[Card]]] = [[[] for _ in range(n)] for _ in sizes]
    common: dict[int, Card] = {}
    steps: list[tuple[Any, ...]] = []
    seen: list[list[tuple[Card, bool]]] = [[] for _ in range(n)]  # (card, face up) per seat
    receiving = [True] * n
    mucked = [False] * n
    showed_last = [False] * n
    street, dealing = 0, True
    for text in history.actions:
        step = parse_action(text, n)
        if step is None:
            continue
        verb, p = step.verb, step.player
        if verb == "dh":
            assert step.cards is not None
            for card in step.cards:
                if not dealing or street in common or len(holes[street][p]) >= sizes[street]:
                    street, dealing = street + 1, True
                    if street > last:
                        raise PhhError(f"more cards than {config.variant.title} deals: {text!r}")
                if not receiving[p]:
                    raise PhhError(f"p{p + 1} is dealt a card after leaving the hand: {text!r}")
                holes[street][p].append(card)
                seen[p].append((card, faces[street][len(holes[street][p]) - 1]))
            steps.append(("street", street))
        elif verb == "db":
            assert step.cards is not None
            if len(step.cards) != 1:
                raise PhhError(f"stud turns one common card at a time: {text!r}")
            fresh = dealing and street not in common and not any(holes[street])
            if not fresh:
                street += 1
            if street == 0 or street > last:
                raise PhhError(f"no common card can fall here: {text!r}")
            common[street], dealing = step.cards[0], True
            steps.append(("street", street))
        elif verb == "sm":
            dealing = False
            _show(step, seen, street == last, mucked, text)
            if step.cards is None:
                receiving[p] = False
            elif street == last:
                showed_last[p] = True
            steps.append(("show",))
        else:
            dealing = False
            if verb == "f":
                receiving[p] = False
            steps.append(("bet", p, verb, step.amount))
    shown: dict[int, list[Card]] = {}
    for p in range(n):
        if mucked[p]:
            shown[p] = []
        elif all(up for _, up in seen[p]):
            shown[p] = [c for c, _ in seen[p]]
        elif showed_last[p]:
            shown[p] = [c for c, up in seen[p] if up]
        else:
            shown[p] = []  # reached the last showdown without showing: cannot win
    return _Plan(holes, common, steps, shown)


def _show(
    step: Step,
    seen: list[list[tuple[Card, bool]]],
    last: bool,
    mucked: list[bool],
    text: str,
) -> None:
    """What ``pN sm`` leaves face up, as PokerKit reads it (shown cards replace the dealt)."""
    p = step.player
    hole = [c for c, _ in seen[p]]
    if step.cards is None:
        mucked[p] = True
        return
    mucked[p] = False
    if step.dash:
        if UNKNOWN in hole:
            raise PhhError(f"p{p + 1} shows cards nobody knows: {text!r}")
        seen[p] = [(c, True) for c in hole]
        return
    if len(step.cards) > len(hole):
        raise PhhError(f"p{p + 1} shows more cards than dealt: {text!r}")
    known = [c for c in step.cards if c != UNKNOWN]
    now = [(c, True) for c in known]
    if not last:  # before the last street the unshown cards stay, face down
        rest = [c for c in hole if c != UNKNOWN and c not in known]
        now += [(c, False) for c in rest[: len(hole) - len(known)]]
    now += [(UNKNOWN, False)] * (len(hole) - len(now))
    seen[p] = now


class ScriptedDeck(Deck):
    """Deals exactly the cards a record says, street by street; unknown where it is silent."""

    __slots__ = ("holes", "common_cards", "receiving", "street")

    def __init__(self, holes: list[list[list[Card]]], common: dict[int, Card], players: int):
        self.cards = []
        self.position = 0
        self.burns = []
        self.bottom_dealable = True
        self.set_aside_cards = []
        self.holes = holes
        self.common_cards = common
        self.receiving: Sequence[bool] = [True] * players
        self.street = 0

    def dealable(self) -> int:
        return CARD_COUNT

    def deal_round(self, count: int, burn: bool) -> tuple[list[Card], Card | None, str | None]:
        street = self.street
        self.street += 1
        if street in self.common_cards:
            return [], self.common_cards[street], "common_card"
        holes = self.holes[street]
        takers = [i for i, r in enumerate(self.receiving) if r]
        for i, cards in enumerate(holes):
            if cards and not self.receiving[i]:
                raise PhhError(f"p{i + 1} is dealt a card after leaving the hand")
        per_seat = count // len(takers)
        dealt: list[list[Card]] = []
        for i in takers:
            cards = holes[i]
            if len(cards) > per_seat:
                raise PhhError(f"p{i + 1} is dealt {len(cards)} cards where {per_seat} fall")
            dealt.append(cards + [UNKNOWN] * (per_seat - len(cards)))
        return [seat[k] for k in range(per_seat) for seat in dealt], None, None


def replay(history: HandHistory) -> list[int]:
    """Replay a hand with the engine under the ``phh`` profile; the finishing stacks.

    The file is the record of what happened: each action is applied for the player
    it names. Like PokerKit, a check (or, facing a bet, a fold) the file leaves out
    is filled in for whoever must act before the named player. Raises PhhError when
    the hand cannot be replayed.
    """
    hand = replay_hand(history)
    return [hand.stacks[i] for i in range(hand.n)]


def replay_hand(history: HandHistory) -> Hand:
    """Replay a hand (see :func:`replay`) and return the finished engine hand."""
    config = history.config()
    plan = _plan(history, config)
    n = len(history.starting_stacks)
    if any(s <= 0 for s in history.starting_stacks):
        raise PhhError("every player needs chips")
    deck = ScriptedDeck(plan.holes, plan.common, n)
    try:
        hand = Hand(config, list(enumerate(history.starting_stacks)), deck, plan.shown)
        deck.receiving = hand.receiving
        for step in plan.steps:
            if step[0] == "street":
                while not hand.over and hand.street < step[1]:
                    _fill_in(hand)
                if hand.street < step[1]:
                    raise PhhError("cards are dealt after the hand is over")
            elif step[0] == "bet":
                _bet(hand, step[1], step[2], step[3])
            else:
                while not hand.over and hand.to_act >= 0:
                    _fill_in(hand)
    except PhhError:
        raise
    except EngineError as exc:
        raise PhhError(str(exc)) from None
    if not hand.over:
        raise PhhError("the hand is not finished")
    _check_showdown(hand, plan)
    return hand


def _bet(hand: Hand, player: int, verb: str, amount: int | None) -> None:
    """Apply one betting action for ``player``, filling in what the file skipped before it."""
    if hand.over:
        raise PhhError(f"p{player + 1} acts after the hand is over")
    if hand.folded[player] or hand.stacks[player] == 0:
        raise PhhError(f"p{player + 1} cannot act: folded or all in")
    for _ in range(4 * hand.n):
        if hand.to_act == player or hand.over:
            break
        _fill_in(hand)
    if hand.to_act != player:
        raise PhhError(f"p{player + 1} acts out of turn")
    legal = hand.legal_actions()
    if verb == "cc":
        kind = "check" if "check" in legal.kinds else "call"
        action = Action(player, kind)
    elif verb == "pb":
        action = Action(player, "bring_in")
    elif verb == "f":
        action = Action(player, "fold")
    else:
        if legal.wager is None:
            raise PhhError(f"p{player + 1} may not bet or raise now")
        action = Action(player, legal.wager, amount)
    try:
        hand.apply(action)
    except EngineError as exc:
        raise PhhError(f"p{player + 1} {verb}{'' if amount is None else f' {amount}'}: {exc}")


def _fill_in(hand: Hand) -> None:
    """The action a file left out, as PokerKit fills it in: a check, or else a fold."""
    legal = hand.legal_actions()
    if legal.seat is None:
        raise PhhError("the hand is stuck")
    if "check" in legal.kinds:
        hand.apply(Action(legal.seat, "check"))
    elif "fold" in legal.kinds:
        hand.apply(Action(legal.seat, "fold"))
    else:
        raise PhhError(f"p{legal.seat + 1} must bring in before anything else happens")


def _check_showdown(hand: Hand, plan: _Plan) -> None:
    """Refuse a showdown pot that no eligible seat showed a hand for: nothing says who won."""
    result = hand.result()
    if not result.showdown:
        return
    need = 5 - len(hand.common)
    for pot in result.pots:
        if pot["amount"] and not any(
            len([c for c in plan.shown[s] if c != UNKNOWN]) >= need for s in pot["eligible"]
        ):
            raise PhhError("a pot goes to showdown but no player in it shows a hand")


# ---------------------------------------------------------------------- writing


def dumps(history: HandHistory) -> str:
    """Write a hand as PHH (TOML), fields in PokerKit's order, strings in single quotes."""
    lines = [
        f"variant = {_toml(history.variant)}",
        f"ante_trimming_status = {_toml(history.ante_trimming_status)}",
        f"antes = {_toml(list(history.antes))}",
        f"bring_in = {history.bring_in}",
        f"small_bet = {history.small_bet}",
        f"big_bet = {history.big_bet}",
        f"starting_stacks = {_toml(list(history.starting_stacks))}",
        f"actions = {_toml(list(history.actions))}",
    ]
    for key, value in history.fields.items():
        lines.append(f"{_key(key)} = {_toml(value)}")
    if history.finishing_stacks is not None:
        lines.append(f"finishing_stacks = {_toml(list(history.finishing_stacks))}")
    return "\n".join(lines) + "\n"


def dumps_all(histories: Iterable[HandHistory]) -> str:
    """Write several hands as one ``.phhs`` text: tables ``[1]``, ``[2]``..."""
    return "\n".join(f"[{k}]\n{dumps(h)}" for k, h in enumerate(histories, 1))


def _key(key: str) -> str:
    bare = key and all(c.isalnum() or c in "_-" for c in key)
    return key if bare else _toml(key)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        if "'" in value or "\n" in value or "\\" in value:
            return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        return f"'{value}'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (datetime.date, datetime.time, datetime.datetime)):
        return value.isoformat()
    raise PhhError(f"cannot write {value!r} as TOML")


# ---------------------------------------------------------------------- export


def history_of(hand: Hand, **fields: Any) -> HandHistory:
    """The PHH record of a finished engine hand played under the ``phh`` profile.

    PokerKit replays the record to the same stacks. Deals are written one action per
    seat and street, in seat order; every live hand is shown at the end (PokerKit
    kills the ones that cannot win). Extra ``fields`` (players, event...) are added.
    """
    config = hand.config
    if not hand.over:
        raise PhhError("the hand is not over")
    if not is_phh_config(config):
        raise PhhError("PHH cannot express this table's rules: play it with phh_config()")
    code = config.variant.phh_code
    assert code is not None
    streets = config.streets
    dealt = [0] * hand.n
    actions: list[str] = []
    index = hand.index_of
    for event in hand.events:
        kind, data = event.kind, event.data
        if kind == "street_dealt":
            size = len(next(s for s in streets if s.name == data["street"]).cards)
            for deal in data["deals"]:
                i = index[deal["seat"]]
                cards = hand.cards[i][dealt[i] : dealt[i] + size]
                dealt[i] += size
                actions.append(f"d dh p{i + 1} {format_cards(cards)}")
        elif kind == "common_card":
            actions.append(f"d db {data['card']}")
        elif kind == "action":
            actions.append(f"p{index[data['seat']] + 1} {_verb(data)}")
    if hand.result().showdown:
        for i in range(hand.n):
            if not hand.folded[i]:
                actions.append(f"p{i + 1} sm {format_cards(hand.cards[i])}")
    antes = config.ante_by_position or (config.ante,) * hand.n
    if hand.n == 2:
        antes = (antes[1], antes[0])  # PokerKit posts the other's ante heads-up
    return HandHistory(
        variant=code,
        antes=tuple(antes),
        bring_in=config.bring_in,
        small_bet=config.small_bet,
        big_bet=config.big_bet,
        starting_stacks=tuple(hand.starting),
        actions=tuple(actions),
        ante_trimming_status=not config.antes_dead,
        finishing_stacks=tuple(hand.stacks),
        fields={"seats": [s + 1 for s in hand.seats], **fields},
    )


def export(hand: Hand, **fields: Any) -> str:
    """The PHH text of a finished engine hand (see :func:`history_of`)."""
    return dumps(history_of(hand, **fields))


def _verb(data: Mapping[str, Any]) -> str:
    kind = data["action"]
    if kind == "fold":
        return "f"
    if kind in ("check", "call"):
        return "cc"
    if kind == "bring_in":
        return "pb"
    return f"cbr {data['to']}"


__all__ = [
    "PHH_RULES", "PHH_VARIANTS", "HandHistory", "PhhError", "ScriptedDeck", "Step", "dumps",
    "dumps_all", "export", "from_fields", "history_of", "is_phh_config", "loads", "loads_all",
    "parse_action", "phh_config", "replay", "replay_hand",
]
