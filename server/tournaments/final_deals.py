"""Deals at the final table, for the director and for the API (``engine.tournament.offers``
decides; this module journals, pays and reads).

* **Requests.** A player's proposal, acceptance and decline are requests
  (``server.tournaments.requests``), each a fact of the journal once its director takes it
  (:data:`REQUEST_FACTS`), replayed through the run (:func:`replay`).
* **Records.** What a fact decided of a deal (an offer shown with its amounts, a deal made,
  an offer withdrawn) is journaled right after it, in its transaction (:func:`records`): the
  journal shows the deal as it was shown and made, readable without replaying the
  tournament (:func:`view`). A director replaying the journal makes each record again from
  the fact before it and checks it against the one written (``Director.load``).
* **Money.** A deal made pays each player's amount from the prize pool at once, in the
  fact's transaction (:func:`pay`); the entry's ``prize`` counts it, and the place's prize
  (the amount played for, the winner's) is added when the player is placed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from engine.tournament import journal
from engine.tournament.offers import DealMade, DealOffered, DealWithdrawn
from engine.tournament.run import Order
from server.accounts import ledger
from server.db.models import Account, EntryStatus, TournamentEntry, TournamentFact
from server.tournaments import registry

# What each player's request becomes in the journal.
REQUEST_FACTS = {
    "deal": "deal_proposed",
    "deal_accept": "deal_accepted",
    "deal_decline": "deal_declined",
}
# What a fact decided of a deal, journaled after it.
_KINDS = (*REQUEST_FACTS.values(), *journal.RECORD_KINDS)


def records(orders: Sequence[Order]) -> list[tuple[str, dict[str, Any]]]:
    """The records of a fact's deal orders, in their order: (kind, data)."""
    found: list[tuple[str, dict[str, Any]]] = []
    for order in orders:
        if isinstance(order, DealOffered):
            found.append(("deal_offered", order.offer.to_dict()))
        elif isinstance(order, DealMade):
            found.append(("deal_made", order.offer.to_dict()))
        elif isinstance(order, DealWithdrawn):
            found.append(("deal_withdrawn", order.to_dict()))
    return found


async def pay(session: AsyncSession, tournament_id: int, made: DealMade) -> None:
    """Each player's amount, from the prize pool to their wallet, now."""
    offer = made.offer
    for share in offer.shares:
        entry = await session.scalar(
            select(TournamentEntry)
            .join(Account, Account.id == TournamentEntry.account_id)
            .where(
                TournamentEntry.tournament_id == tournament_id,
                TournamentEntry.status == EntryStatus.PLAYING.value,
                Account.username == share.player,
            )
        )
        if entry is None:
            raise LookupError(f"{share.player} holds no entry playing in {tournament_id}")
        entry.prize = (entry.prize or 0) + share.amount
        if share.amount:
            await ledger.pay_prize(
                session,
                account_id=entry.account_id,
                tournament_id=tournament_id,
                amount=share.amount,
                entry=f"{registry.entry_reference(entry)}:deal:{offer.number}",
            )
    await session.flush()


async def view(session: AsyncSession, tournament_id: int) -> dict[str, Any] | None:
    """The deal as the players see it: the one proposed or offered now, else the last deal
    made, else None. From the journal's deal facts alone."""
    rows = (
        await session.execute(
            select(TournamentFact.kind, TournamentFact.data)
            .where(TournamentFact.tournament_id == tournament_id, TournamentFact.kind.in_(_KINDS))
            .order_by(TournamentFact.seq)
        )
    ).all()
    proposed = 0
    standing: dict[str, Any] | None = None
    made: dict[str, Any] | None = None
    for kind, data in rows:
        if kind == "deal_proposed":
            proposed += 1
            standing = {
                "number": proposed,
                "status": "proposed",
                "method": data["method"],
                "played_for": data["played_for"],
                "proposer": data["player"],
                "prizes": [],
                "shares": [],
                "expires_at": None,
            }
        elif kind == "deal_offered":
            standing = _shown(data, "offered", accepted=set())
        elif kind == "deal_accepted" and standing is not None and standing["status"] == "offered":
            for share in standing["shares"]:
                share["accepted"] = share["accepted"] or share["player"] == data["player"]
        elif kind == "deal_made":
            made = _shown(data, "made", accepted={s["player"] for s in data["shares"]})
            standing = None
        elif kind == "deal_withdrawn":
            standing = None
    return standing or made


def _shown(data: dict[str, Any], status: str, *, accepted: set[str]) -> dict[str, Any]:
    return {
        "number": data["number"],
        "status": status,
        "method": data["method"],
        "played_for": data["played_for"],
        "proposer": data["proposer"],
        "prizes": list(data["prizes"]),
        "shares": [{**share, "accepted": share["player"] in accepted} for share in data["shares"]],
        "expires_at": datetime.fromtimestamp(data["expires_at"], UTC)
        if status == "offered"
        else None,
    }
