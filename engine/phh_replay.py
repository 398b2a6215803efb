"""Replay a PHH hand with the engine, under the ``phh`` rules profile (docs/phh.md).

The file is the record of what happened: a :class:`Record` reads its actions in order while
the engine plays them, and a :class:`ScriptedDeck` deals what the file says, so the engine
reaches the stacks PokerKit computes.

>>> from engine.phh import loads
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

import random
from collections.abc import Iterator, Mapping, Sequence

from engine.actions import Action
from engine.cards import CARD_COUNT, UNKNOWN, Card, Deck
from engine.errors import EngineError, PhhError
from engine.hand import Hand
from engine.phh import HandHistory, Step, parse_action
from engine.variants import TableConfig

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
        self.fair = None  # a record's cards come from no seed
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


__all__ = [
    "Record",
    "ScriptedDeck",
    "replay",
    "replay_hand",
    "start",
]
