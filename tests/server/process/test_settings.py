from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, SecretStr

from server.cardroom.takeover import table_settings
from server.db.models import TableRecord
from server.settings import (
    DEFAULT_DATABASE_URL,
    Accounts,
    Database,
    DeckKeys,
    Limits,
    Node,
    Operations,
    PasswordHashing,
    Settings,
    Websockets,
)
from server.table.ports import TABLE_DEFAULTS, TableDefaults, TableSettings

ROOT = Path(__file__).resolve().parents[3]

# Every setting under the name operators' deployments give it (STUD_<NAME>, the keyword):
# the environment's text, the value it gives, and the default. None of these may change.
NAMES: dict[str, tuple[str, Any, Any]] = {
    "host": ("0.0.0.0", "0.0.0.0", "127.0.0.1"),
    "port": ("9001", 9001, 8000),
    "node_id": ("node-7", "node-7", None),  # default: the host's name and the process id
    "redis_url": ("redis://cache:6379/0", "redis://cache:6379/0", None),
    "lease_seconds": ("2.5", 2.5, 5.0),
    "workers": ("4", 4, 1),
    "worker_watchdog_seconds": ("30", 30.0, 10.0),
    "collector_thaw_seconds": ("600", 600.0, 60.0),
    "demo": ("true", True, False),
    "demo_think_seconds": ("0.5", 0.5, 1.2),
    "action_clock_seconds": ("20", 20.0, 15.0),
    "time_bank_seconds": ("45", 45.0, 30.0),
    "pause_between_hands_seconds": ("0", 0.0, 2.0),
    "showdown_pause_seconds": ("8", 8.0, 5.0),
    "waiting_offer_seconds": ("10", 10.0, 30.0),
    "sit_out_limit_seconds": ("120", 120.0, 600.0),
    "data_dir": ("/var/lib/stud", Path("/var/lib/stud"), Path("stud-data")),
    "database_url": (
        "postgres://u:p@db/stud",
        "postgresql+asyncpg://u:p@db/stud",
        "sqlite+aiosqlite:///stud-data/stud.db",
    ),
    "db_timeout_seconds": ("2", 2.0, 5.0),
    "db_pool_size": ("20", 20, 10),
    "db_pool_overflow": ("0", 0, 10),
    "deck_key": ("a2V5", "a2V5", None),
    "deck_key_file": ("/run/secrets/deck_key", "/run/secrets/deck_key", None),
    "deck_old_keys": ('["old-1", "old-2"]', ["old-1", "old-2"], []),
    "publish_deck_after_seconds": ("3600", 3600.0, None),
    "starting_bankroll": ("500", 500, 10_000),
    "token_ttl_seconds": ("3600", 3600, 86_400),
    "session_check_seconds": ("1.5", 1.5, 5.0),
    "password_time_cost": ("1", 1, 3),
    "password_memory_kib": ("1024", 1024, 65_536),
    "password_parallelism": ("1", 1, 4),
    "password_hash_threads": ("8", 8, 2),
    "password_hash_queue": ("0", 0, 16),
    "login_failures_per_address_per_minute": ("100", 100, 20),
    "register_per_address_per_minute": ("1000", 1000, 5),
    "login_free_failures": ("5", 5, 3),
    "login_failure_delay_seconds": ("0.5", 0.5, 1.0),
    "login_failure_delay_max_seconds": ("60", 60.0, 300.0),
    "starting_grants_per_address": ("1000", 1000, 3),
    "starting_grant_window_seconds": ("3600", 3600.0, 86_400.0),
    "ws_actions_per_second": ("10", 10.0, 50.0),
    "ws_actions_burst": ("20", 20, 100),
    "ws_chat_per_second": ("2", 2.0, 1.0),
    "ws_chat_burst": ("3", 3, 5),
    "ws_other_per_second": ("8", 8.0, 5.0),
    "ws_other_burst": ("30", 30, 20),
    "ws_rate_strikes": ("3", 3, 10),
    "spectator_snapshots_per_second": ("50", 50.0, 200.0),
    "spectator_snapshots_burst": ("60", 60, 400),
    "ws_sockets_per_address": ("1000", 1000, 50),
    "ws_sockets_per_account": ("2", 2, 8),
    "http_body_max_bytes": ("4096", 4096, 16_384),
    "http_requests_per_turn": ("4", 4, 1),
    "ws_anonymous_frames_per_turn": ("8", 8, 2),
    "overload_lag_seconds": ("0", 0.0, 0.25),
    "ws_idle_seconds": ("30", 30.0, 60.0),
    "ws_compression": ("true", True, False),
    "ws_allowed_origins": (
        '["https://play.example.com"]',
        ["https://play.example.com"],
        [],
    ),
    "log_format": ("json", "json", "text"),
    "metrics_public": ("false", False, True),
    "stuck_after_seconds": ("120", 120.0, 60.0),
    "stall_watch_ms": ("30", 30.0, 0.0),
}
# The groups, under the names Settings gives them (``settings.<group>``).
GROUPS: dict[str, type[BaseModel]] = {
    "node": Node,
    "tables": TableDefaults,
    "database": Database,
    "deck_keys": DeckKeys,
    "accounts": Accounts,
    "password_hashing": PasswordHashing,
    "limits": Limits,
    "websockets": Websockets,
    "operations": Operations,
}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DATABASE_URL", "REDIS_URL", *(f"STUD_{name.upper()}" for name in NAMES)):
        monkeypatch.delenv(name, raising=False)


