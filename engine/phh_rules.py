"""The ``phh`` rules profile: the table settings PokerKit, PHH's reference implementation,
plays a hand by, where they depart from RULES.md (docs/phh.md says why).

Only fixed-limit seven-card stud (``F7S``), stud hi-lo (``F7S/8``) and razz (``FR``) have PHH
codes. A hand played under :func:`phh_config` replays in PokerKit to the same stacks; a hand
of a table the profile does not describe (:func:`is_phh_config`) is marked as played by the
rule books, and replays under :func:`rule_book_config`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from decimal import Decimal
from typing import Any

from engine.errors import EngineError, PhhError
from engine.protocol import ErrorCode
from engine.variants import VARIANTS, TableConfig

#: PHH variant codes of the stud games, and the engine variant each one names.
PHH_VARIANTS: dict[str, str] = {
    v.phh_code: name for name, v in VARIANTS.items() if v.phh_code is not None
}

#: The user field the engine writes on a record of a hand played by the rule books, so that
#: replaying it follows those rules rather than PokerKit's conventions.
RULE_BOOKS_MARK = ("_rules", "rule_books")

#: PHH has no rake: the engine writes a raked table's rake settings as user fields (each
#: naming the ``TableConfig`` field it holds) so that a replay takes the same rake, and the
#: chips raked from the hand as ``_rake``. ``finishing_stacks`` are after the rake.
RAKE_FIELDS: dict[str, str] = {
    "_rake_percent": "rake_percent",
    "_rake_cap": "rake_cap",
    "_rake_from_street": "rake_from_street",
}
RAKE_TAKEN = "_rake"

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
        raise PhhError(f"unknown stud variant {variant!r}", code=ErrorCode.BAD_VARIANT)
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
        raise PhhError(f"unknown stud variant {variant!r}", code=ErrorCode.BAD_VARIANT)
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
        raise PhhError(str(exc), code=ErrorCode.BAD_PHH) from None


def rake_fields(config: TableConfig, raked: int) -> dict[str, Any]:
    """The user fields of a hand's record that say its table's rake and what it took (none
    for a table without a rake)."""
    if not config.rake_percent:
        return {}
    fields: dict[str, Any] = {RAKE_TAKEN: raked}
    for name, setting in RAKE_FIELDS.items():
        value = getattr(config, setting)
        if value is not None:
            fields[name] = value
    return fields


def with_rake(config: TableConfig, fields: Mapping[str, Any]) -> TableConfig:
    """``config`` with the rake a record's user fields give (:data:`RAKE_FIELDS`)."""
    values: dict[str, Any] = {}
    for name, setting in RAKE_FIELDS.items():
        if name in fields:
            value = fields[name]
            values[setting] = float(value) if isinstance(value, Decimal) else value
    if not values:
        return config
    try:
        return replace(config, **values)
    except (EngineError, TypeError) as exc:
        raise PhhError(f"bad rake fields: {exc}", code=ErrorCode.BAD_PHH) from None


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


__all__ = [
    "PHH_RULES",
    "PHH_VARIANTS",
    "RAKE_FIELDS",
    "RAKE_TAKEN",
    "RULE_BOOKS_MARK",
    "is_phh_config",
    "phh_config",
    "rake_fields",
    "rule_book_config",
    "with_rake",
]
