"""Opaque bearer tokens: random, stored only as SHA-256, expiring, revocable.

SHA-256 rather than argon2: a token carries 256 random bits, so no one can guess it from
its hash, and checking it on every request must be cheap.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.db.models import Account, Suspension, Token
from server.db.types import utcnow


class TokenRefused(Refusal):
    """401, with the header that tells a client to authenticate with a bearer token."""

    code = ErrorCode.BAD_TOKEN


class AccountSuspended(TokenRefused):
    """The account is suspended: its tokens and its login are refused until unsuspended."""

    code = ErrorCode.ACCOUNT_SUSPENDED


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def issue(
    session: AsyncSession, *, account_id: int, ttl_seconds: int, now: datetime | None = None
) -> tuple[str, Token]:
    """A new token for the account: the secret (shown once) and its stored row."""
    now = now or utcnow()
    secret = secrets.token_urlsafe(32)
    row = Token(
        account_id=account_id,
        token_hash=digest(secret),
        created_at=now,
        expires_at=now + timedelta(seconds=ttl_seconds),
    )
    session.add(row)
    await session.flush()
    return secret, row


async def resolve(
    session: AsyncSession, *, token: str, now: datetime | None = None
) -> tuple[Token, Account]:
    """The live token and its account, or :class:`TokenRefused` saying why not: one indexed
    read (the token, its account and any suspension), on every request and websocket
    sign-in, so a logout or a suspension holds at once on every node."""
    found = (
        await session.execute(
            select(Token, Account, Suspension.suspended_at)
            .join(Account, Token.account_id == Account.id)
            .outerjoin(Suspension, Suspension.account_id == Account.id)
            .where(Token.token_hash == digest(token))
        )
    ).first()
    if found is None:
        raise TokenRefused("unknown token", code=ErrorCode.BAD_TOKEN)
    row, account, suspended_at = found
    if suspended_at is not None:
        raise AccountSuspended("this account is suspended")
    if row.revoked_at is not None:
        raise TokenRefused("this token was logged out", code=ErrorCode.TOKEN_REVOKED)
    if row.expires_at <= (now or utcnow()):
        raise TokenRefused("this token has expired: log in again", code=ErrorCode.TOKEN_EXPIRED)
    return row, account


async def revoke(session: AsyncSession, *, token: Token, now: datetime | None = None) -> None:
    if token.revoked_at is None:
        token.revoked_at = now or utcnow()
        await session.flush()


async def revoke_all(session: AsyncSession, *, account_id: int, now: datetime | None = None) -> int:
    """Revoke every live token of the account (logout everywhere, a suspension): one
    statement; how many it revoked."""
    done = await session.execute(
        update(Token)
        .where(Token.account_id == account_id, Token.revoked_at.is_(None))
        .values(revoked_at=now or utcnow())
    )
    await session.flush()
    return int(done.rowcount)  # type: ignore[attr-defined]
