"""``stud-bots``: fill tables with bots over the public protocol, play, report as JSON.

::

    stud-bots --server http://127.0.0.1:8000 --operator boss \\
              --tables 3 --seats 3 --hands 30 --strategy mixed --variant mixed --think-ms 1-5
    stud-bots --server URL --operator boss --table 3 --table 7 --seats 2 --hands 50
    stud-bots --server http://node-a:8000 --server http://node-b:8000 --operator boss --table 3

Everything runs under an operator's credential (the password from ``STUD_OPERATOR_PASSWORD``
or a prompt; or ``--operator-token``): the runner makes one bot account per seat with it
(``POST /admin/bots``: no password, a token; chips granted by the house with a ledger entry;
audited), opens the tables or joins the given ones, plays until the tables have dealt
``--hands`` hands in all, has every bot leave (its chips go back to its wallet), closes the
tables it opened (``--keep-tables`` keeps them) and hands the bots' chips back to the house.
It prints a progress bar to stderr and then one JSON line: hands played, actions sent,
errors by code, reconnects, resyncs, and the latency from sending an action to seeing its
event (p50, p95, p99, in milliseconds). It exits 0 when hands were played without an error,
1 otherwise (no hand played, any error, or a failure before play: the message on stderr).

``--tournament ID`` (or ``new``) plays a tournament instead: ``stud_bots.tournament``.

Given several nodes of one cardroom (``--server`` again, or a comma list), every bot's client
tries them in turn, as the client library does: a bot outlives the node it played through. A
lost connection costs a bot nothing but the command in flight (counted): its client
reconnects and resyncs, and the bot plays on from the fresh snapshot.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import secrets
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar

from engine.variants import VARIANTS, find_variant
from stud_bots import tournament
from stud_bots.common import (
    add_connection_arguments,
    listed,
    operator_password,
    report_and_exit_code,
    return_chips,
    servers_of,
    sign_in,
    think_range,
)
from stud_bots.seats import Ending, Progress, Run, Seat, make_report
from stud_bots.strategies import STRATEGIES, make_bot
from stud_client import (
    Action,
    ConnectionLost,
    ErrorCode,
    ServerError,
    StudClient,
    StudError,
    Table,
    TableInfo,
    TableView,
)

__all__ = ["Options", "failures", "main", "parse_args", "run"]

T = TypeVar("T")

# "--variant mixed" deals these in turn, one per table.
MIXED_VARIANTS = (
    "seven_card_stud",
    "razz",
    "seven_card_stud_hi_lo",
    "five_card_stud",
    "six_card_stud",
    "eight_card_stud",
    "five_card_stud_hi_lo",
)
SETTLE_SECONDS = 60.0  # after the last hand, how long bots have to leave their tables
CLOSE_SECONDS = 60.0  # how long a table closing after its hand in progress is waited for
BUY_INS_PER_BOT = 10  # the house grants each bot this many buy-ins (default --bankroll)
# Faults a --chaos run causes on purpose: counted, but no failure of the run.
CHAOS_FAULTS = frozenset({"connection_lost", "timeout", "missed_turn"})


@dataclass(slots=True)
class Options:
    server: str
    fallback_servers: tuple[str, ...] = ()  # other nodes of the same cardroom
    tables: int = 1
    seats: int = 2
    hands: int = 100
    strategies: tuple[str, ...] = ("rules",)
    think: tuple[float, float] = (0.0, 0.0)  # seconds
    variants: tuple[str, ...] = ("seven_card_stud",)
    table_ids: tuple[int, ...] = ()
    operator: str | None = None
    operator_password: str | None = None
    operator_token: str | None = None
    table_config: dict[str, Any] = field(default_factory=dict)
    buy_in: int | None = None
    bankroll: int | None = None  # chips the house grants each bot
    keep_tables: bool = False
    prefix: str = "bot"
    seed: int | None = None
    timeout: float | None = None
    chaos: float | None = None  # seconds between deliberate connection drops
    progress: bool = True


def parse_args(argv: Sequence[str] | None = None) -> Options:
    parser = argparse.ArgumentParser(
        prog="stud-bots",
        description="Bots playing a stud server through its public websocket protocol. "
        "Progress goes to stderr; one JSON line of results to stdout.",
    )
    add_connection_arguments(parser)
    parser.add_argument("--tables", type=int, default=1, help="tables to open (default 1)")
    parser.add_argument("--seats", type=int, default=2, help="bots per table (default 2)")
    parser.add_argument(
        "--hands", type=int, default=100, help="hands to play, over all tables (default 100)"
    )
    parser.add_argument(
        "--strategy",
        default="rules",
        help=f"{', '.join(STRATEGIES)}, a comma list, or 'mixed' (seat by seat)",
    )
    parser.add_argument("--think-ms", default="0-0", help="think time per action, LOW-HIGH")
    parser.add_argument(
        "--variant",
        default="seven_card_stud",
        help="a variant, a comma list, or 'mixed' (table by table): " + ", ".join(VARIANTS),
    )
    parser.add_argument(
        "--table",
        type=int,
        action="append",
        default=[],
        metavar="ID",
        help="join this table instead of opening tables (repeatable)",
    )
    parser.add_argument(
        "--table-config", default="{}", help="JSON rule settings added to every table opened"
    )
    parser.add_argument(
        "--buy-in", type=int, help="chips per seat (default: 50 big bets, within the table's range)"
    )
    parser.add_argument(
        "--bankroll",
        type=int,
        help=f"chips the house grants each bot (default: {BUY_INS_PER_BOT} buy-ins)",
    )
    parser.add_argument(
        "--keep-tables",
        action="store_true",
        help="leave the tables it opened open at the end (they are closed by default)",
    )
    parser.add_argument("--prefix", default="bot", help="bot account names start with this")
    parser.add_argument("--seed", type=int, help="seed the bots' decisions")
    parser.add_argument("--timeout", type=float, help="stop after this many seconds anyway")
    parser.add_argument(
        "--chaos",
        type=float,
        metavar="SECONDS",
        help="drop a random bot's connection this often (tests reconnects)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        strategies = listed(args.strategy, tuple(STRATEGIES), tuple(STRATEGIES), "strategy")
        variants = listed(args.variant, tuple(VARIANTS), MIXED_VARIANTS, "variant")
        think = think_range(args.think_ms)
        config = json.loads(args.table_config)
        if not isinstance(config, dict):
            raise argparse.ArgumentTypeError("--table-config must be a JSON object")
    except (argparse.ArgumentTypeError, json.JSONDecodeError) as error:
        parser.error(str(error))
    if args.tables < 1 or args.seats < 2 or args.hands < 1:
        parser.error("--tables >= 1, --seats >= 2 and --hands >= 1")
    if args.bankroll is not None and args.bankroll < 1:
        parser.error("--bankroll >= 1")
    password = operator_password(parser, args)
    servers = servers_of(parser, args)
    return Options(
        server=servers[0],
        fallback_servers=tuple(servers[1:]),
        tables=len(args.table) or args.tables,
        seats=args.seats,
        hands=args.hands,
        strategies=strategies,
        think=think,
        variants=variants,
        table_ids=tuple(args.table),
        operator=args.operator,
        operator_password=password,
        operator_token=args.operator_token,
        table_config=config,
        buy_in=args.buy_in,
        bankroll=args.bankroll,
        keep_tables=args.keep_tables,
        prefix=args.prefix,
        seed=args.seed,
        timeout=args.timeout,
        chaos=args.chaos,
        progress=not args.quiet,
    )


# ---------------------------------------------------------------------- one run


async def _play(seat: Seat, run: Run) -> None:
    """One bot's life at its table: sit, act on its turns, rebuy when broke, leave."""
    table = seat.table
    assert table is not None
    think_low, think_high = run.options.think
    acted: int | None = None
    sat_in_at: int | None = None
    stream = table.events()
    try:
        seated = await _lasting(seat, table.sit(seat.buy_in)) is not None
        async for event in stream:
            if event.kind == "hand_ended" and event.hand is not None:
                run.hand_ended(table.id, event.hand)
            if table.seat is None:
                if seat.leaving:
                    return
                if event.kind == "seat_left" and seated:
                    seat.errors["lost_seat"] += 1  # the server removed the bot
                    return
                if event.kind == "snapshot" and not seated:  # its sit was cut short
                    seated = await _lasting(seat, table.sit(seat.buy_in)) is not None
                continue
            seated = True
            if event.kind == "turn" and event.data.get("seat") != table.seat:
                continue
            if event.kind not in ("turn", "snapshot", "sat_out", "hand_ended", "clock"):
                continue
            view = table.view
            me = view.me
            if me is None:
                continue
            if me.sitting_out and not seat.leaving and sat_in_at != view.seq:
                sat_in_at = view.seq
                await _lasting(seat, _back_in(seat, table, view))
                continue
            if seat.leaving:
                continue  # the table plays the rest of a leaver's hand (docs/protocol.md)
            if view.my_turn and view.turn_seq != acted:
                acted = view.turn_seq
                await _lasting(seat, _take_turn(seat, table, view, think_low, think_high))
    except ServerError:
        pass  # counted by the client, by code
    finally:
        seat.done = True
        await stream.aclose()


