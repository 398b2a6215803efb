"""``stud-bots --tournament``: bots that register for a tournament and play it to the end.

::

    stud-bots --server URL --operator boss --tournament 12            # fill sit-and-go 12
    stud-bots --server URL --operator boss --tournament 12 --bots 40  # 40 bots in it
    stud-bots --server URL --operator boss --tournament new --template stud-sng-9 \\
              --hands-per-level 3 --strategy mixed
    stud-bots --server URL --operator boss --tournament new --spec @format.json --bots 22
    stud-bots --server URL --operator boss --tournament new --template stud-mtt-turbo \\
              --bots 200 --hands-per-level 4 --starts-in 5

With an operator's credential (as the cash tables' run: ``STUD_OPERATOR_PASSWORD``, a prompt,
or ``--operator-token``) the runner makes its bot accounts (``POST /admin/bots``), each
granted by the house exactly one buy-in and fee, and registers each for the tournament (an
idempotent ``request_id``: a retried registration pays once). ``--bots`` says how many;
by default the seats a sit-and-go has left (a scheduled tournament needs ``--bots``).

``--tournament new`` has the operator make the tournament first, from a shipped format
(``--template``, one of ``GET /tournaments/templates``) or a full one (``--spec``: JSON, or
``@file``, as ``POST /admin/tournaments`` takes it). ``--hands-per-level N`` makes it a quick
format: every level lasts N hands (begun across the tournament) and the breaks go. A
scheduled one starts ``--starts-in`` seconds after the last bot registered (its start is set
then). A sit-and-go starts when its last seat is taken.

Each bot has one websocket: it follows the tournament (only its own events: seated, moved,
out, the end; ``stud_client.tournaments``), watches the table its seat is at, acts there with
its strategy (``--strategy``, any variant), and when the director moves it, leaves that table
for the new one; it never acts at a table it has left, and never moves by itself. After a
lost connection its client reconnects, and the tournament's state says where it sits. The run
ends when the tournament is finished (or at ``--timeout``); the bots' tokens end, and their
chips (prizes) go back to the house (``--keep-chips`` leaves them in their wallets).

Given several nodes of one cardroom (``--server`` again, or a comma list), the bots spread
over them: each bot's first server is the next one in turn, the others its fallbacks.

Then one JSON line: the tournament, its winner, the bots' places and prizes, hands played,
actions, moves, errors by code, reconnects, and the latency from an action sent to its event
seen (p50, p95, p99 in milliseconds). It exits 0 when the tournament finished with every bot
placed and no error, 1 otherwise.
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
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO, TypeVar

import httpx

from stud_bots.common import (
    add_connection_arguments,
    listed,
    operator_password,
    percentile,
    play_counts,
    report_and_exit_code,
    return_chips,
    servers_of,
    sign_in,
    think_range,
)
from stud_bots.entrant import CHECK_SECONDS, Entrant, Tally, play
from stud_bots.strategies import STRATEGIES, make_bot
from stud_client import (
    ConnectionLost,
    ServerError,
    StudClient,
    StudError,
    TournamentFollow,
)

__all__ = ["TournamentOptions", "failures", "main", "parse_args", "quick_spec", "run"]

T = TypeVar("T")

NEW = "new"
MAKING_AT_ONCE = 16  # bot accounts made and registered side by side
FAR_START = timedelta(days=1)  # a new scheduled tournament's start until its bots are in
# A table_unavailable is the server's "try again" to a bot reconnecting while its table
# changes hands or closes: the bot asks its state again.
CHAOS_FAULTS = frozenset({"connection_lost", "timeout", "missed_turn", "table_unavailable"})


@dataclass(slots=True)
class TournamentOptions:
    server: str
    tournament: int | None  # None: a new one
    fallback_servers: tuple[str, ...] = ()
    template: str | None = None
    spec: dict[str, Any] | None = None
    hands_per_level: int | None = None
    starts_in: float = 5.0
    bots: int | None = None
    strategies: tuple[str, ...] = ("rules",)
    think: tuple[float, float] = (0.0, 0.0)
    operator: str | None = None
    operator_password: str | None = None
    operator_token: str | None = None
    prefix: str = "bot"
    seed: int | None = None
    timeout: float | None = None
    chaos: float | None = None
    keep_chips: bool = False
    progress: bool = True


def _spec_given(text: str) -> dict[str, Any]:
    raw = Path(text[1:]).read_text() if text.startswith("@") else text
    spec = json.loads(raw)
    if not isinstance(spec, dict):
        raise argparse.ArgumentTypeError("--spec must be a JSON object")
    return spec


def parse_args(argv: Sequence[str] | None = None) -> TournamentOptions:
    parser = argparse.ArgumentParser(
        prog="stud-bots --tournament",
        description="Bots registering for a tournament and playing it to the end, through the "
        "public protocol. Progress to stderr; one JSON line of results to stdout.",
    )
    add_connection_arguments(parser)
    parser.add_argument(
        "--tournament", required=True, metavar="ID|new", help="a tournament's id, or 'new'"
    )
    parser.add_argument("--template", help="with 'new': a shipped format by name")
    parser.add_argument("--spec", help="with 'new': a full format, JSON or @file")
    parser.add_argument(
        "--hands-per-level",
        type=int,
        help="with 'new': every level lasts this many hands, no breaks (a quick format)",
    )
    parser.add_argument(
        "--starts-in",
        type=float,
        default=5.0,
        help="with 'new', a scheduled format: seconds from the last registration to the start",
    )
    parser.add_argument(
        "--bots", type=int, help="bots to register (default: the seats a sit-and-go has left)"
    )
    parser.add_argument(
        "--strategy",
        default="rules",
        help=f"{', '.join(STRATEGIES)}, a comma list, or 'mixed' (bot by bot)",
    )
    parser.add_argument("--think-ms", default="0-0", help="think time per action, LOW-HIGH")
    parser.add_argument("--prefix", default="bot", help="bot account names start with this")
    parser.add_argument("--seed", type=int, help="seed the bots' decisions")
    parser.add_argument("--timeout", type=float, help="stop after this many seconds anyway")
    parser.add_argument(
        "--chaos", type=float, metavar="SECONDS", help="drop a random bot's connection this often"
    )
    parser.add_argument(
        "--keep-chips",
        action="store_true",
        help="leave the bots' chips (their prizes) in their wallets",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    try:
        strategies = listed(args.strategy, tuple(STRATEGIES), tuple(STRATEGIES), "strategy")
        think = think_range(args.think_ms)
        spec = _spec_given(args.spec) if args.spec is not None else None
    except (argparse.ArgumentTypeError, json.JSONDecodeError, OSError) as error:
        parser.error(str(error))
    tournament: int | None = None
    if args.tournament == NEW:
        if (args.template is None) == (spec is None):
            parser.error("--tournament new takes --template NAME or --spec JSON (one of them)")
    else:
        try:
            tournament = int(args.tournament)
        except ValueError:
            parser.error("--tournament is a tournament's id or 'new'")
        if args.template or spec is not None or args.hands_per_level is not None:
            parser.error("--template, --spec and --hands-per-level go with --tournament new")
    if args.bots is not None and args.bots < 1:
        parser.error("--bots >= 1")
    if args.hands_per_level is not None and args.hands_per_level < 1:
        parser.error("--hands-per-level >= 1")
    password = operator_password(parser, args)
    servers = servers_of(parser, args)
    return TournamentOptions(
        server=servers[0],
        fallback_servers=tuple(servers[1:]),
        tournament=tournament,
        template=args.template,
        spec=spec,
        hands_per_level=args.hands_per_level,
        starts_in=args.starts_in,
        bots=args.bots,
        strategies=strategies,
        think=think,
        operator=args.operator,
        operator_password=password,
        operator_token=args.operator_token,
        prefix=args.prefix,
        seed=args.seed,
        timeout=args.timeout,
        chaos=args.chaos,
        keep_chips=args.keep_chips,
        progress=not args.quiet,
    )


def quick_spec(spec: dict[str, Any], hands_per_level: int) -> dict[str, Any]:
    """The format with every level ``hands_per_level`` hands long and its breaks gone.

    >>> quick = quick_spec({"structure": {"starting_chips": 10, "entries": [
    ...     {"kind": "level", "ante": 1, "bring_in": 2, "small_bet": 4, "big_bet": 8,
    ...      "minutes": 10}, {"kind": "break", "minutes": 5}]}}, 3)
    >>> quick["structure"]["entries"]
    [{'kind': 'level', 'ante': 1, 'bring_in': 2, 'small_bet': 4, 'big_bet': 8, 'hands': 3}]
    """
    structure = spec["structure"]
    levels = []
    for entry in structure["entries"]:
        if entry.get("kind", "level") != "level":
            continue
        level = {k: v for k, v in entry.items() if k not in ("minutes", "hands")}
        levels.append({**level, "hands": hands_per_level})
    return {**spec, "structure": {**structure, "entries": levels}}


# ---------------------------------------------------------------------- one run


async def _tournament(options: TournamentOptions, admin: StudClient, run_id: str) -> dict[str, Any]:
    """The tournament to play: the one given, or a new one the operator makes."""
    if options.tournament is not None:
        return await admin.tournaments.details(options.tournament, entries=False)
    template, spec, kind = options.template, options.spec, None
    if template is not None:
        templates = await admin.tournaments.templates()
        if template not in templates:
            raise StudError(f"no template {template!r} (there are {', '.join(sorted(templates))})")
        kind = templates[template]["kind"]
        if options.hands_per_level is not None:
            spec, template = templates[template], None  # made from its format, quicker
    if spec is not None:
        kind = spec["kind"]
        if options.hands_per_level is not None:
            spec = quick_spec(spec, options.hands_per_level)
    # A scheduled one starts once its bots are in (``_start``): until then, far away.
    starts_at = (datetime.now(UTC) + FAR_START).isoformat() if kind == "scheduled" else None
    return await admin.tournaments.create(
        f"{options.prefix}-{run_id}", template=template, spec=spec, starts_at=starts_at
    )


def _seats_left(details: dict[str, Any]) -> int:
    if details["spec"]["kind"] != "sit_and_go":
        raise StudError("a scheduled tournament takes --bots: how many to register")
    left = int(details["max_entrants"]) - int(details["entrants"])
    if left < 1:
        raise StudError(f"tournament {details['id']} has no seat left")
    return left


async def _make_player(
    options: TournamentOptions,
    admin: StudClient,
    name: str,
    strategy: str,
    rng: random.Random,
    chips: int,
    run_id: str,
    made: list[str],
    number: int,
) -> Entrant:
    """A bot account made by the operator, granted one buy-in and fee by the house; its
    client's first server the next of the servers given in turn (the others its fallbacks),
    so that the bots spread over a cardroom's nodes."""
    token = await admin.make_bot(name, chips, f"stud-bots tournament run {run_id}")
    made.append(name)
    servers = (options.server, *options.fallback_servers)
    first = number % len(servers)
    client = StudClient(
        servers[first], fallback_urls=servers[first + 1 :] + servers[:first], token=token
    )
    return Entrant(
        name,
        strategy,
        make_bot(strategy, random.Random(rng.random())),
        client,
        random.Random(rng.random()),
        options.think,
    )


