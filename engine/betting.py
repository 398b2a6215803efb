"""What the seat to act may do: the one source of legality of a hand.

PokerKit's pattern: one rule per action kind, and the same rule both lists the legal actions
and judges an action. The rules are here and nowhere else:

- ``bring_in``: due once on the first round, of the bring-in or the whole stack if short;
  while it is due there is no fold and no check.
- ``fold``: always, but while the bring-in is due.
- ``check``: nothing owed.
- ``call``: the chips owed, or the whole stack if short.
- ``complete``, ``bet``, ``raise``: the one aggressive action on offer, its name and its
  street totals: the reopening rule, the raise cap and the sizes of each structure, each
  written once.

:func:`legal_actions` applies the rules once when a turn begins; the hand keeps the answer
for the turn, and :func:`verify` judges an action against that answer, kind by kind, by name
(``Hand.apply`` first looks the usual action up in it by name, and calls :func:`verify` for
anything else). A fast path is only ever that kept answer, never a rule written again.
"""

from __future__ import annotations

from engine.actions import ACTION_KINDS, NO_ACTION, LegalActions
from engine.errors import IllegalAction, InvalidAction, NotYourTurn
from engine.hand_state import HandState
from engine.protocol import ErrorCode

_new_tuple = tuple.__new__
_ACTION_KINDS = frozenset(ACTION_KINDS)
# The kinds on offer by the wager on offer, facing a bet or not, and while the bring-in is
# due: built once, shared by every turn.
_WAGERS = (None, "bet", "raise", "complete")
_FACING_KINDS = {wager: ("fold", "call") + ((wager,) if wager else ()) for wager in _WAGERS}
_OPEN_KINDS = {wager: ("fold", "check") + ((wager,) if wager else ()) for wager in _WAGERS}
_BRING_IN_KINDS = {None: ("bring_in",), "complete": ("bring_in", "complete")}


def legal_actions(hand: HandState) -> LegalActions:
    """Who acts, the kinds on offer and their amounts: each kind's rule, in one pass."""
    i = hand.to_act
    if i < 0 or hand.over:
        return NO_ACTION
    stack = hand.stacks[i]
    bet = hand.bets[i]
    reach = bet + stack  # the most this seat can have in on this street
    current = hand.current_bet
    bring_in_due = hand.bring_in_pending
    plan = hand.plan
    # complete, bet, raise: whether one is on offer, by the rules of reopening and of the
    # raise cap; then its street totals (all in when short), then its name.
    if bring_in_due:
        # Completing instead of bringing in; under "largest_increase" a short stack may
        # complete, all in, for less.
        config = hand.config
        offered = config.bring_in < config.small_bet and (reach > config.bring_in or plan.largest)
    elif reach <= current:
        offered = False  # all in to call, or less
    else:
        if plan.largest:
            offered = _reopens_largest(hand, i)
        else:
            # Reopening: a seat that acted since the last full bet or raise (only a short
            # all-in since) may not raise again.
            acted = hand.acted[i]
            offered = acted != hand.raise_count or acted < 0
        if offered and plan.fixed:
            # The raise cap (fixed limit): a bet and ``max_raises`` raises, counting short
            # all-ins or not; none while only two seats with chips are in, if so set.
            made = hand.wagers if plan.count_short else hand.bets_made
            if made >= plan.cap:
                offered = hand.config.uncapped_heads_up and _heads_up(hand)
    wager: str | None = None
    low = high = 0
    targets: tuple[int, ...] = ()
    if offered:
        size = hand.bet_size
        if size and plan.plain_limit:  # fixed limit's one size: the usual case
            target = hand.bet_level + size
            if target > reach:
                target = reach
            if target > current:
                low = high = target
                targets = (target,)
        else:
            targets = _other_targets(hand, i, reach)
            if targets:
                low, high = targets[0], targets[-1]
                if not plan.fixed:
                    targets = ()  # pot and no limit: any total from low to high
        if low:
            if bring_in_due:
                wager = "complete"
            elif current == 0:
                wager = "bet"
            elif hand.bet_level == 0 if not plan.largest else _completing(hand):
                wager = "complete"
            else:
                wager = "raise"
    seat = hand.seats[i]
    if bring_in_due:
        # bring_in: the bring-in, or the whole stack when short; no fold, no check.
        posts = hand.config.bring_in
        if posts > stack:
            posts = stack
        kinds = _BRING_IN_KINDS[wager]
        return _new_tuple(LegalActions, (seat, kinds, 0, posts, wager, low, high, targets))
    # fold: always. check: nothing owed. call: what is owed, or the whole stack when short.
    owe = current - bet
    call = owe if owe < stack else stack
    kinds = (_FACING_KINDS if owe > 0 else _OPEN_KINDS)[wager]
    return _new_tuple(LegalActions, (seat, kinds, call, 0, wager, low, high, targets))