async def _lasting(seat: Seat, work: Awaitable[T]) -> T | None:
    """``work``'s result, or None when the connection dropped under it (counted): the client
    reconnects and resyncs by itself, and the bot goes on from the next snapshot."""
    try:
        return await work
    except (ConnectionLost, TimeoutError) as error:
        seat.errors["connection_lost" if isinstance(error, ConnectionLost) else "timeout"] += 1
        return None


async def _take_turn(seat: Seat, table: Table, view: TableView, low: float, high: float) -> None:
    started = time.monotonic()
    assert view.legal is not None
    action: Action = seat.bot.decide(view, view.legal)
    pause = seat.rng.uniform(low, high) - (time.monotonic() - started)
    if pause > 0:
        await asyncio.sleep(pause)
    if table.view.turn_seq != view.turn_seq:
        seat.errors["missed_turn"] += 1  # the clock ran out while thinking
        return
    if seat.leaving:
        return  # asked to leave while thinking: the table folds for it
    with contextlib.suppress(ServerError):  # counted by the client, by code
        await table.act(action)


async def _back_in(seat: Seat, table: Table, view: TableView) -> None:
    """Sat out (broke, or the server restarted): top the stack up if needed, sit in."""
    me = view.me
    assert me is not None
    try:
        chips = me.stack + me.pending_chips
        if chips < view.stakes.needed_to_play:
            await table.add_chips(min(seat.buy_in, view.max_buy_in) - chips)
        await table.sit_in()
    except ServerError as refusal:
        if refusal.code == ErrorCode.INSUFFICIENT_FUNDS:
            seat.leaving = True
            await table.leave()


