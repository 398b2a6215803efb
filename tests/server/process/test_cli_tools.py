"""The ``stud-server`` commands as an operator types them: the global options after the
command's name as well as before it, one line out of ``create-operator``, and an ``audit``
of a database that is not there refused without making one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from server_helpers import FAST_HASHING, PASSWORD


@pytest.fixture
def stud_server(tmp_path: Path) -> list[str]:
    found = shutil.which("stud-server", path=str(Path(sys.executable).parent))
    assert found, "stud-server is not installed: pip install -e '.[dev]'"
    return [found]


def run(command: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("STUD_")}
    env.pop("DATABASE_URL", None)
    env.update({f"STUD_{key.upper()}": str(value) for key, value in FAST_HASHING.items()})
    return subprocess.run(
        command, input=stdin, env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_global_options_go_after_the_command_too(
    stud_server: list[str], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'room.db'}"
    made = run(
        [*stud_server, "create-operator", "boss", "--password-stdin", "--database-url", url],
        tmp_path,
        stdin=f"{PASSWORD}\n",
    )
    assert made.returncode == 0, made.stderr
    assert (made.stdout, made.stderr) == ("operator boss created\n", "")
    audited = run([*stud_server, "audit", "--database-url", url], tmp_path)
    assert audited.returncode == 0, audited.stderr
    assert audited.stdout.startswith("the books balance"), audited.stdout
    assert audited.stderr == ""
    # After the command's name, an option wins over the same one given before it.
    elsewhere = f"sqlite:///{tmp_path / 'elsewhere.db'}"
    again = run(
        [*stud_server, "--database-url", elsewhere, "create-operator", "boss"]
        + ["--database-url", url],
        tmp_path,
    )
    assert again.stdout == "boss is already an operator\n", again.stderr
    assert not (tmp_path / "elsewhere.db").exists()
    migrated = run(
        [*stud_server, "migrate", "--database-url", url, "--log-level", "warning"], tmp_path
    )
    assert migrated.returncode == 0 and migrated.stdout.startswith("database at "), migrated


def test_an_audit_of_a_database_that_is_not_there_makes_none(
    stud_server: list[str], tmp_path: Path
) -> None:
    missing = tmp_path / "typo.db"
    refused = run([*stud_server, "audit", "--database-url", f"sqlite:///{missing}"], tmp_path)
    assert refused.returncode == 2, refused
    assert f"cannot audit: there is no database at {missing}" in refused.stderr
    assert not missing.exists()
    # In a directory of nothing, the default (the data directory's database): nothing made.
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = run([*stud_server, "audit"], empty)
    assert refused.returncode == 2 and "there is no database at" in refused.stderr, refused
    assert list(empty.iterdir()) == []
