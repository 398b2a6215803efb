"""The write-ahead's pause while the database is away is told whole, and the lease round's
failures name their error in the log."""

from __future__ import annotations

import asyncio
import doctest
import logging

import pytest

from server import logs
from server.cardroom.lease_rounds import LeaseRounds
from server.store.records import StoreUnavailable
from server.table.journal import Journal


async def test_a_pause_is_told_from_the_start_of_the_write_that_waited() -> None:
    """A frozen database makes a write wait its whole timeout before it fails: the pause
    began when that write did, not when it gave up."""
    now = [0.0]
    paused: list[str] = []
    resumed: list[float] = []
    tries = 0

    async def write() -> None:
        nonlocal tries
        tries += 1
        if tries == 1:
            now[0] += 5.0  # the statement's timeout, spent waiting
            raise StoreUnavailable("timed out")
        if tries == 2:
            now[0] += 3.0
            raise StoreUnavailable("timed out")
        now[0] += 0.01

    journal = Journal(
        store=None,  # type: ignore[arg-type]
        table_id=1,
        clock=lambda: now[0],
        on_pause=lambda: paused.append("paused"),
        on_resume=resumed.append,
    )
    await journal.persist("record_action", write)
    assert paused == ["paused"]
    assert resumed == [pytest.approx(8.01)]


async def test_a_lease_round_that_fails_names_its_error(caplog: pytest.LogCaptureFixture) -> None:
    async def renew_leases() -> None:
        raise TimeoutError  # what a Redis that does not answer raises: no message

    with caplog.at_level(logging.WARNING):
        assert not await LeaseRounds._attempt(renew_leases)
    assert "lease round failed at renew_leases (TimeoutError)" in caplog.text


def test_an_error_is_named_by_its_type_and_message() -> None:
    assert doctest.testmod(logs).failed == 0
    assert logs.named(asyncio.CancelledError()) == "CancelledError"
