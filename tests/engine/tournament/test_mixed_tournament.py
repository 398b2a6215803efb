"""Mixed tournaments: levels that name their games, read and written as JSON with the field at
fault, seats that fit every game, the structure sheet, and whole tournaments played through
``engine.tournament.run`` where every table deals each hand in the game of the level it was
told last, all switching at the same level change."""

from __future__ import annotations

import dataclasses
import json
import random
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_tournament_run import SEED, Model

from engine.rotation import Position
from engine.tournament.games import (
    LevelGame,
    level_game,
    level_position,
    rotated,
    sheet,
)
from engine.tournament.run import Deal, Order, Stakes, TournamentRun
from engine.tournament.spec import SpecError, TournamentSpec
from engine.tournament.structure import Break, Level, Structure, StructureError
from engine.tournament.templates import STUD_MIX, TEMPLATES
from engine.variants import VARIANTS

MIX = TEMPLATES["stud-mix-turbo"]


def mixed_spec(games: tuple[str, ...], levels: int = 4, hands: int = 3) -> TournamentSpec:
    ladder = [(5, 10, 30), (10, 20, 60), (20, 40, 120), (40, 80, 240), (80, 160, 480)]
    structure = Structure(
        1500, tuple(Level(a, b, s, 2 * s, hands=hands) for a, b, s in ladder[:levels])
    )
    return dataclasses.replace(
        MIX,
        kind="scheduled",
        structure=rotated(structure, games),
        seats_per_table=7,
        min_entrants=2,
        max_entrants=100,
        payout_table="scheduled",
    )


def test_a_level_names_its_game_in_json_and_back() -> None:
    data = {"kind": "level", "game": "razz", "ante": 5, "bring_in": 10, "small_bet": 30,
            "big_bet": 60, "minutes": 10}  # fmt: skip
    level = Level.from_dict(data)
    assert level.game == "razz" and level.to_dict() == data
    plain = Level(5, 10, 30, 60, minutes=10)
    assert "game" not in plain.to_dict() and Level.from_dict(plain.to_dict()) == plain


def test_the_mixed_template_round_trips_through_json() -> None:
    assert TournamentSpec.from_dict(json.loads(json.dumps(MIX.to_dict()))) == MIX
    assert MIX.mixed and MIX.games == STUD_MIX
    assert [MIX.game_of(level) for level in MIX.structure.levels[:4]] == [*STUD_MIX, STUD_MIX[0]]


def test_a_level_of_an_unknown_game_is_refused_with_its_field() -> None:
    data = MIX.to_dict()
    data["structure"]["entries"][2]["game"] = "omaha"
    with pytest.raises(SpecError) as refused:
        TournamentSpec.from_dict(data)
    assert refused.value.field == "structure.entries[2].game"
    assert refused.value.code == "bad_structure"
    with pytest.raises(StructureError) as refused_level:
        Level(5, 10, 30, 60, minutes=10, game="holdem")
    assert refused_level.value.field == "game"


def test_the_tables_seat_no_more_than_every_game_deals_to() -> None:
    data = MIX.to_dict()
    data["structure"]["entries"][3]["game"] = "eight_card_stud"  # seats at most 7
    with pytest.raises(SpecError) as refused:
        TournamentSpec.from_dict(data)
    assert refused.value.field == "seats_per_table"
    assert "eight_card_stud (level 4) seats at most 7" in str(refused.value)
    data["seats_per_table"] = 7
    assert TournamentSpec.from_dict(data).games == (*STUD_MIX, "eight_card_stud")


def test_a_level_whose_stakes_its_game_cannot_play_is_refused() -> None:
    data = MIX.to_dict()
    data["betting"] = "no_limit"
    data["structure"]["entries"][1]["small_bet"] = 0
    with pytest.raises(SpecError) as refused:
        TournamentSpec.from_dict(data)
    assert refused.value.field.startswith("structure.entries[1]")


def test_each_table_config_deals_the_game_of_its_level() -> None:
    configs = [MIX.table_config(level) for level in MIX.structure.levels[:3]]
    assert [c.variant.name for c in configs] == list(STUD_MIX)
    assert [c.small_bet for c in configs] == [30, 50, 75]
    single = TEMPLATES["stud-sng-9"]
    assert not single.mixed and single.games == ("seven_card_stud",)
    assert level_game(single, single.structure.levels[0]) is None


def test_the_structure_sheet_prints_level_game_and_stakes_with_the_breaks() -> None:
    structure = Structure(
        2000,
        (
            Level(5, 10, 30, 60, minutes=10, game="razz"),
            Break(minutes=5),
            Level(10, 15, 50, 100, minutes=10),
        ),
    )
    spec = dataclasses.replace(MIX, structure=structure)
    lines = [line.to_dict() for line in sheet(spec)]
    assert lines == [
        {"kind": "level", "level": 1, "game": "razz", "title": "Razz", "ante": 5, "bring_in": 10,
         "small_bet": 30, "big_bet": 60, "minutes": 10, "hands": None},
        {"kind": "break", "minutes": 5},
        {"kind": "level", "level": 2, "game": "seven_card_stud", "title": "Seven-Card Stud",
         "ante": 10, "bring_in": 15, "small_bet": 50, "big_bet": 100, "minutes": 10,
         "hands": None},
    ]  # fmt: skip