async def _enter(player: Entrant, tournament_id: int, run_id: str) -> None:
    """Connected, following its tournament, then registered (a retried registration finds
    the entry it made: one ``request_id``, paid once)."""
    client = player.client
    await client.connect()
    player.follow = await client.tournaments.follow(tournament_id, everything=False)
    for attempt in range(3):
        try:
            await client.tournaments.register(tournament_id, request_id=f"{player.name}-{run_id}")
            player.registered = True
            return
        except ServerError as refusal:
            player.errors[str(refusal.code)] += 1
            return
        except httpx.TransportError:  # the same request again: it pays once
            await asyncio.sleep(0.2 * 2**attempt)
    player.errors["not_registered"] += 1


async def _start(options: TournamentOptions, admin: StudClient, details: dict[str, Any]) -> None:
    """A new scheduled tournament, its bots in: starting ``starts_in`` seconds from now."""
    if options.tournament is not None or details["spec"]["kind"] != "scheduled":
        return
    starts_at = datetime.now(UTC) + timedelta(seconds=options.starts_in)
    await admin.tournaments.edit(
        int(details["id"]), starts_at=starts_at.isoformat(), reason="stud-bots: its bots are in"
    )


@dataclass(slots=True)
class _Ending:
    details: dict[str, Any] | None = None  # the tournament once play stopped
    returned: int = 0
    timed_out: bool = False
    errors: Counter[str] = field(default_factory=Counter)  # refusals met winding up


