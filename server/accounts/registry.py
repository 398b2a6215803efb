"""Accounts: registration, login, roles. Keyword-only repository functions; no commits.

Each account has one wallet (``player:<id>``). Players and bots are granted the starting
bankroll when they register, in the same transaction; operators start with nothing.
"""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.accounts import ledger
from server.accounts.passwords import Passwords
from server.db.models import Account, Role, Suspension, WalletKind

USERNAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{2,31}$"


class UsernameTaken(Refusal):
    code = ErrorCode.USERNAME_TAKEN


class BadCredentials(Refusal):
    code = ErrorCode.BAD_CREDENTIALS


class AccountSuspended(Refusal):
    code = ErrorCode.ACCOUNT_SUSPENDED


async def find_by_username(session: AsyncSession, *, username: str) -> Account | None:
    """Usernames match whatever their case, as the unique index compares them."""
    return await session.scalar(
        select(Account).where(func.lower(Account.username) == username.lower())
    )


async def get(session: AsyncSession, *, account_id: int) -> Account | None:
    return await session.get(Account, account_id)


async def create(
    session: AsyncSession, *, username: str, password_hash: str, role: Role
) -> Account:
    """A new account and its empty wallet."""
    if await find_by_username(session, username=username) is not None:
        raise UsernameTaken(f"the username {username!r} is taken")
    account = Account(username=username, password_hash=password_hash, role=role.value)
    session.add(account)
    try:
        await session.flush()
    except IntegrityError:  # registered by someone else since the check above
        raise UsernameTaken(f"the username {username!r} is taken") from None
    await ledger.open_wallet(
        session,
        name=ledger.player_wallet(account.id),
        kind=WalletKind.PLAYER,
        account_id=account.id,
    )
    return account


async def register(
    session: AsyncSession,
    *,
    passwords: Passwords,
    username: str,
    password: str,
    role: Role = Role.PLAYER,
    bankroll: int = 0,
) -> Account:
    """Create an account and grant it ``bankroll`` play money; the caller commits."""
    account = await create(
        session, username=username, password_hash=await passwords.hash(password), role=role
    )
    if bankroll > 0:
        await ledger.grant(
            session, account_id=account.id, amount=bankroll, reference="starting bankroll"
        )
    return account


async def authenticate(
    session: AsyncSession, *, passwords: Passwords, username: str, password: str
) -> Account:
    """The account these credentials open, or :class:`BadCredentials` (never saying which
    part was wrong), or :class:`AccountSuspended`. A hash made at an older cost is
    upgraded; the caller commits."""
    account = await find_by_username(session, username=username)
    if account is None:
        await passwords.waste(password)
        raise BadCredentials("wrong username or password")
    if not await passwords.verify(account.password_hash, password):
        raise BadCredentials("wrong username or password")
    if await session.get(Suspension, account.id) is not None:
        # Said only to whoever knows the password.
        raise AccountSuspended("this account is suspended")
    if passwords.needs_rehash(account.password_hash):
        account.password_hash = await passwords.hash(password)
    return account


async def set_password(session: AsyncSession, *, account: Account, password_hash: str) -> Account:
    account.password_hash = password_hash
    await session.flush()
    return account


async def set_role(session: AsyncSession, *, account: Account, role: Role) -> Account:
    account.role = role.value
    await session.flush()
    return account
