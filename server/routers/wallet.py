"""The player's own chips: balance and latest movements."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from server import ledger
from server.deps import CurrentUser, SessionDep
from server.schemas import LedgerLinePublic, WalletPublic

router = APIRouter(tags=["wallet"])


@router.get("/wallet")
async def wallet(
    user: CurrentUser,
    session: SessionDep,
    limit: Annotated[int, Query(ge=1, le=200)] = 20,
) -> WalletPublic:
    name = ledger.player_wallet(user.id)
    balance = await ledger.balance(session, wallet=name)
    lines = await ledger.statement(session, wallet=name, limit=limit)
    return WalletPublic(
        balance=balance, entries=[LedgerLinePublic.model_validate(line) for line in lines]
    )
