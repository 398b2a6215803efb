"""Dependencies of the routes, as ``Annotated`` aliases: ``SessionDep``, ``CurrentUser``..."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from server import tokens
from server.db.models import Account, Role, Token
from server.errors import Refusal
from server.lobby import Cardroom
from server.passwords import Passwords
from server.settings import Settings


class NotOperator(Refusal):
    status_code = 403
    code = "not_operator"


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_passwords(request: Request) -> Passwords:
    passwords: Passwords = request.app.state.passwords
    return passwords


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """One session per request; whatever the route did not commit is rolled back."""
    async with request.app.state.sessionmaker() as session:
        yield session


def get_cardroom(request: Request) -> Cardroom:
    cardroom: Cardroom = request.app.state.cardroom
    return cardroom


SettingsDep = Annotated[Settings, Depends(get_settings)]
CardroomDep = Annotated[Cardroom, Depends(get_cardroom)]
PasswordsDep = Annotated[Passwords, Depends(get_passwords)]
SessionDep = Annotated[AsyncSession, Depends(get_session)]

# auto_error=False: a missing token gets our error shape, not FastAPI's.
_bearer = HTTPBearer(auto_error=False, description="the access_token of POST /auth/login")


async def get_current_token(
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> tuple[Token, Account]:
    if credentials is None:
        raise tokens.TokenRefused(
            "log in and send 'Authorization: Bearer <token>'", code="not_authenticated"
        )
    return await tokens.resolve(session, token=credentials.credentials)


CurrentToken = Annotated[tuple[Token, Account], Depends(get_current_token)]


def get_current_user(current: CurrentToken) -> Account:
    return current[1]


CurrentUser = Annotated[Account, Depends(get_current_user)]


def get_operator(user: CurrentUser) -> Account:
    if user.role != Role.OPERATOR:
        raise NotOperator("this needs an operator account")
    return user


OperatorUser = Annotated[Account, Depends(get_operator)]
