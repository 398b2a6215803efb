from __future__ import annotations

from datetime import timedelta

import httpx
from server_helpers import PASSWORD, bearer, error_code, login, player_token, register
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from server.accounts import tokens
from server.db.models import Account, Token
from server.db.types import utcnow


async def test_register_creates_a_player_with_the_starting_bankroll(
    client: httpx.AsyncClient,
) -> None:
    response = await register(client, "Alice")
    assert response.status_code == 201
    body = response.json()
    assert body["username"] == "Alice" and body["role"] == "player"
    assert body["created_at"].endswith("Z") or "+00:00" in body["created_at"]
    token = await login(client, "Alice")
    wallet = (await client.get("/wallet", headers=bearer(token))).json()
    assert wallet["balance"] == 10_000


async def test_register_a_bot(client: httpx.AsyncClient) -> None:
    response = await register(client, "robot-1", bot=True)
    assert response.json()["role"] == "bot"


async def test_password_is_stored_as_argon2id(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    await register(client, "alice")
    stored = await session.scalar(select(Account.password_hash))
    assert stored is not None and stored.startswith("$argon2id$") and PASSWORD not in stored


async def test_duplicate_username_whatever_its_case(client: httpx.AsyncClient) -> None:
    assert (await register(client, "alice")).status_code == 201
    for name in ("alice", "ALICE"):
        response = await register(client, name)
        assert response.status_code == 409
        assert error_code(response) == "username_taken"


async def test_malformed_registration_is_a_bad_request(client: httpx.AsyncClient) -> None:
    for body in (
        {"username": "a", "password": PASSWORD},
        {"username": "alice", "password": "short"},
        {"username": "no spaces", "password": PASSWORD},
        {"username": "alice", "password": PASSWORD, "role": "operator"},
    ):
        response = await client.post("/auth/register", json=body)
        assert response.status_code == 400, body
        assert error_code(response) == "bad_request"


async def _accounts(session: AsyncSession) -> int:
    return len((await session.scalars(select(Account.id))).all())


async def test_a_common_or_blank_password_is_refused_and_makes_no_account(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    for password in ("password", "PassWord", " 12345678 ", "iloveyou", " " * 8, "\t" * 9):
        response = await client.post(
            "/auth/register", json={"username": "alice", "password": password}
        )
        assert response.status_code == 400, password
        assert error_code(response) == "weak_password", password
        assert "password" in response.json()["error"]["message"]
    assert await _accounts(session) == 0
    # The same name with a password of its own is then free.
    assert (await register(client, "alice", "a pass of my own")).status_code == 201


async def test_the_house_bots_names_are_reserved(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    for name in ("house-razz-1", "HOUSE-seven-card-stud-2", "house_razz", "house.bot", "House"):
        response = await register(client, name)
        assert response.status_code == 400, name
        assert error_code(response) == "reserved_username", name
    assert await _accounts(session) == 0
    for name in ("householder", "my-house-1", "the.house"):
        assert (await register(client, name)).status_code == 201, name


async def test_a_reserved_name_and_a_weak_password_each_refuse_the_account(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    response = await client.post(
        "/auth/register", json={"username": "house-razz-1", "password": "password"}
    )
    assert response.status_code == 400
    assert error_code(response) == "reserved_username"  # the first field's code
    message = response.json()["error"]["message"]
    assert "username" in message and "password" in message  # each problem said
    assert await _accounts(session) == 0


async def test_login_me_logout(client: httpx.AsyncClient) -> None:
    token = await player_token(client, "alice")
    me = await client.get("/me", headers=bearer(token))
    assert me.status_code == 200 and me.json()["username"] == "alice"
    assert (await client.post("/auth/logout", headers=bearer(token))).status_code == 204
    after = await client.get("/me", headers=bearer(token))
    assert after.status_code == 401 and error_code(after) == "token_revoked"
    assert after.headers["www-authenticate"] == "Bearer"


async def test_logout_revokes_only_that_token(client: httpx.AsyncClient) -> None:
    first = await player_token(client, "alice")
    second = await login(client, "alice")
    await client.post("/auth/logout", headers=bearer(first))
    assert (await client.get("/me", headers=bearer(second))).status_code == 200


async def test_login_is_case_insensitive_on_the_username(client: httpx.AsyncClient) -> None:
    await register(client, "Alice")
    await login(client, "alice")


async def test_wrong_password_and_unknown_user_say_the_same(client: httpx.AsyncClient) -> None:
    await register(client, "alice")
    wrong = await client.post("/auth/login", json={"username": "alice", "password": "nope" * 3})
    unknown = await client.post("/auth/login", json={"username": "bob", "password": PASSWORD})
    for response in (wrong, unknown):
        assert response.status_code == 401
        assert error_code(response) == "bad_credentials"
    assert wrong.json() == unknown.json()


async def test_expired_token(client: httpx.AsyncClient, session: AsyncSession) -> None:
    token = await player_token(client, "alice")
    await session.execute(
        update(Token)
        .where(Token.token_hash == tokens.digest(token))
        .values(expires_at=utcnow() - timedelta(seconds=1))
    )
    await session.commit()
    response = await client.get("/me", headers=bearer(token))
    assert response.status_code == 401 and error_code(response) == "token_expired"


async def test_token_lives_token_ttl_seconds(
    client: httpx.AsyncClient, session: AsyncSession
) -> None:
    token = await player_token(client, "alice")
    row = await session.scalar(select(Token).where(Token.token_hash == tokens.digest(token)))
    assert row is not None
    assert row.expires_at - row.created_at == timedelta(seconds=24 * 3600)
    # Just before expiry it works; at expiry it does not.
    await tokens.resolve(session, token=token, now=row.expires_at - timedelta(seconds=1))
    try:
        await tokens.resolve(session, token=token, now=row.expires_at)
    except tokens.TokenRefused as refused:
        assert refused.code == "token_expired"
    else:
        raise AssertionError("an expired token was accepted")


async def test_tokens_are_stored_hashed(client: httpx.AsyncClient, session: AsyncSession) -> None:
    token = await player_token(client, "alice")
    stored = list(await session.scalars(select(Token.token_hash)))
    assert token not in stored and tokens.digest(token) in stored


async def test_missing_or_unknown_token(client: httpx.AsyncClient) -> None:
    missing = await client.get("/me")
    assert missing.status_code == 401 and error_code(missing) == "not_authenticated"
    unknown = await client.get("/me", headers=bearer("made-up"))
    assert unknown.status_code == 401 and error_code(unknown) == "bad_token"
