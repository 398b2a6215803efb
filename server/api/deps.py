"""Dependencies of the routes, as ``Annotated`` aliases: ``SessionDep``, ``CurrentUser``...

Who may use the back office: ``StaffUser`` (operator or support: may read) and
``OperatorUser`` (operator: may change); ``staff_only`` guards the whole ``/admin`` router.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from fastapi import Depends, Request, params
from fastapi.dependencies.utils import get_flat_params
from fastapi.routing import APIRoute
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.accounts import tokens
from server.accounts.passwords import Passwords
from server.cardroom.supervisor import Cardroom
from server.db.models import STAFF_ROLES, Account, Role, Token
from server.edge.rate_limits import Gateway
from server.edge.sessions import SessionRegistry
from server.settings import Settings
from server.tournaments.registry import EntryTurns
from server.tournaments.standing import Standings


class NotOperator(Refusal):
    code = ErrorCode.NOT_OPERATOR


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_passwords(request: Request) -> Passwords:
    passwords: Passwords = request.app.state.passwords
    return passwords


def get_gateway(request: Request) -> Gateway:
    gateway: Gateway = request.app.state.gateway
    return gateway


def client_address(request: Request) -> str:
    """The client's address (behind a proxy: as uvicorn's ``--forwarded-allow-ips`` reads
    it from ``X-Forwarded-For``)."""
    return request.client.host if request.client is not None else "unknown"


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """One session per request; whatever the route did not commit is rolled back."""
    async with request.app.state.sessionmaker() as session:
        yield session


def get_cardroom(request: Request) -> Cardroom:
    cardroom: Cardroom = request.app.state.cardroom
    return cardroom


def get_entry_turns(request: Request) -> EntryTurns:
    turns: EntryTurns = request.app.state.entry_turns
    return turns


def get_session_registry(request: Request) -> SessionRegistry:
    registry: SessionRegistry = request.app.state.sessions
    return registry


SettingsDep = Annotated[Settings, Depends(get_settings)]
SessionRegistryDep = Annotated[SessionRegistry, Depends(get_session_registry)]
CardroomDep = Annotated[Cardroom, Depends(get_cardroom)]
EntryTurnsDep = Annotated[EntryTurns, Depends(get_entry_turns)]
PasswordsDep = Annotated[Passwords, Depends(get_passwords)]
GatewayDep = Annotated[Gateway, Depends(get_gateway)]
ClientAddress = Annotated[str, Depends(client_address)]
SessionDep = Annotated[AsyncSession, Depends(get_session)]

# auto_error=False: a missing token gets our error shape, not FastAPI's.
_bearer = HTTPBearer(auto_error=False, description="the access_token of POST /auth/login")


async def get_current_token(
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> tuple[Token, Account]:
    if credentials is None:
        raise tokens.TokenRefused(
            "log in and send 'Authorization: Bearer <token>'", code=ErrorCode.NOT_AUTHENTICATED
        )
    return await tokens.resolve(session, token=credentials.credentials)


CurrentToken = Annotated[tuple[Token, Account], Depends(get_current_token)]


def get_current_user(current: CurrentToken) -> Account:
    return current[1]


CurrentUser = Annotated[Account, Depends(get_current_user)]


async def get_optional_user(
    session: SessionDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Account | None:
    """The signed-in caller of a public route that says more to them (their own entry), or
    None for an anonymous one. A token sent is checked all the same: a bad one is refused,
    never taken for no token."""
    if credentials is None:
        return None
    return (await tokens.resolve(session, token=credentials.credentials))[1]


OptionalUser = Annotated[Account | None, Depends(get_optional_user)]


def get_standings(request: Request) -> Standings:
    standings: Standings = request.app.state.standings
    return standings


StandingsDep = Annotated[Standings, Depends(get_standings)]


READING_METHODS = frozenset({"GET", "HEAD"})


def get_staff(user: CurrentUser) -> Account:
    """Staff that may read: an operator or a support account."""
    if user.role not in STAFF_ROLES:
        raise NotOperator("this needs an operator or support account")
    return user


StaffUser = Annotated[Account, Depends(get_staff)]


def get_operator(user: CurrentUser) -> Account:
    """Staff that may change things: an operator."""
    if user.role == Role.SUPPORT:
        raise NotOperator("a support account may read, not change: this needs an operator account")
    if user.role != Role.OPERATOR:
        raise NotOperator("this needs an operator account")
    return user


OperatorUser = Annotated[Account, Depends(get_operator)]


def known_query_only(request: Request) -> None:
    """Refuse a query parameter the route does not take (``?table_id=2`` where it reads
    ``table``): ignored, it would answer as if no filter had been asked, every hand."""
    route = request.scope.get("route")
    known = _query_names(route) if isinstance(route, APIRoute) else None
    if known is None:
        return
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        listed = ", ".join(sorted(known)) or "none"
        raise Refusal(
            f"no query parameter {', '.join(unknown)} here (it takes: {listed})",
            code=ErrorCode.UNKNOWN_PARAMETER,
        )


def _query_names(route: APIRoute) -> frozenset[str]:
    fields = get_flat_params(route.dependant)
    return frozenset(f.alias for f in fields if isinstance(f.field_info, params.Query))


def staff_only(request: Request, user: StaffUser) -> None:
    """The gate of every ``/admin`` route, whatever its own dependency says: no one but
    staff passes, and support passes to read only (``GET``); anything else needs an
    operator."""
    if request.method not in READING_METHODS:
        get_operator(user)
