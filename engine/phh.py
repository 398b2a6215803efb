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
import random
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
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

#: The user field the engine writes on a record of a hand played by the rule books, so that
#: replaying it follows those rules rather than PokerKit's conventions.
RULE_BOOKS_MARK = ("_rules", "rule_books")

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
        trim_antes=ante_trimming,
        **PHH_RULES,
    )


def rule_book_config(
    variant: str, antes: Sequence[int], bring_in: int, small_bet: int, big_bet: int
) -> TableConfig:
    """The default (RULES.md) settings at a record's stakes: how a rule-book hand replays."""
    name = PHH_VARIANTS.get(variant, variant)
    if name not in VARIANTS:
        raise PhhError(f"unknown stud variant {variant!r}", code="bad_variant")
    values = tuple(antes)
    uniform = len(set(values)) <= 1
    try:
        return TableConfig(
            variant=VARIANTS[name],
            ante=values[0] if values else 0,
            ante_by_position=None if uniform else values,
            bring_in=bring_in,
            small_bet=small_bet,
            big_bet=big_bet,
        )
    except EngineError as exc:
        raise PhhError(str(exc), code="bad_phh") from None


def is_phh_config(config: TableConfig) -> bool:
    """Whether a hand played with ``config`` can be written as PHH and replayed by PokerKit."""
    if config.variant.phh_code is None or config.bring_in >= config.small_bet:
        return False
    if not (config.ante or config.ante_by_position or config.bring_in):
        return False
    return all(getattr(config, key) == value for key, value in PHH_RULES.items()) and (
        config.bring_in_card is None
        and config.last_card_down is False
        and config.trim_antes != config.antes_dead
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
        """The ``phh`` profile for this hand, antes as PokerKit posts them (see _antes);
        the rule books' settings for a record the engine wrote of a rule-book table."""
        if self.fields.get(RULE_BOOKS_MARK[0]) == RULE_BOOKS_MARK[1]:
            return rule_book_config(
                self.variant, self.antes, self.bring_in, self.small_bet, self.big_bet
            )
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
    return [from_fields(fields) for _, fields in hands_of(parse_toml(text))]


def parse_toml(text: str) -> dict[str, Any]:
    """TOML as PHH uses it; decimals stay exact. Raises PhhError when it is not TOML.

    Files as PokerKit writes them (``key = value`` lines, strings without escapes, integers,
    one-line arrays) take a fast path; anything else goes to ``tomllib``.
    """
    document = _plain_toml(text)
    if document is not None:
        return document
    try:
        return tomllib.loads(text, parse_float=Decimal)
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise PhhError(f"not TOML: {exc}") from None


def hands_of(document: Mapping[str, Any]) -> list[tuple[str | None, Mapping[str, Any]]]:
    """The hands of a parsed file: the file itself (name None), or each table of a .phhs."""
    if "variant" in document or "actions" in document:
        return [(None, document)]
    tables: list[tuple[str | None, Mapping[str, Any]]] = [
        (str(key), value) for key, value in document.items() if isinstance(value, dict)
    ]
    if not tables:
        raise PhhError("no hand in this file")
    return tables


_TOML_TEXT = r"\x00-\x08\x0a-\x1f\x7f"  # control characters TOML strings may not hold
_TOML_ITEM = rf"""'[^'{_TOML_TEXT}]*'|"[^"\\{_TOML_TEXT}]*"|[+-]?(?:0|[1-9][0-9]*)"""
_TOML_LINE = re.compile(
    rf"""[ \t]*(?P<key>[A-Za-z0-9_-]+)[ \t]*=[ \t]*(?:(?P<item>{_TOML_ITEM})|(?P<bool>true|false)"""
    rf"""|\[(?P<array>[ \t]*(?:(?:{_TOML_ITEM})[ \t]*,[ \t]*)*(?:(?:{_TOML_ITEM})[ \t]*)?)\])"""
    rf"""[ \t]*(?:#[^{_TOML_TEXT}]*)?"""
)
_TOML_ITEMS = re.compile(_TOML_ITEM)


def _plain_toml(text: str) -> dict[str, Any] | None:
    """The subset of TOML PokerKit writes, read quickly; None when the text needs more."""
    document: dict[str, Any] = {}
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped or stripped[0] == "#":
            continue
        match = _TOML_LINE.fullmatch(line.rstrip("\r"))
        if match is None or match["key"] in document:
            return None
        if match["item"] is not None:
            value: Any = _toml_item(match["item"])
        elif match["bool"] is not None:
            value = match["bool"] == "true"
        else:
            value = [_toml_item(item) for item in _TOML_ITEMS.findall(match["array"])]
        document[match["key"]] = value
    return document


def _toml_item(item: str) -> str | int:
    return item[1:-1] if item[0] in "'\"" else int(item)


def from_fields(document: Mapping[str, Any]) -> HandHistory:
    """A hand from parsed TOML fields; fields starting with ``_`` are ignored, but for the
    engine's own mark of a hand played by the rule books (``_rules = "rule_books"``)."""
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
        fields={
            k: v for k, v in document.items()
            if k not in known and (not k.startswith("_") or (k, v) == RULE_BOOKS_MARK)
        },
    )