def plain(value: Any) -> Any:
    """A setting's value as compared here: a secret's text, the type of a number kept."""
    if isinstance(value, SecretStr):
        return value.get_secret_value()
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (type(value), value)
    return value


def group_of(name: str) -> str:
    (group,) = (group for group, model in GROUPS.items() if name in model.model_fields)
    return group


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


def test_every_setting_keeps_its_name_and_its_default() -> None:
    assert set(Settings.model_fields) == set(NAMES)
    settings = Settings()
    for name, (_, _, default) in NAMES.items():
        if name != "node_id":
            assert plain(getattr(settings, name)) == plain(default), name
    assert settings.node_id


def test_every_environment_variable_lands_where_it_did(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, (text, _, _) in NAMES.items():
        monkeypatch.setenv(f"STUD_{name.upper()}", text)
    settings = Settings()
    for name, (_, value, _) in NAMES.items():
        assert plain(getattr(settings, name)) == plain(value), name
        # ...and in its group, the same.
        assert plain(getattr(getattr(settings, group_of(name)), name)) == plain(value), name


def test_every_keyword_lands_where_it_did() -> None:
    given = {name: value for name, (_, value, _) in NAMES.items()}
    given["database_url"] = "postgres://u:p@db/stud"
    settings = Settings(**given)
    for name, (_, value, _) in NAMES.items():
        assert plain(getattr(settings, name)) == plain(value), name
        assert plain(getattr(getattr(settings, group_of(name)), name)) == plain(value), name
    for name, (_, value, _) in NAMES.items():  # one at a time, and by model_copy
        copy = Settings().model_copy(update={name: value})
        assert plain(getattr(getattr(copy, group_of(name)), name)) == plain(value), name
        if name != "database_url":  # given as it is here: the driver named as given
            alone = Settings(**{name: value})
            assert plain(getattr(alone, name)) == plain(value), name


def test_the_groups_hold_every_setting_once_and_are_frozen() -> None:
    names = [name for model in GROUPS.values() for name in model.model_fields]
    assert sorted(names) == sorted(NAMES)
    settings = Settings(action_clock_seconds=20)
    for group in GROUPS:
        view = getattr(settings, group)
        assert isinstance(view, GROUPS[group])
    with pytest.raises(ValueError, match="frozen"):
        settings.tables.action_clock_seconds = 3  # type: ignore[misc]
    settings.action_clock_seconds = 30  # the settings themselves are not frozen
    assert settings.tables.action_clock_seconds == 30


def test_the_settings_reference_lists_every_setting_in_its_group() -> None:
    """docs/operators.md, "Settings": a row a group, naming each of its settings."""
    guide = (ROOT / "docs" / "operators.md").read_text()
    section = guide.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)`[^|]* \| ([^|]+) \|", section, flags=re.MULTILINE)
    documented = {group: set(re.findall(r"`(\w+)`", names)) for group, names in rows}
    assert documented == {group: set(model.model_fields) for group, model in GROUPS.items()}


def test_the_tables_defaults_have_one_source() -> None:
    """A bare TableSettings and a node's settings take the same defaults (TableDefaults), but
    for the showdown pause: 0 (the pause between hands) for a table on its own."""
    bare = TableSettings()
    assert (
        bare.action_clock,
        bare.time_bank,
        bare.pause_between_hands,
        bare.waiting_offer,
        bare.sit_out_limit,
    ) == (
        TABLE_DEFAULTS.action_clock_seconds,
        TABLE_DEFAULTS.time_bank_seconds,
        TABLE_DEFAULTS.pause_between_hands_seconds,
        TABLE_DEFAULTS.waiting_offer_seconds,
        TABLE_DEFAULTS.sit_out_limit_seconds,
    )
    assert bare.showdown_pause == 0.0
    assert Settings().tables == TABLE_DEFAULTS
    for name, field in TableDefaults.model_fields.items():
        assert Settings.model_fields[name].default == field.default, name
    record = TableRecord(
        name="t", variant="razz", config={}, seats=8, min_buy_in=20, max_buy_in=500,
        spectator_chat=False, time_fee=0, time_fee_period=1800.0,
        action_clock=None, time_bank=12.0, showdown_pause=None,
    )  # fmt: skip
    node = Settings(
        action_clock_seconds=20, pause_between_hands_seconds=1, showdown_pause_seconds=4,
        waiting_offer_seconds=9, sit_out_limit_seconds=99,
    )  # fmt: skip
    played = table_settings(node, record)
    assert (played.action_clock, played.time_bank, played.pause_between_hands) == (20, 12, 1)
    assert (played.showdown_pause, played.waiting_offer, played.sit_out_limit) == (4, 9, 99)
