"""The announcer's events, from a tournament's facts and clock alone (no database, no bus
but the memory one): the start tells each player their seat; the clock's levels and breaks
come once each, in order, with the next level and when it comes; a director that takes over
derives the same events under the same keys; hand for hand is said when it turns on."""

from __future__ import annotations

import dataclasses
from typing import Any

from engine.tournament.offers import DealMade, DealOffer, DealOffered, DealShare, DealWithdrawn
from engine.tournament.run import TournamentRun
from engine.tournament.templates import TEMPLATES
from server.bus.memory import MemoryBus, player_tournaments_channel, tournament_channel
from server.tournaments.announcer import Announcer, clock_notices, fact_notices

SEED = bytes(range(32))
START = 1_000_000.0


def mtt(players: int) -> tuple[TournamentRun, list[str], dict[int, int]]:
    """The shipped scheduled format (levels of 20 minutes, a 5-minute break after the
    third), started with ``players`` on tables of 8; table ids 100 + number."""
    spec = dataclasses.replace(TEMPLATES["stud-mtt-regular"], min_entrants=2)
    run = TournamentRun(spec, tournament_id=9, seed=SEED, prize_pool=players * spec.buy_in)
    names = [f"p{n:02}" for n in range(players)]
    run.start(names, START)
    return run, names, {number: 100 + number for number in run.tables}


def test_the_start_tells_everyone_the_level_and_each_player_their_seat() -> None:
    run, names, ids = mtt(12)
    spec = run.spec
    orders = TournamentRun(spec, tournament_id=9, seed=SEED, prize_pool=12 * spec.buy_in).start(
        names, START
    )
    notices = fact_notices(run, ids, seq=1, kind="started", orders=orders, at=START)
    (started,) = [n for n in notices if n.kind == "started"]
    assert started.to == (None, *names)
    assert started.data["players_left"] == 12 and started.data["tables"] == 2
    assert started.data["average_stack"] == spec.structure.starting_chips
    assert started.data["level"] == {
        "number": 1,
        "ante": 10,
        "bring_in": 20,
        "small_bet": 60,
        "big_bet": 120,
    }
    assert started.data["next_level"]["number"] == 2 and started.data["seconds_left"] == 1200
    assert started.data["ends_at"] == START + 1200
    seated = {n.to[0]: n.data for n in notices if n.kind == "seated"}
    assert set(seated) == set(names)
    for number, table in run.tables.items():
        for seat, player in table.seats.items():
            assert seated[player] == {
                "table": 100 + number,
                "table_number": number,
                "seat": seat,
                "stack": spec.structure.starting_chips,
            }
    # The same fact derived again (a director that took over): the same events, the same keys.
    again = fact_notices(run, ids, seq=1, kind="started", orders=orders, at=START)
    assert again == notices
    assert len({n.key for n in notices}) == len(notices)


def test_levels_and_the_break_come_once_each_in_order() -> None:
    run, _, _ = mtt(9)
    assert run.clock is not None
    entries = run.spec.structure.entries
    heard: list[tuple[str, Any, Any]] = []
    entry: int | None = 0
    for minute in range(0, 100):
        reading = run.clock.read(START + minute * 60 + 1)
        for notice in clock_notices(entry, reading, entries):
            level = notice.data["level"]
            heard.append((notice.kind, level and level["number"], notice.data["seconds_left"]))
        entry = reading.entry_index
    assert heard == [
        ("level_up", 2, 1199.0),
        ("level_up", 3, 1199.0),
        ("break", None, 299.0),
        ("break_over", 4, 1199.0),
        ("level_up", 4, 1199.0),
        ("level_up", 5, 1199.0),  # 85 minutes in: three levels, the break, a level
    ]
    # A director that takes over during the break says the break again (the same key).
    reading = run.clock.read(START + 61 * 60)
    (again,) = clock_notices(None, reading, entries)
    assert (again.kind, again.key) == ("break", "break:3")
    # During the break: the level to come, and its start.
    assert again.data["next_level"]["number"] == 4
    assert again.data["ends_at"] == START + 65 * 60


