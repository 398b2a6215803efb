"""Demo tables where house bots play (``stud-server --demo``): a newcomer sees a live game.

The house bots are ordinary bot accounts playing the ``stud_bots`` strategies through the
public client, REST and websocket protocol, exactly as any outside program would (``rules``:
each variant's own starting hands, then its equity, never more than four bets a street, so
two of them heads-up play a hand rather than raise each other to the felt): the
server only opens the tables and sets the bots' passwords (a fresh random one each start,
so no password is kept anywhere). Each demo table keeps seats free for people. Their names
(``house-...``) are reserved: no one else may register one (server/accounts/account_rules.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets
from dataclasses import dataclass

import httpx
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.accounts import registry
from server.accounts.account_rules import HOUSE_BOT_PREFIX
from server.accounts.passwords import Passwords
from server.cardroom.supervisor import Cardroom
from server.db.models import Role
from server.store import tables
from stud_bots.strategies import Bot, make_bot
from stud_client import ConnectionLost, EventStream, ServerError, StudClient, Table

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


@dataclass(frozen=True, slots=True)
class HouseBot:
    name: str
    password: str
    table_id: int
    strategy: str


async def open_demo_tables(
    sessionmaker: async_sessionmaker[AsyncSession], cardroom: Cardroom, passwords: Passwords
) -> list[HouseBot]:
    """Open the demo tables that are missing and ready their bots' registry."""
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
    """Keep every house bot playing until cancelled; a bot that fails starts over.

    Each pauses ``think_seconds`` on average before acting, as a person would."""
    await _wait_until_serving(base_url)
    rng = random.Random()
    think = (think_seconds / 2, think_seconds * 1.5)
    await asyncio.gather(
        *(_keep_playing(base_url, bot, think, random.Random(rng.random())) for bot in bots)
    )


async def _wait_until_serving(base_url: str) -> None:
    async with httpx.AsyncClient(base_url=base_url) as http:
        while True:
            with contextlib.suppress(httpx.HTTPError):
                if (await http.get("/readyz")).status_code == 200:
                    return
            await asyncio.sleep(0.2)


async def _keep_playing(
    base_url: str, bot: HouseBot, think: tuple[float, float], rng: random.Random
) -> None:
    while True:
        try:
            await _play(base_url, bot, think, rng)
        except asyncio.CancelledError:
            raise
        except (ServerError, ConnectionLost, httpx.HTTPError, TimeoutError) as error:
            log.info("house bot %s starts over after %r", bot.name, error)
        except Exception:  # noqa: BLE001 - a house bot must never take the server down
            log.exception("house bot %s failed; it starts over", bot.name)
        await asyncio.sleep(RETRY_SECONDS)


async def _play(
    base_url: str, bot: HouseBot, think: tuple[float, float], rng: random.Random
) -> None:
    """Sit at the bot's table and play each turn; top up and sit in when sat out."""
    strategy = make_bot(bot.strategy, random.Random(rng.random()))
    async with StudClient(base_url) as client:
        await client.login(bot.name, bot.password)
        info = next(t for t in await client.tables() if t.id == bot.table_id)
        buy_in = max(info.min_buy_in, min(info.max_buy_in, 50 * info.stakes.big_bet))
        await client.connect()
        table = await client.watch(bot.table_id)
        me = table.view.me
        if me is None:
            await table.sit(buy_in)
        elif me.sitting_out:  # back after a restart: the table kept the seat, sat out
            await _sit_back_in(table, buy_in)
        stream = table.events()
        async with contextlib.aclosing(stream):
            await _follow(table, stream, strategy, buy_in, think, rng)


async def _follow(
    table: Table,
    stream: EventStream,
    strategy: Bot,
    buy_in: int,
    think: tuple[float, float],
    rng: random.Random,
) -> None:
    acted: int | None = None
    async for event in stream:
        view = table.view
        me = view.me
        if me is None:
            return  # removed from the table: start over
        if me.sitting_out and event.kind in ("sat_out", "snapshot", "hand_ended"):
            await _sit_back_in(table, buy_in)
            continue
        if view.my_turn and view.turn_seq != acted and view.legal is not None:
            acted = view.turn_seq
            action = strategy.decide(view, view.legal)
            await asyncio.sleep(rng.uniform(*think))
            if table.view.turn_seq == acted:
                with contextlib.suppress(ServerError):
                    await table.act(action)


async def _sit_back_in(table: Table, buy_in: int) -> None:
    """Top the stack up to the buy-in if it cannot play a hand, then sit in."""
    view = table.view
    me = view.me
    assert me is not None
    chips = me.stack + me.pending_chips
    if chips < view.stakes.needed_to_play:
        await table.add_chips(min(buy_in, view.max_buy_in) - chips)
    await table.sit_in()
