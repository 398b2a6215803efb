"""``stud-server``: apply migrations, then serve; or make the first operator.

::

    stud-server [--host H] [--port P] [--database-url URL] [--redis-url URL] [--demo]
                [--node-id ID] [--lease-seconds S]
    stud-server migrate                      # upgrade the database to head and exit
    stud-server create-operator NAME         # new operator (password prompted, or
                                             #   --password-stdin), or promote NAME

Flags override the environment (``STUD_*``, ``DATABASE_URL``, ``REDIS_URL``).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import getpass
import logging
import sys
from collections.abc import Callable, Sequence

from pydantic import ValidationError

from server import accounts
from server.db import migrate
from server.db.models import Role
from server.db.session import make_engine, make_sessionmaker
from server.passwords import Passwords
from server.schemas import AccountCreate
from server.settings import Settings

log = logging.getLogger("stud_server")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stud-server",
        description="Multiplayer stud poker server. Without a command: apply database "
        "migrations, then serve HTTP.",
    )
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to listen on (default 8000)")
    parser.add_argument(
        "--database-url",
        help="SQLAlchemy URL (default sqlite+aiosqlite:///./stud.db; "
        "postgresql://... runs on asyncpg)",
    )
    parser.add_argument(
        "--redis-url",
        help="Redis for the bus between nodes (redis://, rediss:// or unix://; "
        "?channel_prefix=P keeps deployments on one Redis apart); default: in memory",
    )
    parser.add_argument(
        "--node-id",
        help="this node's name among the nodes of one cardroom (default: host name and "
        "process id); nodes sharing a database and a Redis share the tables",
    )
    parser.add_argument(
        "--lease-seconds",
        type=float,
        help="how long a node's claim on a table lasts unrenewed: the longest a table waits "
        "for another node to take it over when its node dies (default 5)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        default=None,
        help="also open a demo table of each main variant (seven-card stud, stud hi-lo, "
        "razz) where house bots play through the websocket protocol",
    )
    parser.add_argument(
        "--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"]
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("serve", help="migrate, then serve (the default)")
    commands.add_parser("migrate", help="upgrade the database to the latest revision and exit")
    operator = commands.add_parser(
        "create-operator",
        help="create an operator account, or make an existing account an operator",
    )
    operator.add_argument("name", help="username")
    operator.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the new account's password from the first line of standard input",
    )
    return parser


def settings_from(args: argparse.Namespace) -> Settings:
    """The environment's settings, with the flags given on the command line on top."""
    flags = {
        "host": args.host,
        "port": args.port,
        "database_url": args.database_url,
        "redis_url": args.redis_url,
        "demo": args.demo,
        "node_id": args.node_id,
        "lease_seconds": args.lease_seconds,
    }
    return Settings(**{name: value for name, value in flags.items() if value is not None})


async def apply_migrations(settings: Settings) -> None:
    engine = make_engine(settings.database_url)
    try:
        await migrate.upgrade(engine)
    finally:
        await engine.dispose()


async def create_operator(
    settings: Settings, name: str, ask_password: Callable[[], str | None]
) -> str:
    """Make ``name`` an operator, creating the account if needed; returns what was done.

    ``ask_password`` is called only for a new account.
    """
    engine = make_engine(settings.database_url)
    try:
        await migrate.upgrade(engine)
        async with make_sessionmaker(engine)() as session:
            account = await accounts.find_by_username(session, username=name)
            if account is not None and account.role == Role.OPERATOR:
                done = f"{account.username} is already an operator"
            elif account is not None:
                await accounts.set_role(session, account=account, role=Role.OPERATOR)
                done = f"{account.username} is now an operator"
            else:
                password = ask_password()
                if not password:
                    raise SystemExit("a new account needs a password (--password-stdin)")
                try:
                    AccountCreate(username=name, password=password)
                except ValidationError as exc:
                    raise SystemExit(f"refused: {exc}") from None
                passwords = Passwords(
                    time_cost=settings.password_time_cost,
                    memory_kib=settings.password_memory_kib,
                    parallelism=settings.password_parallelism,
                )
                await accounts.register(
                    session,
                    passwords=passwords,
                    username=name,
                    password=password,
                    role=Role.OPERATOR,
                )
                done = f"operator {name} created"
            await session.commit()
            return done
    finally:
        await engine.dispose()


def _read_password(from_stdin: bool) -> str | None:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n") or None
    if not sys.stdin.isatty():
        return None
    first = getpass.getpass("password for the new operator: ")
    if first != getpass.getpass("again: "):
        raise SystemExit("the passwords differ")
    return first


def serve(settings: Settings, log_level: str) -> None:
    import uvicorn

    from server.app import create_app

    asyncio.run(apply_migrations(settings))
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level=log_level)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    settings = settings_from(args)
    if args.command == "migrate":
        asyncio.run(apply_migrations(settings))
        print(f"database at {migrate.head_revision()}")
    elif args.command == "create-operator":
        ask = functools.partial(_read_password, args.password_stdin)
        print(asyncio.run(create_operator(settings, args.name, ask)))
    else:
        serve(settings, args.log_level)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