def _chips(value: Any, name: str) -> int:
    """Whole chips: an int, or a number with nothing after the point (PHH allows decimals)."""
    if type(value) is int and value >= 0:
        return value
    if type(value) is str and value.isdigit():
        return int(value)
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
    """Each position's ante: ``antes[i]`` is pN's (the PHH spec).

    (PokerKit swaps the two antes of a heads-up hand, a blind-game habit; docs/phh.md.)
    """
    return history.antes


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
    words = (text[: text.index("#")] if "#" in text else text).split()
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


_PLAYERS = {f"p{k}": k - 1 for k in range(1, 100)}
_CARD_OF = {text: parse_card(text) for text in (r + s for r in "23456789TJQKA" for s in "cdhs")}
_CARD_OF["??"] = UNKNOWN


def _player(word: str, players: int, text: str) -> int:
    index = _PLAYERS.get(word)
    if index is None:
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
        return tuple([_CARD_OF[text[k : k + 2]] for k in range(0, len(text), 2)])
    except KeyError:
        pass
    try:  # lowercase ranks and the like
        return tuple(
            UNKNOWN if text[k : k + 2] == "??" else parse_card(text[k : k + 2])
            for k in range(0, len(text), 2)
        )
    except EngineError:
        raise PhhError(f"not a list of cards: {action!r}") from None


# ---------------------------------------------------------------------- replay


# Parsed actions, shared by every file (the same few thousand strings recur).
_PARSED: dict[tuple[str, int], Step | None] = {}
_NOT_PARSED = Step("", -1)