def _report(
    run: Tally, players: list[Entrant], ending: _Ending, tournament_id: int | None
) -> dict[str, Any]:
    errors: Counter[str] = Counter(ending.errors)
    latencies: list[float] = []
    for player in players:
        errors.update(player.client.stats.errors)
        errors.update(player.errors)
        latencies.extend(player.client.stats.latencies)
    details = ending.details or {}
    entries = {e["player"]: e for e in details.get("entries") or []}
    places = []
    for player in players:
        entry = entries.get(player.name)
        if entry is None:
            continue
        told = player.follow.place if player.follow is not None else None
        if told is not None and told != entry["place"]:
            errors["place_told_wrong"] += 1  # what its websocket said is not what was paid
        places.append({"player": player.name, "place": entry["place"], "prize": entry["prize"]})
    places.sort(key=lambda p: (p["place"] is None, p["place"] or 0, p["player"]))
    winner = next((name for name, e in entries.items() if e["place"] == 1), None)
    return {
        "tournament": tournament_id,
        "name": details.get("name"),
        "status": details.get("status"),
        "winner": winner,
        "entrants": len(entries),
        "prize_pool": sum(e["prize"] or 0 for e in entries.values()) + details.get("prize_pool", 0),
        "payouts": details.get("payouts", []),
        "places": places,
        "bots": len(players),
        "hands": run.hands,
        "hands_by_table": {str(t): len(h) for t, h in sorted(run.ended.items())},
        "tables": len({t for p in players for t in p.tables}),
        "moves": sum(max(0, len(p.tables) - 1) for p in players),
        "actions": sum(p.client.stats.actions for p in players),
        "errors": dict(sorted((code, n) for code, n in errors.items() if n)),
        "reconnects": sum(p.client.stats.reconnects for p in players),
        "resyncs": sum(p.client.stats.resyncs for p in players),
        "retries": sum(p.client.stats.retries for p in players),
        "states": sum(p.follow.states for p in players if p.follow is not None),
        "refreshes": sum(p.refreshes for p in players),
        "latency_ms": {
            "p50": percentile(latencies, 0.50),
            "p95": percentile(latencies, 0.95),
            "p99": percentile(latencies, 0.99),
            "count": len(latencies),
        },
        "seconds": round(time.monotonic() - run.started, 2),
        "strategies": dict(Counter(p.strategy for p in players)),
        "servers": dict(Counter(p.client.base_url for p in players)),
        "timed_out": ending.timed_out,
        "chips_returned": ending.returned,
    }


