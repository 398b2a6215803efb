from __future__ import annotations

from pathlib import Path

import pytest

from server.settings import DEFAULT_DATABASE_URL, Settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (
        *("DATABASE_URL", "REDIS_URL", "STUD_DATABASE_URL", "STUD_REDIS_URL", "STUD_PORT"),
        "STUD_DATA_DIR",
    ):
        monkeypatch.delenv(name, raising=False)


def test_defaults_run_one_process_on_sqlite() -> None:
    settings = Settings()
    # SQLite in the data directory (server/db/data_dir.py), under the working directory.
    assert settings.data_dir == Path("stud-data")
    assert settings.database_url == DEFAULT_DATABASE_URL == "sqlite+aiosqlite:///stud-data/stud.db"
    assert settings.redis_url is None
    assert settings.action_clock_seconds == 15
    assert settings.time_bank_seconds == 30
    assert settings.starting_bankroll > 0 and settings.node_id


def test_prefixed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STUD_PORT", "9001")
    monkeypatch.setenv("STUD_STARTING_BANKROLL", "500")
    settings = Settings()
    assert (settings.port, settings.starting_bankroll) == (9001, 500)


def test_plain_database_and_redis_urls_are_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db:5432/stud")
    monkeypatch.setenv("REDIS_URL", "redis://cache:6379/0")
    settings = Settings()
    assert settings.database_url == "postgresql+asyncpg://u:p@db:5432/stud"
    assert settings.redis_url == "redis://cache:6379/0"


def test_prefixed_url_wins_and_arguments_win_over_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "sqlite:///plain.db")
    monkeypatch.setenv("STUD_DATABASE_URL", "sqlite:///prefixed.db")
    assert Settings().database_url == "sqlite+aiosqlite:///prefixed.db"
    assert Settings(database_url="sqlite:///given.db").database_url == (
        "sqlite+aiosqlite:///given.db"
    )
