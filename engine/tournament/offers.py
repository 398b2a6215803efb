"""A deal at the final table, from its proposal to its end: the part of the director's state
that keeps it (``engine.tournament.run`` holds one :class:`DealDesk`).

A player left at the final table proposes a deal: a way to share (:data:`METHODS`, worked
out by ``engine.tournament.deals``) and an amount kept back to play on for. Its amounts are
worked out on the stacks at a hand boundary, once the hand in play ends, and shown to every
player left (:class:`DealOffered`); the table deals no hand while an offer stands. Every
player left accepts, and the deal is made (:class:`DealMade`): each player is paid their
amount at once, and the prizes still to pay become the amount played for, first place's.
One decline, or no deal made within the offer's seconds, withdraws it
(:class:`DealWithdrawn`), and play goes on. A deal leaves the players' chips as they are:
the tournament goes on to a winner, places still given as players go out.

Each refusal comes before anything changes (the director refuses the request with nothing
changed); each order is a plain record, the director's to carry out (pay, publish).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import Refusal
from engine.protocol import ErrorCode
from engine.tournament.deals import DealError, chip_chop, icm

# How long an offer stands once shown, in seconds, unless its proposal says otherwise (the
# server files it with the proposal, so that a journal replays with the time it was given).
DEAL_OFFER_SECONDS = 60.0

METHODS: Mapping[str, Callable[..., tuple[int, ...]]] = {"chip_chop": chip_chop, "icm": icm}


@dataclass(frozen=True, slots=True)
class DealShare:
    """One player's part of an offer: their chips when it was worked out, and their amount."""

    player: str
    chips: int
    amount: int


@dataclass(frozen=True, slots=True)
class DealProposal:
    """A deal proposed while a hand was in play: its amounts wait for the hand's end."""

    number: int
    method: str
    played_for: int
    proposer: str
    seconds: float


@dataclass(frozen=True, slots=True)
class DealOffer:
    """A deal's amounts, shown to every player left: ``prizes`` are the prizes still to pay
    it shares (first place first, one per player left); each share's amount and the amount
    played for sum to them exactly."""

    number: int
    method: str
    played_for: int
    proposer: str
    prizes: tuple[int, ...]
    shares: tuple[DealShare, ...]  # in the final table's seat order
    shown_at: float
    expires_at: float

    @property
    def players(self) -> frozenset[str]:
        return frozenset(share.player for share in self.shares)

    def to_dict(self) -> dict[str, Any]:
        """As JSON: what the journal keeps of it and the players are shown."""
        return {
            "number": self.number,
            "method": self.method,
            "played_for": self.played_for,
            "proposer": self.proposer,
            "prizes": list(self.prizes),
            "shares": [
                {"player": s.player, "chips": s.chips, "amount": s.amount} for s in self.shares
            ],
            "shown_at": self.shown_at,
            "expires_at": self.expires_at,
        }


# ---------------------------------------------------------------------- the orders


@dataclass(frozen=True, slots=True)
class DealOffered:
    """``offer``'s amounts worked out and shown to every player left; no hand is dealt until
    it is made or withdrawn."""

    offer: DealOffer


@dataclass(frozen=True, slots=True)
class DealMade:
    """Every player left accepted ``offer``: each share's amount is paid now, from the prize
    pool; what is left in it is the amount played for, the winner's."""

    offer: DealOffer


@dataclass(frozen=True, slots=True)
class DealWithdrawn:
    """Deal ``number`` withdrawn: ``declined`` (by ``player``), ``timeout`` (nobody declined,
    not everyone accepted in time) or ``over`` (the hand it waited for ended the
    tournament). Play goes on."""

    number: int
    reason: str
    player: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "reason": self.reason, "player": self.player}


DealOrder = DealOffered | DealMade | DealWithdrawn


# ---------------------------------------------------------------------- the state