def test_a_table_is_told_the_level_its_game_and_the_next_levels() -> None:
    levels = MIX.structure.levels
    assert level_game(MIX, levels[0]) == LevelGame(1, "seven_card_stud", "razz")
    assert level_game(MIX, levels[2]) == LevelGame(3, "seven_card_stud_hi_lo", "seven_card_stud")
    last = len(levels)
    assert level_game(MIX, levels[-1]) == LevelGame(last, MIX.game_of(levels[-1]),
                                                    MIX.game_of(levels[-1]))  # fmt: skip
    told = level_game(MIX, levels[1])
    assert told is not None and LevelGame.from_dict(told.to_dict()) == told


def test_a_tables_hands_count_within_each_level() -> None:
    first = level_position(None, 2)
    assert first == Position(1, 1, 0, 2)
    assert level_position(level_position(first, 2), 2) == Position(1, 3, 0, 2)
    assert level_position(first, 3) == Position(2, 1, 0, 3)
    with pytest.raises(ValueError):
        level_position(None, 0)


@dataclass
class GameTable:
    told: LevelGame | None = None
    last: Position | None = None
    hands: list[tuple[int, str]] = field(default_factory=list)  # (level, game) of each hand


@dataclass
class MixedModel(Model):
    """The model tables of test_tournament_run, each also dealing the game it was told."""

    spec: TournamentSpec | None = None
    games: dict[int, GameTable] = field(default_factory=dict)
    dealt: list[tuple[int, int, str]] = field(default_factory=list)  # (table, level, game)

    def carry_out(self, run: TournamentRun, orders: list[Order], at: float) -> list[int]:
        assert self.spec is not None
        for order in orders:
            if isinstance(order, Stakes):
                self.games.setdefault(order.table, GameTable()).told = level_game(
                    self.spec, order.level
                )
            if isinstance(order, Deal):
                assert self.games[order.table].told is not None, "a permit before a level"
        return super().carry_out(run, orders, at)

    def deal(self, run: TournamentRun, table: int, at: float) -> None:
        state = self.games[table]
        assert state.told is not None
        state.last = level_position(state.last, state.told.level)
        state.hands.append((state.told.level, state.told.game))
        self.dealt.append((table, state.told.level, state.told.game))
        # The level in play as the hand is dealt is the one its table was told last.
        reading = run.clock.read(at) if run.clock is not None else None
        assert reading is not None and reading.level_number == state.told.level
        super().deal(run, table, at)


def play_mixed(spec: TournamentSpec, entrants: int, seed: int) -> MixedModel:
    rng = random.Random(seed)
    run = TournamentRun(spec, tournament_id=9, seed=SEED, prize_pool=entrants * spec.buy_in)
    model = MixedModel(spec=spec)
    at = 0.0
    for table in model.carry_out(run, run.start([f"p{n:03}" for n in range(entrants)], at), at):
        model.deal(run, table, at)
    for _ in range(100_000):
        if model.winner is not None:
            break
        in_hand = [n for n, t in model.tables.items() if t.dealt is not None]
        table = rng.choice(in_hand)
        at += rng.uniform(5, 60)
        model.play_out(run, table, rng)
        tm = model.tables[table]
        starting = {p: tm.starting.get(p, stack) for p, stack in tm.stacks.items()}
        for allowed in model.carry_out(
            run, run.hand_ended(table, tm.number, dict(tm.stacks), starting, at), at
        ):
            model.deal(run, allowed, at)
        if model.winner is None and not any(t.dealt is not None for t in model.tables.values()):
            wake = run.next_wake(at)
            assert wake is not None
            at = wake
            for allowed in model.carry_out(run, run.wake(at), at):
                model.deal(run, allowed, at)
    assert model.winner is not None
    return model


@settings(max_examples=20, deadline=None)
@given(
    games=st.lists(st.sampled_from(sorted(VARIANTS)), min_size=2, max_size=4).filter(
        lambda games: len(set(games)) > 1
    ),
    entrants=st.integers(2, 30),
    seed=st.integers(0, 2**32),
)
def test_every_tables_hands_after_a_level_change_are_of_the_new_levels_game(
    games: list[str], entrants: int, seed: int
) -> None:
    spec = mixed_spec(tuple(games))
    model = play_mixed(spec, entrants, seed)
    levels = spec.structure.levels
    for _, level, game in model.dealt:
        assert game == spec.game_of(levels[level - 1])
    # Every table switches at the same level change: once a hand of a level is dealt
    # anywhere, no table deals a hand of an earlier level.
    seen = [level for _, level, _ in model.dealt]
    assert seen == sorted(seen)
    for state in model.games.values():
        assert [lvl for lvl, _ in state.hands] == sorted(lvl for lvl, _ in state.hands)
