"""Helpers of the server tests: register, log in, read the error shape, end a server."""

from __future__ import annotations

import signal
import subprocess
from typing import Any

import httpx

from server.cli import create_operator
from server.settings import Settings

# Argon2 at its cheapest: the tests check behaviour, not hashing cost.
# The gateway's limits set out of reach, for tests that are not about them (tests/abuse and
# test_gateway are): a test registers and logs in many accounts from one address.
OPEN_LIMITS: dict[str, Any] = {
    "login_failures_per_address_per_minute": 100_000,
    "register_per_address_per_minute": 100_000,
    "starting_grants_per_address": 100_000,
    "ws_sockets_per_address": 100_000,
}
FAST_HASHING: dict[str, Any] = {
    "password_time_cost": 1,
    "password_memory_kib": 8,
    "password_parallelism": 1,
    **OPEN_LIMITS,
}
PASSWORD = "correct horse"

# Every rule setting away from its default, in one playable combination.
EVERY_RULE: dict[str, Any] = {
    "variant": "five_card_stud",
    "structure": "pot_limit",
    "ante": 2,
    "bring_in": 3,
    "small_bet": 6,
    "big_bet": 12,
    "max_raises": None,
    "uncapped_heads_up": False,
    "bring_in_may_complete_later": True,
    "eligibility": "ante",
    "bring_in_card": "high",
    "bring_in_tie": "position",
    "order_tie": "position",
    "open_pair_big_bet": False,
    "burn_cards": False,
    "last_card_down": True,
    "low_qualifier": None,
    "kansas_city_low": True,
    "announce_possibles": True,
    "all_in_full_fraction": 1.0,
    "ante_by_position": [1, 2, 3],
    "antes_dead": True,
    "trim_antes": True,
    "odd_chip_tie": "lowest_position",
    "all_in_opener": "next_seat",
    "short_all_in": "largest_increase",
    "cap_counts_short_all_ins": True,
    "short_bring_in_call": "posted",
    "reuse_folded_cards": True,
    "common_card_in_order": False,
    "deal_to_unfaced_folds": False,
    "pots_by_contenders": True,
    "rake_percent": 4.5,
    "rake_cap": 3,
    "rake_from_street": 3,
    # The one value a cash table takes (the other is the tournament tables' rule 8).
    "absent_hands": "killed_when_action_reaches",
}
# What a table takes of them: not ante_by_position, which replays recorded hands only (its
# length the players dealt in, which a table cannot promise).
EVERY_TABLE_RULE: dict[str, Any] = {
    name: value for name, value in EVERY_RULE.items() if name != "ante_by_position"
}


async def register(
    client: httpx.AsyncClient, username: str, password: str = PASSWORD, **extra: object
) -> httpx.Response:
    return await client.post(
        "/auth/register", json={"username": username, "password": password, **extra}
    )


async def login(client: httpx.AsyncClient, username: str, password: str = PASSWORD) -> str:
    response = await client.post("/auth/login", json={"username": username, "password": password})
    assert response.status_code == 200, response.text
    token: str = response.json()["access_token"]
    return token


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def player_token(client: httpx.AsyncClient, username: str = "alice") -> str:
    response = await register(client, username)
    assert response.status_code == 201, response.text
    return await login(client, username)


async def operator_token(
    client: httpx.AsyncClient, settings: Settings, username: str = "boss"
) -> str:
    """An operator made the documented way: ``stud-server create-operator``'s function."""
    await create_operator(settings, username, lambda: PASSWORD)
    return await login(client, username)


def error_code(response: httpx.Response) -> str:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    code: str = body["error"]["code"]
    return code


def end_process(process: subprocess.Popen[Any], timeout: float = 15) -> None:
    """Stop a server the way an operator does (Ctrl-C), killing it if it will not go."""
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
