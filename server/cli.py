"""``stud-server``: apply migrations, then serve; or make the first operator.

::

    stud-server [--host H] [--port P] [--data-dir DIR] [--database-url URL]
                [--redis-url URL] [--demo]
                [--node-id ID] [--lease-seconds S] [--workers N] [--log-format text|json]
    stud-server migrate                      # upgrade the database to head and exit
    stud-server create-operator NAME [--role support]
                                             # new operator (password prompted, or
                                             #   --password-stdin), or promote NAME;
                                             #   --role support: read-only staff
    stud-server audit                        # check the books end to end: exit 0 when they
                                             #   balance, 1 with each difference printed

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

from server import logs, workers
from server.accounts import registry
from server.accounts.passwords import Passwords
from server.api.schemas import AccountCreate
from server.db import data_dir, migrate
from server.db.models import STAFF_ROLES, Role
from server.db.session import is_outage, make_engine, make_sessionmaker
from server.settings import Settings
from server.store import books
from server.store.deck_seal import DeckKeyError

log = logging.getLogger("stud_server")
_TITLES = {Role.OPERATOR: "an operator", Role.SUPPORT: "a support account"}


def _global_options(*, after_command: bool) -> argparse.ArgumentParser:
    """The options every command takes, before or after its name (``stud-server audit
    --database-url ...`` as ``stud-server --database-url ... audit``). A command's copy
    has no defaults of its own (``argparse.SUPPRESS``): it sets only what is given after
    the command's name, over what was given before it."""
    unset = argparse.SUPPRESS if after_command else None
    parser = argparse.ArgumentParser(add_help=False, argument_default=unset)
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port to listen on (default 8000)")
    parser.add_argument(
        "--data-dir",
        help="the embedded default's directory, made owner-only: its SQLite database "
        "(stud.db) and deck key (default ./stud-data; STUD_DATA_DIR)",
    )
    parser.add_argument(
        "--database-url",
        help="SQLAlchemy URL (default: SQLite in the data directory; "
        "postgresql://... runs on asyncpg)",
    )
    parser.add_argument(
        "--redis-url",
        help="Redis for the bus between nodes (redis://, rediss:// or unix://; "
        "?channel_prefix=P keeps deployments on one Redis apart, ?cluster=yes names a node "
        "of a Redis Cluster); default: in memory",
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
        "--workers",
        type=_positive,
        help="node processes serving one port, one per core (default 1; several need "
        "PostgreSQL and Redis): each is a node of its own, named <node-id>-w1, -w2... "
        "(STUD_WORKERS)",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        default=unset,
        help="also open a demo table of each main variant (seven-card stud, stud hi-lo, "
        "razz) where house bots play through the websocket protocol",
    )
    parser.add_argument(
        "--log-level",
        default=argparse.SUPPRESS if after_command else "info",
        choices=["critical", "error", "warning", "info", "debug"],
    )
    parser.add_argument(
        "--log-format",
        choices=["text", "json"],
        help="log lines as text (the default) or as JSON objects, one a line, with the table "
        "id and hand number in every line a table writes (STUD_LOG_FORMAT)",
    )
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stud-server",
        parents=[_global_options(after_command=False)],
        description="Multiplayer stud poker server. Without a command: apply database "
        "migrations, then serve HTTP.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    after = [_global_options(after_command=True)]
    commands.add_parser("serve", parents=after, help="migrate, then serve (the default)")
    commands.add_parser(
        "migrate", parents=after, help="upgrade the database to the latest revision and exit"
    )
    operator = commands.add_parser(
        "create-operator",
        parents=after,
        help="create an operator (or --role support) account, or give an existing account "
        "that role",
    )
    operator.add_argument("name", help="username")
    operator.add_argument(
        "--role",
        choices=[role.value for role in STAFF_ROLES],
        default=Role.OPERATOR.value,
        help="operator (the default): runs the cardroom through /admin; support: reads every "
        "GET of /admin and changes nothing",
    )
    operator.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the new account's password from the first line of standard input",
    )
    commands.add_parser(
        "audit",
        parents=after,
        help="check the books end to end (every wallet against its ledger movements, the chips "
        "held against the chips issued, every table's pool against its seats, every recorded "
        "hand netting to zero): exit 0 when they balance, 1 printing each difference",
    )
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of 1 or more")
    return value


def settings_from(args: argparse.Namespace) -> Settings:
    """The environment's settings, with the flags given on the command line on top."""
    flags = {
        "host": args.host,
        "port": args.port,
        "data_dir": args.data_dir,
        "database_url": args.database_url,
        "redis_url": args.redis_url,
        "demo": args.demo,
        "node_id": args.node_id,
        "lease_seconds": args.lease_seconds,
        "workers": args.workers,
        "log_format": args.log_format,
    }
    return Settings(**{name: value for name, value in flags.items() if value is not None})


