"""Stud hands in PHH, the Poker Hand History format: read and write the text.

A PHH file is TOML (https://phh.readthedocs.io); a ``.phhs`` file holds several hands.
:class:`HandHistory` is one hand as read, every field kept; :func:`parse_action` reads one
of its actions. Replaying a hand with the engine is :mod:`engine.phh_replay`, writing an
engine hand as PHH is :mod:`engine.phh_export`, and the rules a hand replays by are
:mod:`engine.phh_rules`.

Pure like the rest of the engine: text in, text or numbers out.

>>> history = loads('''variant = 'FR'
... antes = [1, 1]
... bring_in = 2
... small_bet = 5
... big_bet = 10
... starting_stacks = [50, 50]
... actions = ['d dh p1 2s3s4c', 'd dh p2 KsKdQc', 'p2 pb', 'p1 f']
... ''')
>>> history.variant, history.antes, history.starting_stacks
('FR', (1, 1), (50, 50))
>>> parse_action(history.actions[2], 2)
Step(verb='pb', player=1, cards=None, amount=None, dash=False)
"""

from __future__ import annotations

import datetime
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, NamedTuple

from engine.cards import UNKNOWN, Card, parse_card
from engine.errors import EngineError, PhhError
from engine.phh_rules import (
    PHH_VARIANTS,
    RAKE_FIELDS,
    RAKE_TAKEN,
    RULE_BOOKS_MARK,
    phh_config,
    rule_book_config,
    with_rake,
)
from engine.protocol import ErrorCode
from engine.variants import TableConfig

_REQUIRED = ("variant", "antes", "bring_in", "small_bet", "big_bet", "starting_stacks", "actions")


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
        the rule books' settings for a record the engine wrote of a rule-book table; either
        with the rake the record's user fields give (``engine.phh_rules.RAKE_FIELDS``)."""
        if self.fields.get(RULE_BOOKS_MARK[0]) == RULE_BOOKS_MARK[1]:
            config = rule_book_config(
                self.variant, self.antes, self.bring_in, self.small_bet, self.big_bet
            )
        else:
            try:
                config = phh_config(
                    self.variant,
                    _antes(self),
                    self.bring_in,
                    self.small_bet,
                    self.big_bet,
                    self.ante_trimming_status,
                )
            except EngineError as exc:
                raise PhhError(str(exc), code=ErrorCode.BAD_PHH) from None
        return with_rake(config, self.fields)


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
    engine's own: the mark of a hand played by the rule books (``_rules = "rule_books"``)
    and a raked table's rake (``_rake``, ``_rake_percent``...)."""
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
            k: v
            for k, v in document.items()
            if k not in known
            and (not k.startswith("_") or (k, v) == RULE_BOOKS_MARK or k in _ENGINE_FIELDS)
        },
    )


_ENGINE_FIELDS = frozenset((*RAKE_FIELDS, RAKE_TAKEN))


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


__all__ = [
    "HandHistory",
    "Step",
    "dumps",
    "dumps_all",
    "from_fields",
    "hands_of",
    "loads",
    "loads_all",
    "parse_action",
    "parse_toml",
]
