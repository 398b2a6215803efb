"""What both of ``stud-bots``' runs share: the cash tables' (``stud_bots.runner``) and the
tournament's (``stud_bots.tournament``): the servers and the operator's credential on the
command line, think times, the operator's sign-in, the bots' chips handed back to the house,
and the latency percentiles of the report."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, Protocol

import httpx

from stud_client import ServerError, StudClient, StudError

__all__ = [
    "Playing",
    "play_counts",
    "report_and_exit_code",
    "add_connection_arguments",
    "listed",
    "operator_password",
    "percentile",
    "return_chips",
    "servers_of",
    "sign_in",
    "think_range",
]


class Playing(Protocol):
    """A bot as the progress line counts it: its client, and its failures that were no
    error frame."""

    client: StudClient
    errors: Counter[str]


def play_counts(bots: Sequence[Playing]) -> str:
    """The bots' actions, errors and reconnects so far, for a progress line."""
    actions = sum(bot.client.stats.actions for bot in bots)
    errors = sum(sum(bot.client.stats.errors.values()) + sum(bot.errors.values()) for bot in bots)
    reconnects = sum(bot.client.stats.reconnects for bot in bots)
    return f"{actions} actions  {errors} errors  {reconnects} reconnects"


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    """``--server`` (repeatable), ``--operator`` and ``--operator-token``."""
    parser.add_argument(
        "--server",
        required=True,
        action="append",
        metavar="URL",
        help="base URL, e.g. http://127.0.0.1:8000; several nodes of one cardroom: repeat "
        "it or give a comma list (tried in turn, as fallbacks)",
    )
    parser.add_argument(
        "--operator",
        help="operator account that makes the bot accounts "
        "(password from STUD_OPERATOR_PASSWORD, else prompted)",
    )
    parser.add_argument(
        "--operator-token",
        default=os.environ.get("STUD_OPERATOR_TOKEN"),
        help="an operator's access token (default: STUD_OPERATOR_TOKEN)",
    )


def servers_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The ``--server`` URLs, each comma list split, in order."""
    servers = [url.strip() for given in args.server for url in given.split(",") if url.strip()]
    if not servers:
        parser.error("--server needs a URL")
    return servers


def operator_password(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str | None:
    """The operator's password (``STUD_OPERATOR_PASSWORD``, else asked), or None when a token
    is given; a command line with neither is refused."""
    if not (args.operator or args.operator_token):
        parser.error(
            "bot accounts are made by an operator: give --operator (password from "
            "STUD_OPERATOR_PASSWORD, else prompted) or --operator-token"
        )
    if args.operator_token:
        return None
    password = os.environ.get("STUD_OPERATOR_PASSWORD")
    if password is None:
        password = getpass.getpass(f"password of {args.operator}: ")
    return password


def listed(text: str, known: Sequence[str], mixed: Sequence[str], what: str) -> tuple[str, ...]:
    """A name, a comma list of names, or ``mixed`` (every one of ``mixed``), each known."""
    names = tuple(mixed) if text == "mixed" else tuple(n.strip() for n in text.split(","))
    for name in names:
        if name not in known:
            raise argparse.ArgumentTypeError(f"no {what} {name!r}; one of {', '.join(known)}")
    return names


def think_range(text: str) -> tuple[float, float]:
    """``--think-ms LOW-HIGH`` (or one number) as seconds."""
    low, _, high = text.partition("-")
    try:
        lo, hi = float(low), float(high or low)
    except ValueError:
        raise argparse.ArgumentTypeError("--think-ms is LOW-HIGH, e.g. 5-40") from None
    if not 0 <= lo <= hi:
        raise argparse.ArgumentTypeError("--think-ms needs 0 <= LOW <= HIGH")
    return lo / 1000, hi / 1000


async def sign_in(
    admin: StudClient, *, token: str | None, operator: str | None, password: str | None
) -> None:
    """The operator's credential on ``admin``: the token given, or a login."""
    if token:
        admin.token = token
        return
    assert operator and password is not None
    await admin.login(operator, password)


async def return_chips(
    admin: StudClient, names: Sequence[str], reason: str, errors: Counter[str]
) -> int:
    """Hand every bot's wallet back to the house (a debit each, audited); the chips moved.
    Refusals counted in ``errors`` by code."""
    moved = 0
    for name in names:
        try:
            balance = int((await admin.find_player(name))["balance"])
            if balance > 0:
                await admin.debit(name, balance, reason)
                moved += balance
        except ServerError as refusal:
            errors[refusal.code] += 1
    return moved


def percentile(values: list[float], share: float) -> float | None:
    """The ``share`` percentile of ``values`` (seconds), in milliseconds (None: no values)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))
    return round(ordered[rank] * 1000, 2)


def report_and_exit_code(
    play: Coroutine[Any, Any, dict[str, Any]],
    failures: Callable[[dict[str, Any]], list[str]],
) -> int:
    """Both runners' ending: the report as one JSON line, each failure on stderr; 0 when
    there is none, 1 otherwise or on a failure before play, 130 when interrupted."""
    try:
        report = asyncio.run(play)
    except (StudError, OSError, httpx.HTTPError) as error:
        print(f"stud-bots: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    print(json.dumps(report), flush=True)
    wrong = failures(report)
    for reason in wrong:
        print(f"stud-bots: {reason}", file=sys.stderr)
    return 1 if wrong else 0
