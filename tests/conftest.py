"""Every test's server seals its decks with one known key (``STUD_DECK_KEY``), as nodes sharing
a PostgreSQL database must: a server on PostgreSQL refuses to start without one
(server/store/deck_seal.py). Tests of the key's own handling unset it.

Their tables deal again right after a showdown (``STUD_SHOWDOWN_PAUSE_SECONDS`` 0, the pause
between hands alone), as quickly as the tests set that pause; the showdown pause's own tests
set one."""

from __future__ import annotations

import os

TEST_DECK_KEY = "c3R1ZC10ZXN0cy1kZWNrLWtleS0zMi1ieXRlcyEhISE="
os.environ.setdefault("STUD_DECK_KEY", TEST_DECK_KEY)
os.environ.setdefault("STUD_SHOWDOWN_PAUSE_SECONDS", "0")
