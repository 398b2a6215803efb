"""Bot accounts made by an operator: ``POST /admin/bots`` (docs/operators.md, "Bot accounts").

A bot runner (``stud-bots``) gets its accounts here with the operator's token, not through
``/auth/register``: no registration limit of an address applies, the house funds each bot
with a ledger movement, and the audit log names the operator who made it.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, status

from server.accounts import bot_accounts
from server.api.admin_schemas import BotCreate, BotPublic
from server.api.deps import OperatorUser, SessionDep, SettingsDep, known_query_only, staff_only
from server.api.schemas import AccountPublic

router = APIRouter(
    prefix="/admin", tags=["admin"], dependencies=[Depends(staff_only), Depends(known_query_only)]
)


@router.post("/bots", status_code=status.HTTP_201_CREATED)
async def make_bot(
    body: BotCreate, operator: OperatorUser, session: SessionDep, settings: SettingsDep
) -> BotPublic:
    """A new bot account with ``chips`` from the house and a token to play it (it has no
    password); ``username_taken`` if the name is in use. Audited (``bot.create``)."""
    made = await bot_accounts.make(
        session,
        operator=operator,
        username=body.username,
        chips=body.chips,
        reason=body.reason,
        token_ttl_seconds=settings.token_ttl_seconds,
    )
    await session.commit()
    return BotPublic(
        account=AccountPublic.model_validate(made.account),
        chips=made.chips,
        ledger_entry=made.ledger_entry,
        access_token=made.access_token,
        expires_at=made.expires_at,
        audit_id=made.audit.id,
    )
