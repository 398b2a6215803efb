"""Bot accounts an operator makes (``POST /admin/bots``): for load tests and bot runners
such as ``stud-bots``, outside the registration limits a person's address has.

A bot account made this way has no password (its stored hash is one no password matches, so
nobody can log in to it): it plays through the access token the operator receives for it,
and ends with that token (its expiry, or a logout). Its chips come from the house bankroll,
one ``grant`` movement whose reference names the operator, and the account, its funding and
its token are recorded in one audit entry (``bot.create``), all in the caller's transaction.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from server.accounts import audit_log, ledger, registry, tokens
from server.db.models import Account, AuditEntry, Role

#: The stored "hash" of a bot made by an operator: not an Argon2 hash, so no password
#: verifies against it (``Passwords.verify`` answers False), and a login says only
#: ``bad_credentials``, as for any wrong password.
NO_PASSWORD = "!operator-made bot: no password"


@dataclass(frozen=True, slots=True)
class MadeBot:
    """A bot account made, its funding and its token (the secret, shown once)."""

    account: Account
    chips: int
    ledger_entry: int | None
    access_token: str
    expires_at: datetime
    audit: AuditEntry


async def make(
    session: AsyncSession,
    *,
    operator: Account,
    username: str,
    chips: int,
    reason: str,
    token_ttl_seconds: int,
) -> MadeBot:
    """A new bot account granted ``chips`` by the house, with a token to play it; raises
    ``UsernameTaken`` and changes nothing when the name is in use (any case)."""
    account = await registry.create(
        session, username=username, password_hash=NO_PASSWORD, role=Role.BOT
    )
    entry = None
    if chips > 0:
        entry = await ledger.grant(
            session,
            account_id=account.id,
            amount=chips,
            reference=f"bot funded by {operator.username}"[:128],
        )
    secret, token = await tokens.issue(
        session, account_id=account.id, ttl_seconds=token_ttl_seconds
    )
    audit = await audit_log.record(
        session,
        actor=operator,
        action=audit_log.AuditAction.BOT_CREATE,
        target_kind="player",
        target_id=account.username,
        before=None,
        after={
            "role": Role.BOT.value,
            "balance": chips,
            "ledger_entry": entry.id if entry is not None else None,
            "token_expires_at": token.expires_at.isoformat(),
        },
        reason=reason,
    )
    return MadeBot(
        account=account,
        chips=chips,
        ledger_entry=entry.id if entry is not None else None,
        access_token=secret,
        expires_at=token.expires_at,
        audit=audit,
    )
