"""What checking a session costs: ``tokens.resolve`` (every HTTP request and websocket
sign-in: the token, its account and any suspension, one indexed read), the websocket's
per-command check (the expiry, in memory; revocations arrive by the bus), and the sweep of
a node's bound tokens (one query per ``session_check_seconds``).

    python -m bench.session_checks sqlite+aiosqlite:////tmp/bench.db
    python -m bench.session_checks postgresql+asyncpg://postgres@127.0.0.1/<a database>
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from datetime import timedelta

from server.accounts import registry, tokens
from server.bus.memory import MemoryBus
from server.db import migrate
from server.db.models import Role
from server.db.session import make_engine, make_sessionmaker
from server.db.types import utcnow
from server.edge.sessions import SessionRegistry, SignIn

RUNS = 2000
BOUND = 1000


class _Quiet:
    def sign_out(self, code: object, message: str) -> None:
        raise AssertionError("nothing should be signed out")


async def main(url: str) -> None:
    engine = make_engine(url)
    await migrate.upgrade(engine)
    sessions = make_sessionmaker(engine)
    async with sessions() as session:
        account = await registry.create(
            session, username=f"bench{time.time_ns() % 10**9}", password_hash="-", role=Role.PLAYER
        )
        secrets = [
            (await tokens.issue(session, account_id=account.id, ttl_seconds=3600))
            for _ in range(BOUND)
        ]
        await session.commit()
    secret = secrets[0][0]
    times = []
    async with sessions() as session:
        for _ in range(RUNS):
            start = time.perf_counter()
            await tokens.resolve(session, token=secret)
            times.append(time.perf_counter() - start)
            await session.rollback()
    times.sort()
    print(
        f"resolve (per request): median {statistics.median(times) * 1e6:.0f} us, "
        f"p99 {times[int(len(times) * 0.99)] * 1e6:.0f} us"
    )
    sign_in = SignIn(1, 1, "ann", utcnow() + timedelta(hours=1))
    start = time.perf_counter()
    for _ in range(100_000):
        sign_in.expired()
    print(f"per websocket command (expiry check): {(time.perf_counter() - start) * 10:.2f} us")
    signed_in = SessionRegistry(MemoryBus(), sessions)
    for n, (_, row) in enumerate(secrets):
        signed_in.bind(_Quiet(), SignIn(row.id, account.id, f"p{n}", row.expires_at))  # type: ignore[arg-type]
    sweeps = []
    for _ in range(20):
        start = time.perf_counter()
        assert await signed_in.sweep() == 0
        sweeps.append(time.perf_counter() - start)
    print(f"sweep of {BOUND} bound tokens: median {statistics.median(sweeps) * 1e3:.1f} ms")
    await signed_in.close()
    await engine.dispose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