class _Progress:
    """A line on stderr: players left, hands, actions, errors (on a terminal, rewritten in
    place; else a line each time a tenth of the field is out)."""

    def __init__(self, run: Tally, players: list[Entrant], out: TextIO) -> None:
        self.run, self.players, self.out = run, players, out
        self.tty = out.isatty()
        self.shown: int | None = None  # the tenths of the field out, last shown
        self.follow: TournamentFollow | None = None

    def line(self) -> str:
        state = self.follow.state if self.follow is not None else {}
        field_ = f"{state.get('entrants', 0)}/{state.get('max_entrants', '?')} registered"
        if "players_left" in state:
            field_ = f"{state['players_left']}/{state['entrants']} players left"
        return (
            f"{field_}  {self.run.hands} hands  {play_counts(self.players)}  "
            f"{time.monotonic() - self.run.started:.1f}s"
        )

    def show(self, final: bool = False) -> None:
        if self.tty:
            self.out.write("\r" + self.line() + ("\n" if final else ""))
            self.out.flush()
            return
        state = self.follow.state if self.follow is not None else {}
        field_ = max(1, int(state.get("entrants") or len(self.players) or 1))
        left = int(state.get("players_left") or field_)
        tenth = (field_ - left) * 10 // field_
        if final or self.shown != tenth:
            self.shown = tenth
            self.out.write(self.line() + "\n")
            self.out.flush()

    async def keep_showing(self) -> None:
        while True:
            self.show()
            await asyncio.sleep(0.5)


async def _chaos(players: list[Entrant], every: float, rng: random.Random) -> None:
    while True:
        await asyncio.sleep(every)
        live = [p for p in players if p.follow is not None and not p.follow.over_for_me]
        if live:
            await rng.choice(live).client.drop_connection()


async def _made_and_entered(
    options: TournamentOptions,
    admin: StudClient,
    details: dict[str, Any],
    rng: random.Random,
    run_id: str,
    players: list[Entrant],
    made: list[str],
) -> None:
    """The bots, made and registered a few at a time (each added to ``players`` as it is
    made, so that the run winds them up however it ends)."""
    count = options.bots or _seats_left(details)
    spec = details["spec"]
    chips = int(spec["buy_in"]) + int(spec["fee"])
    gate = asyncio.Semaphore(MAKING_AT_ONCE)
    seeds = [rng.random() for _ in range(count)]  # each bot's, whatever order they are made in

    async def one(number: int) -> None:
        async with gate:
            player = await _make_player(
                options,
                admin,
                f"{options.prefix}-{run_id}-{number + 1}",
                options.strategies[number % len(options.strategies)],
                random.Random(seeds[number]),
                chips,
                run_id,
                made,
                number,
            )
            players.append(player)
            await _enter(player, int(details["id"]), run_id)

    await asyncio.gather(*(one(n) for n in range(count)))
    players.sort(key=lambda p: int(p.name.rsplit("-", 1)[1]))