class Record:
    """A file's actions, read in order while the engine plays them, as PokerKit reads them.

    The engine deals a street when the betting before it ends; the record then hands it
    the deals that follow in the file (the shows of an all-in showdown may come first).
    A deal for a seat that already has its street's cards belongs to the next street; a
    seat the file deals nothing gets unknown cards. At the showdown, only the cards each
    seat shows play (``pN sm`` mucks, ``pN sm -`` shows the dealt cards, a partial show
    hides the rest, and a seat that shows nothing on the last street cannot win).
    """

    def __init__(self, history: HandHistory, config: TableConfig) -> None:
        n = len(history.starting_stacks)
        cache = _PARSED
        if len(cache) > 50_000:
            cache.clear()
        steps: list[Step | None] = []
        for text in history.actions:
            step = cache.get((text, n), _NOT_PARSED)
            if step is _NOT_PARSED:
                step = cache[text, n] = parse_action(text, n)
            steps.append(step)
        self.players = n
        self.texts = history.actions
        self.steps = steps
        self.used = [False] * len(steps)
        self.pos = 0  # the action being read: deals are looked for from here on
        self.streets = config.streets
        self.dealt: list[dict[int, list[Card]]] = []  # per street: seat -> its cards there
        self.dealt_at: list[int] = []  # per street: the action before which it was dealt
        self.common: dict[int, Card] = {}
        self._shown: dict[int, list[Card]] | None = None

    def deal(self, count: int, receiving: Sequence[bool]) -> tuple[list[Card], Card | None]:
        """The next street's cards for the seats still ``receiving``, round by round."""
        street = len(self.dealt)
        takers = [i for i, r in enumerate(receiving) if r]
        per_seat = count // len(takers) if takers else 0
        got: dict[int, list[Card]] = {i: [] for i in takers}
        steps, used = self.steps, self.used
        started = False
        first = self.pos  # when the street was dealt: at its first action in the file
        k = self.pos
        while k < len(steps):
            step = steps[k]
            if step is None or used[k]:
                k += 1
                continue
            verb = step.verb
            if verb == "sm" and not started:
                k += 1  # an all-in showdown's shows come before the rest of the cards
                continue
            if verb == "db" and not started:
                assert step.cards is not None
                if len(step.cards) != 1:
                    raise PhhError(f"stud turns one common card at a time: {self.texts[k]!r}")
                used[k] = True
                self.common[street] = step.cards[0]
                self.dealt.append({})
                self.dealt_at.append(k)
                return [], step.cards[0]
            if verb != "dh":
                break
            assert step.cards is not None
            mine = got.get(step.player)
            if mine is None or len(mine) + len(step.cards) > per_seat:
                if mine is not None and not mine:
                    raise PhhError(f"more cards than a street deals: {self.texts[k]!r}")
                break  # the next street's (or a seat out of the hand: refused later)
            mine.extend(step.cards)
            if not started:
                first, started = k, True
            used[k] = True
            k += 1
        for cards in got.values():
            cards.extend([UNKNOWN] * (per_seat - len(cards)))
        self.dealt.append(got)
        self.dealt_at.append(first)
        return [got[i][c] for c in range(per_seat) for i in takers], None

    def shown(self) -> dict[int, list[Card]]:
        """Per seat, the cards that play at the showdown (read once all cards are dealt)."""
        if self._shown is None:
            self._shown = self._read_shows()
        return self._shown

    def _read_shows(self) -> dict[int, list[Card]]:
        n, last = self.players, len(self.streets) - 1
        seen: list[list[tuple[Card, bool]]] = [[] for _ in range(n)]  # (card, face up)
        mucked = [False] * n
        showed_last = [False] * n
        reached = 0  # streets dealt so far, as the actions are read

        def reach(before: int) -> int:
            s = reached
            while s < len(self.dealt) and self.dealt_at[s] <= before:
                faces = self.streets[s].cards
                for seat, cards in self.dealt[s].items():
                    seen[seat].extend(zip(cards, faces, strict=False))
                s += 1
            return s

        for k, step in enumerate(self.steps):
            if step is None or step.verb != "sm":
                continue
            reached = reach(k)
            on_last = reached - 1 == last
            _show(step, seen, on_last, mucked, self.texts[k])
            showed_last[step.player] = on_last and step.cards is not None
        reach(len(self.steps))
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
        return shown


