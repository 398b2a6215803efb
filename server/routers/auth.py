"""Accounts and sessions: register, log in, log out, who am I."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from server import accounts, tokens
from server.db.models import Role
from server.deps import CurrentToken, CurrentUser, PasswordsDep, SessionDep, SettingsDep
from server.schemas import AccountCreate, AccountPublic, LoginCreate, TokenPublic

router = APIRouter(tags=["auth"])


@router.post("/auth/register", status_code=status.HTTP_201_CREATED)
async def register(
    body: AccountCreate, session: SessionDep, passwords: PasswordsDep, settings: SettingsDep
) -> AccountPublic:
    """A player (or bot) account, granted the starting bankroll of play money."""
    account = await accounts.register(
        session,
        passwords=passwords,
        username=body.username,
        password=body.password,
        role=Role.BOT if body.bot else Role.PLAYER,
        bankroll=settings.starting_bankroll,
    )
    await session.commit()
    return AccountPublic.model_validate(account)


@router.post("/auth/login")
async def login(
    body: LoginCreate, session: SessionDep, passwords: PasswordsDep, settings: SettingsDep
) -> TokenPublic:
    """A bearer token for ``Authorization: Bearer <token>``, valid ``token_ttl_seconds``."""
    account = await accounts.authenticate(
        session, passwords=passwords, username=body.username, password=body.password
    )
    secret, row = await tokens.issue(
        session, account_id=account.id, ttl_seconds=settings.token_ttl_seconds
    )
    await session.commit()
    return TokenPublic(access_token=secret, expires_at=row.expires_at)


@router.post("/auth/logout", status_code=status.HTTP_204_NO_CONTENT)
async def logout(current: CurrentToken, session: SessionDep) -> Response:
    """Revoke the token this request carries; it is refused from now on."""
    await tokens.revoke(session, token=current[0])
    await session.commit()
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/me")
async def me(user: CurrentUser) -> AccountPublic:
    return AccountPublic.model_validate(user)
