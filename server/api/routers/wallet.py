"""The player's own chips: balance and latest movements, paged newest first."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from server.accounts import ledger
from server.api.deps import CurrentUser, SessionDep
from server.api.schemas import LedgerLinePublic, WalletPublic
from server.edge.overload import SHED_RESPONSE, shed_when_busy

# Listings can wait: shed while the node is behind (server/edge/overload.py).
router = APIRouter(
    tags=["wallet"], dependencies=[Depends(shed_when_busy("wallet"))], responses=SHED_RESPONSE
)


@router.get("/wallet")
async def wallet(
    user: CurrentUser,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
    before: Annotated[
        int | None, Query(ge=1, le=2**63 - 1, description="an entry id: older movements")
    ] = None,
) -> WalletPublic:
    """The balance and the latest ledger movements (``amount`` > 0 came in, < 0 went out);
    ``next_before`` pages on to older ones."""
    name = ledger.player_wallet(user.id)
    balance = await ledger.balance(session, wallet=name)
    lines = await ledger.statement(session, wallet=name, limit=limit, before=before)
    return WalletPublic(
        balance=balance,
        entries=[LedgerLinePublic.model_validate(line) for line in lines],
        next_before=lines[-1].id if len(lines) == limit else None,
    )