async def test_the_announcer_publishes_on_the_tournament_and_the_players_channels() -> None:
    run, names, ids = mtt(3)
    bus = MemoryBus()
    everyone = bus.subscribe(tournament_channel(9))
    mine = bus.subscribe(player_tournaments_channel(names[0]))
    other = bus.subscribe(player_tournaments_channel(names[1]))
    announcer = Announcer(bus, 9)
    orders = TournamentRun(run.spec, tournament_id=9, seed=SEED, prize_pool=run.prize_pool).start(
        names, START
    )
    await announcer.tell(announcer.told(run, ids, seq=1, kind="started", orders=orders, at=START))
    # Twenty minutes on: the next level, said once however often the director looks.
    await announcer.clock(run, seq=1, at=START + 1201)
    await announcer.clock(run, seq=1, at=START + 1202)
    public = [m["kind"] for m in drain(everyone)]
    assert public == ["started", "level_up"]
    own = drain(mine)
    assert [m["kind"] for m in own] == ["started", "seated"]
    assert all(m["type"] == "tournament_event" and m["tournament"] == 9 for m in own)
    assert own[0]["key"] == drain_keys(other)[0]  # one event, one key, whoever hears it
    # Hand for hand, once it turns on.
    run.hand_for_hand = True
    await announcer.tell(announcer.told(run, ids, seq=2, kind="hand", orders=[], at=START + 1300))
    (switch,) = drain(everyone)
    assert switch["kind"] == "hand_for_hand" and switch["data"]["on"] is True
    assert switch["fact"] == 2


def drain(subscription: Any) -> list[dict[str, Any]]:
    found = []
    while not subscription.queue.empty():
        found.append(subscription.queue.get_nowait())
    return found


def drain_keys(subscription: Any) -> list[str]:
    return [m["key"] for m in drain(subscription)]


def test_a_deal_offered_made_or_withdrawn_is_told_to_the_players_left_and_followers() -> None:
    run, names, ids = mtt(3)
    offer = DealOffer(
        number=1,
        method="icm",
        played_for=0,
        proposer=names[0],
        prizes=(500, 300, 200),
        shares=tuple(
            DealShare(name, 10_000, amount)
            for name, amount in zip(names, (384, 327, 289), strict=True)
        ),
        shown_at=START,
        expires_at=START + 60,
    )
    notices = fact_notices(
        run, ids, seq=7, kind="deal_proposed", orders=[DealOffered(offer)], at=START
    )
    (offered,) = notices
    assert offered.kind == "deal_offered" and offered.to == (None, *names)
    assert [s["amount"] for s in offered.data["shares"]] == [384, 327, 289]
    assert offered.data["expires_at"] == START + 60
    made = fact_notices(run, ids, seq=9, kind="deal_accepted", orders=[DealMade(offer)], at=START)
    assert [n.kind for n in made] == ["deal_made"]
    withdrawn = fact_notices(
        run,
        ids,
        seq=8,
        kind="deal_declined",
        orders=[DealWithdrawn(1, "declined", names[1])],
        at=START,
    )
    assert [(n.kind, n.data) for n in withdrawn] == [
        ("deal_withdrawn", {"number": 1, "reason": "declined", "player": names[1]})
    ]


def test_an_operators_move_and_disqualification_are_told() -> None:
    """A player moved between hands hears where to go; a disqualified player (and whoever
    follows) hears they are out, with the chips that left play."""
    run, names, ids = mtt(12)
    run.pause(START + 10)  # every table between hands: the requests are carried out at once
    for number in list(run.tables):
        run.tables[number].allowed = False
    source, target = sorted(run.tables)
    mover = next(iter(run.tables[source].seats.values()))
    orders = run.move(mover, target, None, START + 20)
    notices = fact_notices(run, ids, seq=5, kind="moved", orders=orders, at=START + 20)
    (moved,) = notices
    assert moved.kind == "moved" and moved.to == (mover,)
    assert moved.data["from_table"] == 100 + source and moved.data["table"] == 100 + target
    cheat = next(iter(run.tables[target].seats.values()))
    orders = run.disqualify(cheat, START + 30)
    notices = fact_notices(run, ids, seq=6, kind="disqualified", orders=orders, at=START + 30)
    (out,) = [n for n in notices if n.kind == "disqualified"]
    assert out.to == (None, cheat)
    assert out.data["player"] == cheat
    assert out.data["chips_removed"] == run.spec.structure.starting_chips
    assert out.data["players_left"] == 11
