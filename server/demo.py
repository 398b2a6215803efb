"""Demo tables where house bots play (``stud-server --demo``): a newcomer sees a live game.

The house bots are ordinary bot accounts playing the ``stud_bots`` strategies through the
public client, REST and websocket protocol, exactly as any outside program would (``rules``:
each variant's own starting hands, then its equity, never more than four bets a street, so
two of them heads-up play a hand rather than raise each other to the felt). The server only
opens the tables, sets the bots' passwords (a fresh random one each start, so no password is
kept anywhere) and runs the bots' own program beside itself, ``python -m stud_bots.house``
(clients/python/stud_bots/house.py), a process of the client's distribution that this
package never imports: the bots' orders (the server's URL, each bot's name, password, table
and strategy) go to its standard input, which the server closes when it stops (a server
that dies closes it too); its log lines come back on a pipe and are written to the server's
log in the server's format. A process that ends is started again. Each demo table keeps seats
free for people. Their names (``house-...``) are reserved: no one else may register one
(server/accounts/account_rules.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import secrets
import subprocess
import sys
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.accounts import registry
from server.accounts.account_rules import HOUSE_BOT_PREFIX
from server.accounts.passwords import Passwords
from server.cardroom.supervisor import Cardroom
from server.db.models import Role
from server.logs import named
from server.store import tables

log = logging.getLogger(__name__)

#: (variant, table name): one demo table of each main variant.
DEMO_TABLES = (
    ("seven_card_stud", "Demo: seven-card stud"),
    ("seven_card_stud_hi_lo", "Demo: stud hi-lo"),
    ("razz", "Demo: razz"),
)
BOTS_PER_TABLE = 3
STRATEGIES = ("rules", "rules", "station")
RETRY_SECONDS = 3.0
#: The house bots' program: the client distribution's, run by this interpreter.
HOUSE_BOTS_COMMAND = (sys.executable, "-m", "stud_bots.house")
#: How long the house bots have to go once told to, before they are killed.
STOP_SECONDS = 5.0
#: The longest line of the house bots' output read as one (a long traceback).
LINE_LIMIT = 1 << 20


@dataclass(frozen=True, slots=True)
class HouseBot:
    name: str
    password: str
    table_id: int
    strategy: str


async def open_demo_tables(
    sessionmaker: async_sessionmaker[AsyncSession], cardroom: Cardroom, passwords: Passwords
) -> list[HouseBot]:
    """Open the demo tables that are missing and ready their bots' accounts."""
    bots: list[HouseBot] = []
    async with sessionmaker() as session:
        existing = {t.name: t for t in await tables.list_tables(session)}
        for variant, name in DEMO_TABLES:
            record = existing.get(name)
            if record is None:
                record = await tables.create(session, name=name, config={"variant": variant})
                await session.commit()
                await cardroom.open_table(record)
            for n in range(BOTS_PER_TABLE):
                bot = HouseBot(
                    name=f"{HOUSE_BOT_PREFIX}{variant.replace('_', '-')}-{n + 1}",
                    password=secrets.token_urlsafe(18),
                    table_id=record.id,
                    strategy=STRATEGIES[n % len(STRATEGIES)],
                )
                await _ready_account(session, passwords, bot)
                bots.append(bot)
        await session.commit()
    return bots


async def _ready_account(session: AsyncSession, passwords: Passwords, bot: HouseBot) -> None:
    account = await registry.find_by_username(session, username=bot.name)
    if account is None:
        await registry.register(
            session,
            passwords=passwords,
            username=bot.name,
            password=bot.password,
            role=Role.BOT,
            bankroll=100_000,
        )
    else:
        await registry.set_password(
            session, account=account, password_hash=await passwords.hash(bot.password)
        )


async def run_house_bots(base_url: str, bots: list[HouseBot], think_seconds: float) -> None:
    """Keep the house bots' process playing until cancelled; one that ends is started again
    after a pause. Each bot pauses ``think_seconds`` on average before acting, as a person
    would."""
    orders = {
        "base_url": base_url,
        "think_seconds": think_seconds,
        # The bots write the lines this server's log would show.
        "log_level": logging.getLogger().getEffectiveLevel(),
        "bots": [dataclasses.asdict(bot) for bot in bots],
    }
    line = json.dumps(orders).encode() + b"\n"
    while True:
        try:
            status = await _run_house_bots(line)
            log.error("the house bots' process ended (exit status %s); it starts again", status)
        except OSError as error:
            log.error("the house bots' process cannot start (%s); it is tried again", named(error))
        except Exception:  # noqa: BLE001 - the house bots must never take the server down
            log.exception("the house bots' process failed; it starts again")
        await asyncio.sleep(RETRY_SECONDS)


async def _run_house_bots(orders: bytes) -> int:
    """Run the house bots' process until it ends (its exit status) or this is cancelled
    (then it is told to go, and killed if it does not)."""
    process = await asyncio.create_subprocess_exec(
        *HOUSE_BOTS_COMMAND,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        # A terminal's Ctrl-C is the server's: the bots go when the server tells them.
        start_new_session=True,
        limit=LINE_LIMIT,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        with contextlib.suppress(ConnectionError):  # gone at once: its output says why
            process.stdin.write(orders)
            await process.stdin.drain()
        await _relay(process.stdout)
        return await process.wait()
    finally:
        if process.returncode is None:
            await _stop(process)


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Close the bots' standard input, their signal to go; kill them if they stay."""
    assert process.stdin is not None and process.stdout is not None
    process.stdin.close()
    try:
        async with asyncio.timeout(STOP_SECONDS):
            await _relay(process.stdout)
            await process.wait()
    except TimeoutError:
        process.kill()
        await process.wait()


async def _relay(output: asyncio.StreamReader) -> None:
    """Write the house bots' lines to this server's log, to the end of their output."""
    while True:
        try:
            line = await output.readline()
        except ValueError:  # longer than LINE_LIMIT: dropped, and the reading goes on
            log.warning("house bots: a line longer than %d bytes left out", LINE_LIMIT)
            continue
        if not line:
            return
        log_line(line.decode(errors="replace").rstrip())


def log_line(line: str) -> None:
    """One line of the house bots' output in this server's log: a record they wrote (a JSON
    object: ``level``, ``logger``, ``message``, ``exception``) under its own logger and level;
    any other line (Python's own, a module not found) as a warning of this module's."""
    if not line:
        return
    try:
        record = json.loads(line)
        level = logging.getLevelName(record["level"])
        name, message = str(record["logger"]), str(record["message"])
        exception = record.get("exception")
    except (ValueError, KeyError, TypeError, AttributeError):
        level = None
    if not isinstance(level, int):
        log.warning("house bots: %s", line)
        return
    logger = logging.getLogger(name)
    if logger.isEnabledFor(level):
        entry = logger.makeRecord(name, level, "(house bots)", 0, message, (), None)
        if exception:
            entry.exc_text = str(exception).rstrip()
        logger.handle(entry)