def _reopens_largest(hand: HandState, i: int) -> bool:
    """Reopening under "largest_increase", no-limit style: the seat must face at least the
    largest increase, and a run of short all-ins smaller than it does not reopen the betting
    for who already acted; nor is a raise offered that nobody could call."""
    current = hand.current_bet
    folded, bets, stacks = hand.folded, hand.bets, hand.stacks
    if not any(j != i and not folded[j] and bets[j] + stacks[j] > current for j in range(hand.n)):
        return False
    if min(current - bets[i], stacks[i]) < hand.largest_increase:
        return False
    return not (hand.short_run and hand.acted[i] == hand.raise_count)


def _other_targets(hand: HandState, i: int, reach: int) -> tuple[int, ...]:
    """Street totals under the "largest_increase" rule, fixed limit's open-pair choice of
    the small or the big bet, and pot and no limit (the lowest and the highest)."""
    current = hand.current_bet
    config = hand.config
    plan = hand.plan
    if plan.largest:
        if _completing(hand):
            target = config.small_bet
        else:
            target = current + max(hand.largest_increase, hand.increments[0])
        if target <= reach:
            return (target,)
        return (reach,) if reach > current else ()
    if plan.fixed:
        targets = [hand.bet_level + increment for increment in hand.increments]
        allowed = [t for t in targets if t <= reach]
        if len(allowed) < len(targets) and reach > current:
            allowed.append(reach)
        return tuple(sorted(set(t for t in allowed if t > current)))
    small = config.small_bet
    if hand.bet_level == 0:
        low = small if current < small else current + small
    else:
        low = current + hand.last_raise
    if config.structure == "pot_limit":
        high = current + hand.pot_total() + current - hand.bets[i]
    else:
        high = reach
    high = min(high, reach)
    low = min(low, reach)
    if low <= current:
        return ()
    return (low, max(low, high))


def _completing(hand: HandState) -> bool:
    """First round, bring-in posted (or due) and nothing wagered yet: a wager completes."""
    return hand.street == 0 and hand.config.bring_in > 0 and hand.wagers == 0


def _heads_up(hand: HandState) -> bool:
    """At most two seats are in with chips (the fixed-limit raise cap may not apply)."""
    folded, stacks = hand.folded, hand.stacks
    count = 0
    for i in range(hand.n):
        if not folded[i] and stacks[i]:
            count += 1
            if count > 2:
                return False
    return True


def _allowed_totals(legal: LegalActions) -> str:
    """The totals a wager may name, in words, for a refusal to state them."""
    if legal.to_choices:
        if len(legal.to_choices) == 1:
            return f"only {legal.to_choices[0]}"
        return "one of " + ", ".join(str(to) for to in legal.to_choices)
    if legal.min_to == legal.max_to:
        return f"only {legal.min_to}"
    return f"between {legal.min_to} and {legal.max_to}"


def verify(
    hand: HandState, legal: LegalActions, seat: int, kind: str, amount: int | None
) -> int | None:
    """Judge seat ``seat``'s action against the turn's legal actions; raise on the first check
    that fails. Returns the amount, a wager's default (its smallest total) filled in."""
    if kind not in _ACTION_KINDS:
        raise InvalidAction(f"unknown action {kind!r}", code=ErrorCode.UNKNOWN_ACTION)
    if amount is not None and (not isinstance(amount, int) or isinstance(amount, bool)):
        raise InvalidAction("amount must be a whole number of chips", code=ErrorCode.BAD_AMOUNT)
    if hand.over:
        raise IllegalAction("the hand is over", code=ErrorCode.HAND_OVER)
    i = hand.index_of.get(seat, -1)
    if i != hand.to_act:
        if i < 0:
            raise IllegalAction(f"seat {seat} is not in this hand", code=ErrorCode.NOT_IN_HAND)
        raise NotYourTurn(f"seat {hand.seats[hand.to_act]} is to act, not seat {seat}")
    if kind not in legal.kinds:
        raise IllegalAction(
            f"{kind} is not allowed now; allowed: {', '.join(legal.kinds)}",
            code=ErrorCode.ACTION_NOT_ALLOWED,
        )
    if kind == legal.wager:
        if amount is None:
            return legal.to_choices[0] if legal.to_choices else legal.min_to
        if legal.allows(kind, amount):  # which totals may be named, stated once
            return amount
        raise IllegalAction(
            f"{kind} to {amount} is not allowed: {_allowed_totals(legal)}",
            code=ErrorCode.BAD_AMOUNT,
        )
    if amount is None:
        return None
    if kind == "call":
        due = legal.call
    elif kind == "bring_in":
        due = legal.bring_in
    else:
        raise InvalidAction(f"{kind} takes no amount", code=ErrorCode.BAD_AMOUNT)
    if amount != due:  # a call or bring-in may name its chips, but only the right ones
        raise IllegalAction(f"{kind} is {due} chips, not {amount}", code=ErrorCode.BAD_AMOUNT)
    return amount
