"""The hand in progress sealed at rest: what the database keeps of its deck is encrypted.

A ``live_hands`` row holds what it takes to deal the hand again (its server seed and client
seeds, or a stacked deck's order): read in the clear, it would tell every player's cards
before they are dealt. It is written sealed with AES-256-GCM under a key that is not in the
database, bound to its table and hand number (the associated data), so a sealed deck cannot
be moved to another row either.

The key comes from ``STUD_DECK_KEY`` (32 bytes, base64 or hex) or the file
``STUD_DECK_KEY_FILE`` names: in production, a secret handed to the process, not a file on
the database's disk. With neither, the embedded SQLite default keeps a key file in its data
directory, beside its database file (``<database>.deck-key``, made on first start, owner-only:
mode 0600; server/db/data_dir.py); an in-memory database gets a key for the life of the process.
A key file that other users may read is used, with a warning at start. PostgreSQL refuses to
start without a key: nodes sharing a database must share the key, and no node may make its
own. ``STUD_DECK_OLD_KEYS`` lists keys that are only read (rotation: docs/operators.md).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from sqlalchemy.engine import make_url

from engine import fair2
from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.db.data_dir import make_private_file, open_to_others, sqlite_file
from server.db.models import HandRecord

KEY_BYTES = 32
NONCE_BYTES = 12
KEY_FILE_SUFFIX = ".deck-key"

log = logging.getLogger(__name__)
_warned: set[str] = set()  # the key files this process has warned about


class DeckKeyError(Exception):
    """No usable deck key: the server does not start (the message says what to set)."""


class SealBroken(Exception):
    """A sealed deck that no known key opens, or that was altered."""


def parse_key(text: str) -> bytes:
    """A key as written in a setting or a key file: 32 bytes in base64 (standard or URL-safe)
    or in hex."""
    text = text.strip()
    if len(text) == 2 * KEY_BYTES:
        try:
            return bytes.fromhex(text)
        except ValueError:
            pass
    try:
        key = base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise DeckKeyError(f"a deck key is {KEY_BYTES} bytes, written in base64 or hex")
    return key


def new_key_text() -> str:
    """A fresh key, as a key file or ``STUD_DECK_KEY`` holds it (base64)."""
    return base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode()


def key_id(key: bytes) -> str:
    """A short name of a key, stored with what it sealed (not the key: a hash of it)."""
    return hashlib.sha256(b"stud-deck-key\n" + key).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class DeckSeal:
    """Seals with ``key``; opens what ``key`` or any of ``old_keys`` sealed."""

    key: bytes
    old_keys: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        for key in (self.key, *self.old_keys):
            if len(key) != KEY_BYTES:
                raise DeckKeyError(f"a deck key is {KEY_BYTES} bytes")

    @classmethod
    def generate(cls) -> DeckSeal:
        """A seal with a fresh key (an in-memory database; tests)."""
        return cls(secrets.token_bytes(KEY_BYTES))

    def seal(self, record: dict[str, Any], *, table_id: int, number: int) -> dict[str, Any]:
        """``record`` encrypted for the row of hand ``number`` of table ``table_id``."""
        return self.seal_bound(record, _bound_to(table_id, number))

    def seal_bound(self, record: dict[str, Any], bound: bytes) -> dict[str, Any]:
        """``record`` encrypted and bound to ``bound``, the identity of the row it is for (a
        sealed value copied into another row does not open there)."""
        nonce = secrets.token_bytes(NONCE_BYTES)
        plain = json.dumps(record, separators=(",", ":")).encode()
        sealed = AESGCM(self.key).encrypt(nonce, plain, bound)
        return {"key": key_id(self.key), "sealed": base64.b64encode(nonce + sealed).decode()}

    def open(self, stored: dict[str, Any], *, table_id: int, number: int) -> dict[str, Any]:
        """The record ``seal`` made for that row. A row written before decks were sealed
        (no ``sealed``) is read as it is."""
        if "sealed" not in stored:
            return dict(stored)
        return self.open_bound(stored, _bound_to(table_id, number))

    def open_bound(self, stored: dict[str, Any], bound: bytes) -> dict[str, Any]:
        """The record :meth:`seal_bound` sealed for ``bound``."""
        keys = {key_id(key): key for key in (*self.old_keys, self.key)}
        key = keys.get(str(stored.get("key")))
        if key is None:
            raise SealBroken(f"no deck key {stored.get('key')!r} is configured")
        try:
            raw = base64.b64decode(str(stored["sealed"]), validate=True)
            plain = AESGCM(key).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], bound)
        except (binascii.Error, ValueError, InvalidTag) as error:
            raise SealBroken("the sealed record does not open with its key") from error
        record: dict[str, Any] = json.loads(plain)
        return record


def _bound_to(table_id: int, number: int) -> bytes:
    return f"stud-live-hand\ntable={table_id}\nhand={number}\n".encode()


def load_seal(
    database_url: str,
    *,
    key: str | None = None,
    key_file: str | None = None,
    old_keys: list[str] | None = None,
) -> DeckSeal:
    """The seal a server runs with (see the module's docstring for where its key comes from);
    :class:`DeckKeyError` when there is none it may use."""
    old = tuple(parse_key(text) for text in old_keys or ())
    if key:
        return DeckSeal(parse_key(key), old)
    if key_file:
        return DeckSeal(read_key_file(Path(key_file)), old)
    if make_url(database_url).get_backend_name() != "sqlite":
        raise DeckKeyError(
            "a database other than the embedded SQLite needs a deck key that is not in it: "
            "set STUD_DECK_KEY (32 bytes in base64; every node the same) or STUD_DECK_KEY_FILE"
        )
    path = sqlite_file(database_url)
    if path is None:
        return DeckSeal.generate()  # the database lives as long as the process: so may its key
    return DeckSeal(read_or_make_key_file(path.with_name(path.name + KEY_FILE_SUFFIX)), old)


def read_or_make_key_file(path: Path) -> bytes:
    """The key kept in ``path``, made there first (owner-only, its directory too) if there is
    none."""
    try:
        make_private_file(path, new_key_text() + "\n")
    except OSError as error:
        raise DeckKeyError(f"cannot make the deck key file {path}: {error}") from None
    return read_key_file(path)


def read_key_file(path: Path) -> bytes:
    """The key a key file holds; a warning (once a process) when other users may read it."""
    try:
        text = path.read_text()
        mode = open_to_others(path)
    except OSError as error:
        raise DeckKeyError(f"cannot read the deck key file {path}: {error}") from None
    key = parse_key(text)
    if mode is not None and str(path) not in _warned:
        _warned.add(str(path))
        log.warning(
            "the deck key file %s is open to other users (mode %03o): whoever reads it and the "
            "database sees the cards of the hands in play; make it the server's alone "
            "(chmod 600) or hand the key over as a secret (docs/operators.md, 'The deck key')",
            path,
            mode,
        )
    return key


__all__ = [
    "DeckKeyError",
    "DeckSeal",
    "SealBroken",
    "key_id",
    "load_seal",
    "new_key_text",
    "parse_key",
    "read_key_file",
    "read_or_make_key_file",
]


class NoDeck(Refusal):
    code = ErrorCode.NO_DECK


def full_opening(hand: HandRecord, seal: DeckSeal) -> dict[str, Any]:
    """The whole deck of a stud-deck/2 hand, opened from its sealed seeds: every position's
    card, salt and path to the commitment, the server seed, the deal order (docs/fairness.md).
    :class:`NoDeck` for a hand that kept none (stud-deck/1: its seed is in its events; a
    stacked deck; a hand recorded before decks were kept)."""
    stored = hand.deck
    try:
        record = (
            seal.open(dict(stored), table_id=hand.table_id, number=hand.number)
            if stored is not None
            else None
        )
    except SealBroken as error:
        raise NoDeck(f"the deck of hand {hand.id} does not open: {error}") from None
    if record is None or record.get("method") != fair2.METHOD:
        raise NoDeck(f"hand {hand.id} kept no stud-deck/2 deck to open")
    deal = fair2.Deal2.from_record(record, table_id=hand.table_id, number=hand.number)
    positions, _ = fair2.deal_order(deal.commitment, hand.table_id, hand.number, deal.client_seeds)
    return {
        "id": hand.id,
        "table_id": hand.table_id,
        "number": hand.number,
        "method": fair2.METHOD,
        "commitment": deal.commitment,
        "server_seed": deal.server_seed.hex(),
        "client_seeds": [{"seat": seat, "seed": seed} for seat, seed in deal.client_seeds],
        "deal_order": positions,
        "positions": [opening.encode() for opening in deal.committed.openings()],
    }