class DealDesk:
    """The deal in hand at the final table (a proposal waiting for its hand's end, or an
    offer shown), and the deals made."""

    def __init__(self) -> None:
        self.proposal: DealProposal | None = None
        self.offer: DealOffer | None = None
        self.accepted: set[str] = set()
        self.made: list[DealOffer] = []
        self.proposed = 0  # the proposals so far: each one's number

    def __eq__(self, other: object) -> bool:
        """The same deals in hand and made (a refused request is checked to change none)."""
        return isinstance(other, DealDesk) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment]  # mutable

    @property
    def standing(self) -> bool:
        """A deal proposed or offered, not yet made or withdrawn: no hand is dealt."""
        return self.proposal is not None or self.offer is not None

    @property
    def expires_at(self) -> float | None:
        return self.offer.expires_at if self.offer is not None else None

    def prizes_now(self, published: Sequence[int]) -> tuple[int, ...]:
        """The prizes by place as they stand: the published ones, or, once a deal is made,
        the amount played for first and nothing for the places it dealt."""
        if not self.made:
            return tuple(published)
        last = self.made[-1]
        dealt = len(last.prizes)
        return (last.played_for, *[0] * (dealt - 1), *published[dealt:])

    def dealt(self, player: str) -> int:
        """What ``player`` was paid by the deals made."""
        return sum(s.amount for offer in self.made for s in offer.shares if s.player == player)

    # ------------------------------------------------------------------ facts

    def propose(
        self,
        player: str,
        method: str,
        played_for: int,
        seconds: float,
        *,
        stacks: Mapping[str, int],
        prizes: Sequence[int],
    ) -> DealProposal:
        """A proposal checked against the stacks and prizes still to pay now (a hand's end
        only takes players out, which changes neither first place's lead nor the count a
        method can work out), and kept; a refusal changes nothing."""
        standing = self.offer or self.proposal
        if standing is not None:
            raise Refusal(
                f"deal {standing.number} is offered already: accept or decline it",
                code=ErrorCode.DEAL_OFFER_STANDING,
            )
        share = METHODS.get(method)
        if share is None:
            raise Refusal(
                "method: must be one of " + ", ".join(sorted(METHODS)), code=ErrorCode.BAD_DEAL
            )
        if not isinstance(seconds, int | float) or isinstance(seconds, bool) or seconds <= 0:
            raise Refusal("seconds: must be above 0", code=ErrorCode.BAD_DEAL)
        if not any(prizes):
            raise Refusal("no prize is left to share", code=ErrorCode.BAD_DEAL)
        try:
            share(list(stacks.values()), prizes, played_for=played_for)
        except DealError as error:
            raise Refusal(error.message, code=ErrorCode.BAD_DEAL) from None
        self.proposed += 1
        self.proposal = DealProposal(self.proposed, method, played_for, player, float(seconds))
        return self.proposal

    def show(self, stacks: Mapping[str, int], prizes: Sequence[int], at: float) -> DealOffered:
        """The proposal's amounts on ``stacks`` (every player left, in seat order) at a hand
        boundary: the offer shown."""
        proposal = self.proposal
        if proposal is None:
            raise ValueError("no deal proposed to show")
        players = list(stacks)
        chips = [stacks[p] for p in players]
        amounts = METHODS[proposal.method](chips, prizes, played_for=proposal.played_for)
        self.offer = DealOffer(
            number=proposal.number,
            method=proposal.method,
            played_for=proposal.played_for,
            proposer=proposal.proposer,
            prizes=tuple(prizes),
            shares=tuple(
                DealShare(p, c, a) for p, c, a in zip(players, chips, amounts, strict=True)
            ),
            shown_at=at,
            expires_at=at + proposal.seconds,
        )
        self.proposal = None
        self.accepted = set()
        return DealOffered(self.offer)

    def accept(self, player: str, number: int, at: float) -> DealMade | None:
        """``player`` accepts offer ``number`` (again: nothing more); the deal made once every
        player left has."""
        offer = self._shown(number, at)
        if player not in offer.players:
            raise Refusal(f"{player} has no part in deal {number}", code=ErrorCode.NOT_PLAYING)
        self.accepted.add(player)
        if self.accepted != offer.players:
            return None
        self.made.append(offer)
        self.offer, self.accepted = None, set()
        return DealMade(offer)

    def decline(self, player: str, number: int) -> DealWithdrawn:
        """``player`` declines deal ``number`` (shown, or still waiting for its amounts)."""
        standing = self.offer or self.proposal
        if standing is None or standing.number != number:
            raise Refusal(self._no_offer(number), code=ErrorCode.NO_DEAL_OFFER)
        return self._withdraw("declined", player)

    def expire(self, at: float) -> list[DealWithdrawn]:
        """The offer withdrawn if its time is over."""
        if self.offer is None or at < self.offer.expires_at:
            return []
        return [self._withdraw("timeout")]

    def withdraw(self, reason: str) -> list[DealWithdrawn]:
        """The deal in hand withdrawn, if any (``disqualified``: one of its players is)."""
        return [self._withdraw(reason)] if self.standing else []

    def drop(self) -> list[DealWithdrawn]:
        """A proposal left with no tournament to deal (its hand ended it)."""
        return [self._withdraw("over")] if self.standing else []

    # ------------------------------------------------------------------ reading

    def _shown(self, number: int, at: float) -> DealOffer:
        offer = self.offer
        if offer is None or offer.number != number:
            if self.proposal is not None and self.proposal.number == number:
                raise Refusal(
                    f"deal {number}'s amounts are shown once the hand in play ends",
                    code=ErrorCode.NO_DEAL_OFFER,
                )
            raise Refusal(self._no_offer(number), code=ErrorCode.NO_DEAL_OFFER)
        if at >= offer.expires_at:
            raise Refusal(f"deal {number}'s time is over", code=ErrorCode.NO_DEAL_OFFER)
        return offer

    def _no_offer(self, number: int) -> str:
        standing = self.offer or self.proposal
        if standing is None:
            return f"no deal is offered (not deal {number})"
        return f"deal {number} is not the one offered (deal {standing.number} is)"

    def _withdraw(self, reason: str, player: str | None = None) -> DealWithdrawn:
        standing = self.offer or self.proposal
        assert standing is not None
        self.offer, self.proposal, self.accepted = None, None, set()
        return DealWithdrawn(standing.number, reason, player)