async def _leave(seat: Seat) -> None:
    if seat.done or seat.table is None:
        return
    seat.leaving = True
    try:
        await seat.table.leave()
    except ServerError as refusal:
        if refusal.code == ErrorCode.NOT_SEATED:
            # Gone already: a leave sent again after a lost connection finds the first one
            # done. What the bot wanted, no error of the run.
            counted = seat.client.stats.errors
            counted[refusal.code] -= 1
            if counted[refusal.code] <= 0:
                del counted[refusal.code]
    except (ConnectionLost, TimeoutError):
        seat.errors["connection_lost"] += 1


async def _open_tables(
    options: Options, admin: StudClient, run_id: str, opened: list[int]
) -> list[TableInfo]:
    """The tables to play at: the ones given, or new ones (their ids added to ``opened`` as
    each opens, so that the run closes them however it ends)."""
    if options.table_ids:
        lobby = {t.id: t for t in await admin.tables()}
        missing = [t for t in options.table_ids if t not in lobby]
        if missing:
            raise StudError(f"no open table {missing}")
        return [lobby[t] for t in options.table_ids]
    for number in range(options.tables):
        variant = options.variants[number % len(options.variants)]
        if options.seats > find_variant(variant).max_players:
            raise StudError(f"{variant} seats at most {find_variant(variant).max_players}")
    for number in range(options.tables):
        variant = options.variants[number % len(options.variants)]
        config = {**options.table_config, "variant": variant}
        opened.append(
            await admin.create_table(
                f"{options.prefix}-{run_id}-{number + 1}", config, seats=options.seats
            )
        )
    lobby = {t.id: t for t in await admin.tables()}
    return [lobby[t] for t in opened]


async def _make_seat(
    options: Options,
    admin: StudClient,
    info: TableInfo,
    name: str,
    strategy: str,
    rng: random.Random,
    run_id: str,
    made: list[str],
) -> Seat:
    """A bot account made by the operator (funded by the house), its client and its bot."""
    buy_in = options.buy_in or 50 * info.stakes.big_bet
    buy_in = max(info.min_buy_in, min(info.max_buy_in, buy_in))
    chips = options.bankroll or BUY_INS_PER_BOT * buy_in
    token = await admin.make_bot(name, chips, f"stud-bots run {run_id}")
    made.append(name)
    client = StudClient(options.server, fallback_urls=options.fallback_servers, token=token)
    return Seat(
        name,
        strategy,
        make_bot(strategy, random.Random(rng.random())),
        client,
        info,
        buy_in,
        random.Random(rng.random()),
    )


async def _close_tables(
    admin: StudClient, table_ids: Sequence[int], run_id: str, errors: Counter[str]
) -> list[int]:
    """Close the tables the run opened (everyone cashed out); wait for those that close after
    their hand in progress. The ids closed; refusals counted in ``errors`` by code."""
    closing = []
    for table_id in table_ids:
        try:
            await admin.close_table(table_id, f"stud-bots run {run_id} ended")
            closing.append(table_id)
        except ServerError as refusal:
            errors[refusal.code] += 1
    deadline = time.monotonic() + CLOSE_SECONDS
    while time.monotonic() < deadline:
        lobby = {t.id for t in await admin.tables()}
        if not lobby.intersection(closing):
            break
        await asyncio.sleep(0.2)
    else:
        errors["table_not_closed"] += 1
    lobby = {t.id for t in await admin.tables()}
    return [t for t in closing if t not in lobby]