class _Shown(Mapping[int, Sequence[Card]]):
    """The engine's ``shown`` cards, read from the record only when the showdown comes."""

    def __init__(self, record: Record) -> None:
        self.record = record

    def __getitem__(self, seat: int) -> Sequence[Card]:
        return self.record.shown()[seat]

    def __iter__(self) -> Iterator[int]:
        return iter(self.record.shown())

    def __len__(self) -> int:
        return len(self.record.shown())


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
    """Deals what a record says, street by street, to the seats still in (``receiving``)."""

    __slots__ = ("record", "receiving")

    def __init__(self, record: Record) -> None:
        self.cards = []
        self.position = 0
        self.burns = []
        self.bottom_dealable = True
        self.set_aside_cards = []
        self.settled = CARD_COUNT
        self.rng = random.Random(0)  # never used: the record says every card
        self.record = record
        self.receiving: Sequence[bool] = [True] * record.players

    def dealable(self) -> int:
        return CARD_COUNT

    def deal_round(self, count: int, burn: bool) -> tuple[list[Card], Card | None, str | None]:
        cards, common = self.record.deal(count, self.receiving)
        return cards, common, None if common is None else "common_card"


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
    if any(s <= 0 for s in history.starting_stacks):
        raise PhhError("every player needs chips")
    record = Record(history, config)
    hand = start(history, config, record)
    steps = record.steps
    try:
        for k, step in enumerate(steps):
            if step is None or record.used[k]:
                continue
            record.pos = k
            verb = step.verb
            if verb in ("dh", "db"):
                # Not dealt yet: the betting before it is not over (PokerKit fills it in).
                for _ in range(4 * hand.n * len(config.streets)):
                    if record.used[k] or hand.over:
                        break
                    _fill_in(hand)
                if not record.used[k]:
                    raise PhhError(f"cards dealt after the hand is over: {record.texts[k]!r}")
            elif verb == "sm":
                while not hand.over and hand.to_act >= 0:
                    _fill_in(hand)
            else:
                _bet(hand, record, k, step)
    except PhhError:
        raise
    except EngineError as exc:
        raise PhhError(str(exc)) from None
    if not hand.over:
        raise PhhError("the hand is not finished")
    _check_showdown(hand, record)
    return hand


def start(history: HandHistory, config: TableConfig, record: Record | None = None) -> Hand:
    """The engine hand of a record, antes posted and third street dealt (from the record)."""
    record = record or Record(history, config)
    deck = ScriptedDeck(record)
    try:
        hand = Hand(config, list(enumerate(history.starting_stacks)), deck, _Shown(record))
    except PhhError:
        raise
    except EngineError as exc:
        raise PhhError(str(exc)) from None
    deck.receiving = hand.receiving
    return hand


def _bet(hand: Hand, record: Record, k: int, step: Step) -> None:
    """Apply one betting action for its player, filling in what the file skipped before it."""
    player, verb, amount = step.player, step.verb, step.amount
    for _ in range(4 * hand.n):
        if hand.to_act == player or hand.over:
            break
        if hand.folded[player] or hand.stacks[player] == 0:
            break
        _fill_in(hand)
    if hand.over:
        raise PhhError(f"p{player + 1} acts after the hand is over: {record.texts[k]!r}")
    if hand.to_act != player:
        raise PhhError(f"p{player + 1} cannot act now: {record.texts[k]!r}")
    legal = hand.legal_actions()
    if verb == "cc":
        action = Action(player, "check" if "check" in legal.kinds else "call")
    elif verb == "pb":
        action = Action(player, "bring_in")
    elif verb == "f":
        action = Action(player, "fold")
    elif legal.wager is None:
        raise PhhError(f"p{player + 1} may not bet or raise now: {record.texts[k]!r}")
    else:
        action = Action(player, legal.wager, amount)
    record.pos = k + 1  # the cards this action brings out follow it
    try:
        hand.apply(action)
    except EngineError as exc:
        raise PhhError(f"{record.texts[k]!r}: {exc}") from None


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