async def _until_over(watch: TournamentFollow) -> None:
    """Until the tournament is over, asking its state again now and then (its end's event
    may be lost with a connection)."""
    while not watch.over:
        with contextlib.suppress(TimeoutError):
            await watch.wait_for(lambda f: f.over, timeout=10 * CHECK_SECONDS)
        if not watch.over:
            with contextlib.suppress(ServerError, ConnectionLost, TimeoutError):
                await watch.refresh()


async def run(options: TournamentOptions, *, progress_to: TextIO | None = None) -> dict[str, Any]:
    """Play one tournament run as the options say; the report is what it prints.

    However it ends (the tournament over, the timeout, an error, an interrupt), the bots'
    tokens end and their chips go back to the house (unless ``keep_chips``); an error before
    play is raised once that is done."""
    rng = random.Random(options.seed)
    run_id = secrets.token_hex(3)
    state = Tally()
    players: list[Entrant] = []
    made: list[str] = []
    tasks: list[asyncio.Task[None]] = []
    helpers: list[asyncio.Task[None]] = []
    ending = _Ending()
    tournament_id: int | None = options.tournament
    async with StudClient(options.server, fallback_urls=options.fallback_servers) as admin:
        await sign_in(
            admin,
            token=options.operator_token,
            operator=options.operator,
            password=options.operator_password,
        )
        progress = _Progress(state, players, progress_to or sys.stderr)
        try:
            details = await _tournament(options, admin, run_id)
            tournament_id = int(details["id"])
            await admin.connect()
            watch = await admin.tournaments.follow(tournament_id)
            progress.follow = watch
            if options.progress:
                helpers.append(asyncio.create_task(progress.keep_showing()))
            await _made_and_entered(options, admin, details, rng, run_id, players, made)
            await _start(options, admin, details)
            tasks = [asyncio.create_task(play(p, state)) for p in players if p.registered]
            if options.chaos:
                helpers.append(asyncio.create_task(_chaos(players, options.chaos, rng)))
            try:
                async with asyncio.timeout(options.timeout):
                    await _until_over(watch)
                    # The bots hear the end too (each its own place): a moment for that.
                    await asyncio.wait(tasks, timeout=CHECK_SECONDS * 5)
            except TimeoutError:
                ending.timed_out = True
        finally:
            for task in (*helpers, *tasks):
                task.cancel()
            await asyncio.gather(*helpers, *tasks, return_exceptions=True)
            await asyncio.gather(
                *(p.client.close(logout=True) for p in players), return_exceptions=True
            )
            if tournament_id is not None:
                with contextlib.suppress(StudError, httpx.HTTPError):
                    ending.details = await admin.tournaments.details(tournament_id)
            if not options.keep_chips:
                ending.returned = await return_chips(
                    admin, made, f"stud-bots tournament run {run_id} ended", ending.errors
                )
            if options.progress and players:
                progress.show(final=True)
    return _report(state, players, ending, tournament_id)


def failures(report: dict[str, Any], *, chaos: bool = False) -> list[str]:
    """Why a run failed, in words (none: the tournament finished, every bot placed, no
    error). Under ``chaos`` the lost connections the run caused itself are no failure."""
    reasons = []
    if report["status"] != "finished":
        reasons.append(f"the tournament is {report['status']}, not finished")
    if report["timed_out"]:
        reasons.append("timed out")
    unplaced = [p["player"] for p in report["places"] if p["place"] is None]
    if unplaced or len(report["places"]) < report["bots"]:
        reasons.append(
            f"bots with no place: {len(unplaced) + report['bots'] - len(report['places'])}"
        )
    errors = {
        code: count
        for code, count in report["errors"].items()
        if not (chaos and code in CHAOS_FAULTS)
    }
    if errors:
        reasons.append("errors: " + ", ".join(f"{code} x{n}" for code, n in errors.items()))
    return reasons


def main(argv: Sequence[str] | None = None) -> int:
    """0: the tournament finished, every bot placed, no error; 1: otherwise, or a failure
    before play; 2: a wrong command line."""
    options = parse_args(argv)
    return report_and_exit_code(
        run(options), lambda report: failures(report, chaos=bool(options.chaos))
    )


if __name__ == "__main__":
    raise SystemExit(main())