async def apply_migrations(settings: Settings) -> None:
    engine = make_engine(settings.database_url)
    try:
        await migrate.upgrade(engine)
    finally:
        await engine.dispose()


async def create_operator(
    settings: Settings,
    name: str,
    ask_password: Callable[[], str | None],
    role: Role = Role.OPERATOR,
) -> str:
    """Give ``name`` the staff ``role`` (an operator, or support), creating the account if
    needed; returns what was done.

    ``ask_password`` is called only for a new account.
    """
    if role not in STAFF_ROLES:
        raise ValueError(f"{role} is not a staff role")
    engine = make_engine(settings.database_url)
    try:
        await migrate.upgrade(engine)
        async with make_sessionmaker(engine)() as session:
            account = await registry.find_by_username(session, username=name)
            if account is not None and account.role == role:
                done = f"{account.username} is already {_TITLES[role]}"
            elif account is not None:
                was = account.role
                await registry.set_role(session, account=account, role=role)
                done = f"{account.username} is now {_TITLES[role]} (was {was})"
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
                await registry.register(
                    session,
                    passwords=passwords,
                    username=name,
                    password=password,
                    role=role,
                )
                done = f"{role} {name} created"
            await session.commit()
            return done
    finally:
        await engine.dispose()


async def audit(settings: Settings) -> tuple[int, list[str]]:
    """The books checked on one snapshot of the database (the tables may play on): the exit
    status (0 balanced, 1 a difference, 2 no audit) and the lines to print. A database
    that is not there is not made: an audit writes nothing."""
    path = data_dir.sqlite_file(settings.database_url)
    if path is not None and not path.is_file():
        return 2, [f"cannot audit: there is no database at {path} (--database-url, --data-dir)"]
    engine = make_engine(settings.database_url)
    try:
        revision, head = await migrate.current_revision(engine), migrate.head_revision()
        if revision != head:
            return 2, [
                f"cannot audit: the database is at revision {revision or 'none'}, this "
                f"code's is {head} (stud-server migrate)"
            ]
        check = await books.audit_books(make_sessionmaker(engine))
    except Exception as error:
        if not is_outage(error):
            raise
        return 2, [f"cannot audit: the database does not answer ({error})"]
    finally:
        await engine.dispose()
    differences = check.differences()
    if not differences:
        return 0, [f"the books balance: {check.summary()}"]
    count = len(differences)
    return 1, [*differences, f"the books do not balance: {count} difference{'s' * (count > 1)}"]


def _read_password(from_stdin: bool) -> str | None:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n") or None
    if not sys.stdin.isatty():
        return None
    first = getpass.getpass("password for the new account: ")
    if first != getpass.getpass("again: "):
        raise SystemExit("the passwords differ")
    return first


def serve(settings: Settings, log_level: str) -> int:
    """Migrate, then serve: one node in this process, or ``--workers`` node processes."""
    refused = workers.refusal(settings)
    if refused is not None:
        print(f"stud-server: refused to start: {refused}", file=sys.stderr)
        return 2
    try:
        settings.deck_seal()  # made or read once here: a missing key stops the start at once
    except DeckKeyError as error:
        raise SystemExit(f"refused to start: {error}") from None
    asyncio.run(apply_migrations(settings))  # once, before any worker starts
    if settings.workers > 1:
        return workers.Supervisor(settings, log_level).run()
    workers.run_node(settings, log_level)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    settings = settings_from(args)
    logs.configure(args.log_level, settings.log_format)
    left_behind = data_dir.older_database_left_behind(settings.database_url, settings.data_dir)
    if left_behind is not None:
        log.warning(left_behind)
    if args.command in ("create-operator", "audit") and args.log_level != "debug":
        # One line out: the migrations these apply first are no news to their users.
        logging.getLogger("alembic").setLevel(logging.WARNING)
    if args.command == "migrate":
        asyncio.run(apply_migrations(settings))
        print(f"database at {migrate.head_revision()}")
    elif args.command == "create-operator":
        ask = functools.partial(_read_password, args.password_stdin)
        print(asyncio.run(create_operator(settings, args.name, ask, Role(args.role))))
    elif args.command == "audit":
        status, lines = asyncio.run(audit(settings))
        print("\n".join(lines), file=sys.stderr if status == 2 else sys.stdout)
        return status
    else:
        return serve(settings, args.log_level)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