def _check_showdown(hand: Hand, record: Record) -> None:
    """Refuse a showdown pot that no eligible seat showed a hand for: nothing says who won.

    (PokerKit burns such a pot: nobody gets it; docs/phh.md.)
    """
    result = hand.result()
    if not result.showdown:
        return
    shown = record.shown()
    need = 5 - len(hand.common)
    for pot in result.pots:
        if pot["amount"] and not any(
            sum(c != UNKNOWN for c in shown[s]) >= need for s in pot["eligible"]
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


def history_of(hand: Hand, /, **fields: Any) -> HandHistory:
    """The PHH record of a finished engine hand of a variant PHH has a code for.

    A hand played under the ``phh`` profile replays in PokerKit to the same stacks, save
    where PokerKit is wrong (docs/phh.md: hi-lo pots without an eligible low, chips above
    every live total, heads-up antes that differ). A hand played by the rule books is still
    a faithful record of its deals and actions, with its true ``finishing_stacks``; the
    user field ``_rules = "rule_books"`` says that a replay under PokerKit's conventions may
    pay it differently (docs/phh.md lists where). Deals are written one action per seat and
    street, in seat order; every live hand is shown at the end. Extra ``fields`` (players,
    event...) are added.
    """
    config = hand.config
    if not hand.over:
        raise PhhError("the hand is not over")
    code = config.variant.phh_code
    if code is None or config.structure != "fixed_limit" or config.last_card_down:
        raise PhhError(f"PHH has no code for {config.variant.title} ({config.structure})")
    if not is_phh_config(config):
        fields = {RULE_BOOKS_MARK[0]: RULE_BOOKS_MARK[1], **fields}
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
    return HandHistory(
        variant=code,
        antes=tuple(antes),
        bring_in=config.bring_in,
        small_bet=config.small_bet,
        big_bet=config.big_bet,
        starting_stacks=tuple(hand.starting),
        actions=tuple(actions),
        ante_trimming_status=config.trim_antes,
        finishing_stacks=tuple(hand.stacks),
        fields={"seats": [s + 1 for s in hand.seats], **fields},
    )


def export(hand: Hand, /, **fields: Any) -> str:
    """The PHH text of a finished engine hand (see :func:`history_of`)."""
    return dumps(history_of(hand, **fields))


_DEAL = re.compile(r"^d dh p(\d+) (\S+)(.*)$")


def as_seen_by(
    history: HandHistory, player: int, shown: Iterable[int] | None = None
) -> HandHistory:
    """The record as one player (0-based index) saw it: the down cards of every other
    player who never showed them become ``??``, as PHH writes unknown cards.

    ``shown`` names the players (0-based) whose hands were tabled at the showdown; a hand
    the record shows but its player mucked is written as a muck (``pN sm``). By default
    every ``sm`` with cards counts as shown. Which cards were down follows from where each
    falls in its player's deal sequence (the variant's streets), as a reader works it out.
    """
    faces = [up for street in history.config().streets for up in street.cards]
    showing: set[int] = set()
    for text in history.actions:
        words = text.split("#", 1)[0].split()
        if len(words) >= 3 and words[1] == "sm" and words[2] != "-":
            showing.add(int(words[0][1:]) - 1)
    tabled = showing if shown is None else set(shown)
    dealt = [0] * len(history.starting_stacks)
    actions = []
    for text in history.actions:
        match = _DEAL.match(text)
        if match is None:
            words = text.split("#", 1)[0].split()
            is_show = len(words) >= 3 and words[1] == "sm" and words[2] != "-"
            if is_show and int(words[0][1:]) - 1 not in tabled:
                text = f"{words[0]} sm"  # mucked at the table: its cards stay unknown
            actions.append(text)
            continue
        who = int(match.group(1)) - 1
        cards = [match.group(2)[k : k + 2] for k in range(0, len(match.group(2)), 2)]
        first = dealt[who] if 0 <= who < len(dealt) else 0
        if 0 <= who < len(dealt):
            dealt[who] += len(cards)
        if who == player or who in tabled:
            actions.append(text)
            continue
        masked = [
            card if first + k < len(faces) and faces[first + k] else "??"
            for k, card in enumerate(cards)
        ]
        actions.append(f"d dh p{who + 1} {''.join(masked)}{match.group(3)}")
    return replace(history, actions=tuple(actions))


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
    "PHH_RULES", "PHH_VARIANTS", "HandHistory", "PhhError", "Record", "ScriptedDeck", "Step",
    "as_seen_by", "dumps", "dumps_all", "export", "from_fields", "hands_of", "history_of",
    "is_phh_config", "loads", "loads_all", "parse_action", "parse_toml", "phh_config", "replay",
    "replay_hand", "start",
]