async def _chaos(seats: list[Seat], every: float, rng: random.Random) -> None:
    while True:
        await asyncio.sleep(every)
        live = [s for s in seats if not s.done]
        if live:
            await rng.choice(live).client.drop_connection()


async def run(options: Options, *, progress_to: TextIO | None = None) -> dict[str, Any]:
    """Play one run as the options say; the report is what ``stud-bots`` prints.

    However it ends (the hands played, the timeout, an error, an interrupt), the bots leave,
    the tables it opened are closed (unless ``keep_tables``) and the bots' chips go back to
    the house; an error before play is raised once that is done."""
    rng = random.Random(options.seed)
    run_id = secrets.token_hex(3)
    state = Run(options)
    seats: list[Seat] = []
    tasks: list[asyncio.Task[None]] = []
    helpers: list[asyncio.Task[None]] = []  # the progress bar, the chaos monkey
    opened: list[int] = []
    made: list[str] = []
    ending = Ending()
    async with StudClient(options.server, fallback_urls=options.fallback_servers) as admin:
        await sign_in(
            admin,
            token=options.operator_token,
            operator=options.operator,
            password=options.operator_password,
        )
        progress = Progress(state, seats, progress_to or sys.stderr)
        try:
            infos = await _open_tables(options, admin, run_id, opened)
            for t, info in enumerate(infos):
                for s in range(options.seats):
                    seats.append(
                        await _make_seat(
                            options,
                            admin,
                            info,
                            f"{options.prefix}-{run_id}-{t + 1}-{s + 1}",
                            options.strategies[s % len(options.strategies)],
                            rng,
                            run_id,
                            made,
                        )
                    )
            if options.progress:
                helpers.append(asyncio.create_task(progress.keep_showing()))
            for seat in seats:
                await seat.client.connect()
                seat.table = await seat.client.watch(seat.info.id)
            tasks = [asyncio.create_task(_play(seat, state)) for seat in seats]
            chaos = None
            if options.chaos:
                chaos = asyncio.create_task(_chaos(seats, options.chaos, rng))
                helpers.append(chaos)
            try:
                async with asyncio.timeout(options.timeout):
                    while not state.enough.is_set() and not all(t.done() for t in tasks):
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(state.enough.wait(), 0.5)
            except TimeoutError:
                ending.timed_out = True
            if chaos is not None:
                chaos.cancel()
        finally:
            await asyncio.gather(*(_leave(seat) for seat in seats), return_exceptions=True)
            _, stuck = await asyncio.wait(tasks, timeout=SETTLE_SECONDS) if tasks else ((), ())
            for task in stuck:
                task.cancel()
            for helper in helpers:
                helper.cancel()
            await asyncio.gather(*helpers, *tasks, return_exceptions=True)
            # The bots' tokens end with the run: nobody can play their accounts afterwards.
            await asyncio.gather(
                *(seat.client.close(logout=True) for seat in seats), return_exceptions=True
            )
            if opened and not options.keep_tables:
                ending.closed = await _close_tables(admin, opened, run_id, ending.errors)
            ending.returned = await return_chips(
                admin, made, f"stud-bots run {run_id} ended", ending.errors
            )
            if options.progress and seats:
                progress.show(final=True)
    return make_report(state, seats, ending)


def failures(report: dict[str, Any], *, chaos: bool = False) -> list[str]:
    """Why a run failed, in words (none: it played hands without an error). Under ``chaos``
    the lost connections the run caused itself are no failure."""
    reasons = []
    if report["hands"] < 1:
        reasons.append("no hand was played")
    errors = {
        code: count
        for code, count in report["errors"].items()
        if not (chaos and code in CHAOS_FAULTS)
    }
    if errors:
        reasons.append("errors: " + ", ".join(f"{code} x{n}" for code, n in errors.items()))
    return reasons


def main(argv: Sequence[str] | None = None) -> int:
    """0: hands played without an error; 1: no hand, an error, or a failure before play;
    2: a wrong command line. With ``--tournament``: the tournament's run
    (``stud_bots.tournament``)."""
    given = list(sys.argv[1:] if argv is None else argv)
    if any(arg == "--tournament" or arg.startswith("--tournament=") for arg in given):
        return tournament.main(given)
    options = parse_args(argv)
    return report_and_exit_code(
        run(options), lambda report: failures(report, chaos=bool(options.chaos))
    )


if __name__ == "__main__":
    raise SystemExit(main())
