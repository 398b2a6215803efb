"""The demo tables' house bots (``stud-server --demo``), a process of their own.

::

    python -m stud_bots.house < orders

The server opens its demo tables, readies the bots' accounts (a fresh random password each
start) and runs this module beside itself, writing it one line of JSON on standard input::

    {"base_url": "http://127.0.0.1:8000", "think_seconds": 1.2, "log_level": 20,
     "bots": [{"name": "house-razz-1", "password": "...", "table_id": 3,
               "strategy": "rules"}, ...]}

Each bot then plays the ``stud_bots`` strategies through the public client, REST and
websocket protocol, exactly as any outside program would: it signs in, sits at its table (or
takes back the seat a restart kept, sat out), tops its stack up and sits in whenever it is
sat out, and pauses ``think_seconds`` on average (uniform from half to 1.5 times) before
each action, as a person would. A bot that fails starts over after a pause. The process
plays until its standard input ends: the server closes it when it stops, and a server that
dies closes it too, so the bots never outlive their cardroom. Log records go to standard
error, one JSON object a line (``level``, ``logger``, ``message``, ``exception``), for the
server to write in its own format.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
from websockets.exceptions import WebSocketException

from stud_bots.strategies import Bot, make_bot
from stud_client import EventStream, ServerError, StudClient, StudError, Table

__all__ = ["HouseBot", "JsonLines", "main", "run_house_bots"]

# Named, not __name__: the module runs as __main__ (python -m stud_bots.house).
log = logging.getLogger("stud_bots.house")

RETRY_SECONDS = 3.0


@dataclass(frozen=True, slots=True)
class HouseBot:
    name: str
    password: str
    table_id: int
    strategy: str

    @classmethod
    def from_order(cls, order: Mapping[str, Any]) -> HouseBot:
        return cls(
            name=str(order["name"]),
            password=str(order["password"]),
            table_id=int(order["table_id"]),
            strategy=str(order["strategy"]),
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
        except (StudError, httpx.HTTPError, WebSocketException, OSError, TimeoutError) as error:
            # The server refused, restarts, stops or is not there: nothing to report.
            log.info("house bot %s starts over after %r", bot.name, error)
        except Exception:  # noqa: BLE001 - one bot's fault must not stop the others
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


class JsonLines(logging.Handler):
    """Each record as one JSON object a line: ``level``, ``logger``, ``message``, and
    ``exception`` (the traceback) when there is one."""

    def __init__(self, stream: Any = None) -> None:
        super().__init__()
        self.stream = stream if stream is not None else sys.stderr

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line: dict[str, str] = {
                "level": record.levelname,
                "logger": record.name,
                "message": record.getMessage(),
            }
            if record.exc_info:
                line["exception"] = "".join(traceback.format_exception(*record.exc_info))
            self.stream.write(json.dumps(line) + "\n")
            self.stream.flush()
        except Exception:  # noqa: BLE001 - logging's own contract: report, never raise
            self.handleError(record)


async def _play_until_told(orders: asyncio.StreamReader) -> None:
    """Read the orders, then play until standard input ends."""
    order = json.loads(await orders.readline())
    logging.getLogger().setLevel(int(order.get("log_level", logging.INFO)))
    bots = [HouseBot.from_order(bot) for bot in order["bots"]]
    play = asyncio.create_task(
        run_house_bots(str(order["base_url"]), bots, float(order["think_seconds"]))
    )
    ended = asyncio.create_task(orders.read())  # to the end of standard input
    try:
        await asyncio.wait({play, ended}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (play, ended):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _main() -> None:
    orders = asyncio.StreamReader()
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(orders), sys.stdin)
    await _play_until_told(orders)


def main() -> int:
    """0 once standard input ends; 1 for orders that cannot be read."""
    logging.basicConfig(level=logging.INFO, handlers=[JsonLines()])
    try:
        asyncio.run(_main())
    except (ValueError, KeyError, TypeError):
        log.exception("house bots: orders that cannot be read")
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
