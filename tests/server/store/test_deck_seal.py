"""The deck key: where it comes from, the key file the embedded default makes, the refusal to
start on PostgreSQL without one, and what a sealed deck is bound to."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from server import cli
from server.settings import Settings
from server.store.deck_seal import (
    DeckKeyError,
    DeckSeal,
    SealBroken,
    load_seal,
    new_key_text,
    parse_key,
)

POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432/stud_nowhere"


@pytest.fixture(autouse=True)
def no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("STUD_DECK_KEY", "STUD_DECK_KEY_FILE", "STUD_DECK_OLD_KEYS"):
        monkeypatch.delenv(name, raising=False)


def test_the_embedded_default_makes_an_owner_only_key_file_beside_its_database(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cardroom.db'}"
    first = Settings(database_url=url).deck_seal()
    key_file = tmp_path / "cardroom.db.deck-key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert parse_key(key_file.read_text()) == first.key
    assert Settings(database_url=url).deck_seal().key == first.key  # kept, not made again


def test_an_in_memory_database_gets_a_key_for_the_process(tmp_path: Path) -> None:
    seal = load_seal("sqlite+aiosqlite://")
    assert len(seal.key) == 32 and not list(tmp_path.iterdir())


def test_postgresql_without_a_key_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(DeckKeyError, match="STUD_DECK_KEY"):
        Settings(database_url=POSTGRES).deck_seal()
    with pytest.raises(SystemExit) as stopped:
        cli.main(["--database-url", POSTGRES, "serve"])
    assert "refused to start" in str(stopped.value) and "STUD_DECK_KEY" in str(stopped.value)


def test_a_key_from_the_setting_or_a_file_and_old_keys_for_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = new_key_text(), new_key_text()
    monkeypatch.setenv("STUD_DECK_KEY", new)
    monkeypatch.setenv("STUD_DECK_OLD_KEYS", f'["{old}"]')
    seal = Settings(database_url=POSTGRES).deck_seal()
    assert seal.key == parse_key(new) and seal.old_keys == (parse_key(old),)
    sealed_before = DeckSeal(parse_key(old)).seal({"order": [1, 2]}, table_id=1, number=2)
    assert seal.open(sealed_before, table_id=1, number=2) == {"order": [1, 2]}
    key_file = tmp_path / "deck.key"
    key_file.write_text(new_key_text() + "\n")
    monkeypatch.delenv("STUD_DECK_KEY")
    monkeypatch.setenv("STUD_DECK_KEY_FILE", str(key_file))
    assert Settings(database_url=POSTGRES).deck_seal().key == parse_key(key_file.read_text())
    assert parse_key(bytes(range(32)).hex()) == bytes(range(32))


@pytest.mark.parametrize("text", ["", "short", "Z" * 64, new_key_text()[:-8]])
def test_a_malformed_key_is_refused(text: str) -> None:
    with pytest.raises(DeckKeyError, match="32 bytes"):
        load_seal(POSTGRES, key=text or "=")


def test_a_sealed_deck_opens_only_for_its_row_and_with_its_key() -> None:
    seal = DeckSeal.generate()
    record = {"server_seed": "ab" * 32, "client_seeds": [[0, "x"]]}
    sealed = seal.seal(record, table_id=3, number=9)
    assert set(sealed) == {"key", "sealed"} and "ab" * 32 not in str(sealed)
    assert seal.open(sealed, table_id=3, number=9) == record
    with pytest.raises(SealBroken):
        seal.open(sealed, table_id=3, number=10)  # moved to another hand's row
    with pytest.raises(SealBroken):
        DeckSeal.generate().open(sealed, table_id=3, number=9)
    flipped = dict(
        sealed,
        sealed=sealed["sealed"][:-6]
        + ("AAAA==" if sealed["sealed"][-6:] != "AAAA==" else "BBBB=="),
    )
    with pytest.raises(SealBroken):
        seal.open(flipped, table_id=3, number=9)
    # A row written before decks were sealed is read as it is.
    assert seal.open({"order": [1], "seed": None}, table_id=3, number=9) == {
        "order": [1],
        "seed": None,
    }
