"""Where the embedded default keeps what it writes: one directory, owner-only.

With no ``DATABASE_URL``, the server keeps its SQLite database in the data directory
(``STUD_DATA_DIR``, ``./stud-data`` by default) as ``stud.db``, and beside it the deck key it
makes (``stud.db.deck-key``, server/store/deck_seal.py) and SQLite's ``-wal`` and ``-shm`` files.
Whatever the server makes there it makes for its owner only: the directory 0700 (when the
server makes it), the database and the key 0600 (SQLite gives its ``-wal`` and ``-shm`` files
the database's mode). An explicit SQLite ``DATABASE_URL`` is served the same way: its
directory is its data directory. ``.gitignore`` leaves all of it out of the repository.

>>> default_database_url(Path("stud-data"))
'sqlite+aiosqlite:///stud-data/stud.db'
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from sqlalchemy.engine import make_url

DEFAULT_DATA_DIR = Path("stud-data")
DATABASE_FILE = "stud.db"
OLDER_DATABASE_FILE = "stud.db"  # in the working directory: before the data directory
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def default_database_url(data_dir: Path) -> str:
    """The embedded default's database: ``stud.db`` in the data directory."""
    return f"sqlite+aiosqlite:///{(data_dir / DATABASE_FILE).as_posix()}"


def sqlite_file(database_url: str) -> Path | None:
    """The database file of a SQLite URL; None for an in-memory one or another database."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database)


def make_private_dir(path: Path) -> None:
    """Make ``path`` (and its parents) if it is missing, the directory itself owner-only;
    a directory that exists is left as it is."""
    if path.is_dir():
        return
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    os.chmod(path, PRIVATE_DIR_MODE)  # whatever the umask


def make_private_file(path: Path, content: str = "") -> bool:
    """Make ``path`` owner-only (0600) with ``content`` if it is missing (its directory too);
    False when it was there already (left as it is)."""
    make_private_dir(path.parent)
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        return False
    with os.fdopen(descriptor, "w") as handle:
        os.fchmod(handle.fileno(), PRIVATE_FILE_MODE)  # whatever the umask
        handle.write(content)
    return True


def prepare_sqlite(database_url: str) -> None:
    """Before SQLite opens a database file, make it (and its directory) owner-only if it is
    missing: SQLite would make it with the process's umask (0644), and its ``-wal`` and
    ``-shm`` files after it. A directory that cannot be made is left for SQLite to report
    when it connects (the database is then unreachable, not the server broken)."""
    path = sqlite_file(database_url)
    if path is not None:
        with contextlib.suppress(OSError):
            make_private_file(path)


def older_database_left_behind(database_url: str, data_dir: Path) -> str | None:
    """What to tell an operator who starts this version where an older one kept its
    database (``./stud.db``, its key beside it) while this one's default is not made yet:
    the server would otherwise start on a new, empty database without a word."""
    older = Path(OLDER_DATABASE_FILE)
    if database_url != default_database_url(data_dir) or (data_dir / DATABASE_FILE).exists():
        return None
    if not older.is_file():
        return None
    return (
        f"{older} is an older version's database: the database is now {data_dir / DATABASE_FILE} "
        f"(STUD_DATA_DIR). To keep playing on the old one, stop the server and move {older} and "
        f"{older}.deck-key into {data_dir}/ (or set DATABASE_URL=sqlite:///{older})"
    )


def open_to_others(path: Path) -> int | None:
    """The mode of ``path`` when its group or other users may use it (read, write or run),
    else None."""
    mode = stat.S_IMODE(path.stat().st_mode)
    return mode if mode & 0o077 else None


__all__ = [
    "DEFAULT_DATA_DIR",
    "default_database_url",
    "make_private_dir",
    "make_private_file",
    "older_database_left_behind",
    "open_to_others",
    "prepare_sqlite",
    "sqlite_file",
]
