"""Accounts and sessions: register, log in, log out, who am I."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Response, status

from server.accounts import registry, tokens
from server.accounts.registry import BadCredentials
from server.api.deps import (
    ClientAddress,
    CurrentToken,
    CurrentUser,
    GatewayDep,
    PasswordsDep,
    SessionDep,
    SessionRegistryDep,
    SettingsDep,
)
from server.api.schemas import (
    AccountCreate,
    AccountPublic,
    LoggedOutPublic,
    LoginCreate,
    TokenPublic,
)
from server.db.models import Role
from server.edge.overload import SHED_RESPONSE, shed_when_busy

router = APIRouter(tags=["auth"])


@router.post(
    "/auth/register",
    status_code=status.HTTP_201_CREATED,
    dependencies=[Depends(shed_when_busy("register"))],
    responses=SHED_RESPONSE,
)
async def register(
    body: AccountCreate,
    session: SessionDep,
    passwords: PasswordsDep,
    settings: SettingsDep,
    gateway: GatewayDep,
    address: ClientAddress,
) -> AccountPublic:
    """A player (or bot) account, granted the starting bankroll of play money (the first few
    accounts of an address a day: ``starting_grants_per_address``)."""
    gateway.check_register(address)
    account = await registry.register(
        session,
        passwords=passwords,
        username=body.username,
        password=body.password,
        role=Role.BOT if body.bot else Role.PLAYER,
        bankroll=settings.starting_bankroll if gateway.grant_starting_bankroll(address) else 0,
    )
    await session.commit()
    return AccountPublic.model_validate(account)


@router.post(
    "/auth/login", dependencies=[Depends(shed_when_busy("login"))], responses=SHED_RESPONSE
)
async def login(
    body: LoginCreate,
    session: SessionDep,
    passwords: PasswordsDep,
    settings: SettingsDep,
    gateway: GatewayDep,
    address: ClientAddress,
) -> TokenPublic:
    """A bearer token for ``Authorization: Bearer <token>``, valid ``token_ttl_seconds``.
    Failures in a row make the account wait; an address has a budget of failures
    (:meth:`server.edge.rate_limits.Gateway.begin_login`)."""
    attempt = gateway.begin_login(address, body.username)
    try:
        account = await registry.authenticate(
            session, passwords=passwords, username=body.username, password=body.password
        )
    except BadCredentials:
        raise  # counted as a failure from the start
    except BaseException:
        gateway.login_void(attempt)  # not judged: busy, the database, a cancel
        raise
    gateway.login_succeeded(attempt)
    secret, row = await tokens.issue(
        session, account_id=account.id, ttl_seconds=settings.token_ttl_seconds
    )
    await session.commit()
    return TokenPublic(access_token=secret, expires_at=row.expires_at)


@router.post("/auth/logout", status_code=status.HTTP_204_NO_CONTENT)
async def logout(
    current: CurrentToken, session: SessionDep, sessions: SessionRegistryDep
) -> Response:
    """Revoke the token this request carries; it is refused from now on, and the websockets
    that signed in with it (on any node) are signed out."""
    await tokens.revoke(session, token=current[0])
    await session.commit()
    sessions.end_token(current[0].id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/auth/logout-everywhere")
async def logout_everywhere(
    current: CurrentToken, session: SessionDep, sessions: SessionRegistryDep
) -> LoggedOutPublic:
    """Revoke every token of the account, this one included; every websocket of the
    account (on any node) is signed out."""
    revoked = await tokens.revoke_all(session, account_id=current[1].id)
    await session.commit()
    sessions.end_account(current[1].id)
    return LoggedOutPublic(revoked=revoked)


@router.get("/me")
async def me(user: CurrentUser) -> AccountPublic:
    return AccountPublic.model_validate(user)
