"""Commands to a table: typed, frozen records, parsed and checked once where they come in.

A websocket message becomes one of these at the edge (:func:`parse`); an operator's call or
a tournament director's is built as one by its caller. From there it travels as it is, to
the table's actor on this node or, encoded by :func:`encode`, over the bus to the node that
runs the table, where :func:`decode` builds the same record without checking it again. The actor
dispatches on the record's type. What the rules judge (whose turn it is, the
buy-in range, a free seat) is the table's to say; what is checked here is the
shape: every field there, of its type, within its bounds.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, get_type_hints

from engine import fair
from engine.protocol import ErrorCode
from engine.tournament.games import level_game
from engine.tournament.spec import TournamentSpec
from engine.tournament.structure import Level
from server.table.ports import CommandRefused

ACTION_ID_MAX = 64
CHAT_MAX = 500
_SPACES = re.compile(" {2,}")


@dataclass(frozen=True, slots=True, kw_only=True)
class TableCommand:
    """Who sent it: a player's name ("" for a connection that is not signed in)."""

    name: ClassVar[str]
    player: str


def _code(code: ErrorCode) -> Any:
    """A required field's refusal code when it is missing (a value of the wrong type is
    ``bad_field``, as for every field)."""
    return field(metadata={"code": code})


@dataclass(frozen=True, slots=True, kw_only=True)
class Sit(TableCommand):
    name: ClassVar[str] = "sit"
    buy_in: int = _code(ErrorCode.BAD_AMOUNT)
    seat: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AddChips(TableCommand):
    name: ClassVar[str] = "add_chips"
    amount: int = _code(ErrorCode.BAD_AMOUNT)


@dataclass(frozen=True, slots=True, kw_only=True)
class Act(TableCommand):
    """``action_id`` makes a retry harmless: the same id is answered, not played twice."""

    name: ClassVar[str] = "act"
    action_id: str = _code(ErrorCode.BAD_ACTION_ID)
    kind: str = _code(ErrorCode.UNKNOWN_ACTION)
    amount: int | None = None

    def check(self) -> None:
        if not 0 < len(self.action_id) <= ACTION_ID_MAX:
            raise CommandRefused(
                f"every action needs an action_id (1-{ACTION_ID_MAX} chars)",
                code=ErrorCode.BAD_ACTION_ID,
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class SitOut(TableCommand):
    """``next_hand`` false during one's hand: the table acts for the player at each of
    their turns (a forced bring-in posted, else a fold, or a check where one is free when
    ``check_when_free``), without waiting for the clock (:mod:`server.table.absence`)."""

    name: ClassVar[str] = "sit_out"
    next_hand: bool = True
    check_when_free: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class SitIn(TableCommand):
    name: ClassVar[str] = "sit_in"


@dataclass(frozen=True, slots=True, kw_only=True)
class Leave(TableCommand):
    name: ClassVar[str] = "leave"


@dataclass(frozen=True, slots=True, kw_only=True)
class JoinWaitingList(TableCommand):
    name: ClassVar[str] = "join_waiting_list"


def clean_text(text: str) -> str:
    """Chat as every watcher may be shown it: control and format characters (NUL, bidi
    overrides and isolates, zero-width ones: Unicode categories Cc, Cf, and lone surrogates)
    dropped, line breaks and tabs made spaces, runs of spaces made one, the ends trimmed."""
    kept = []
    for char in text:
        category = unicodedata.category(char)
        if char in "\t\n\r\v\f" or category in ("Zl", "Zp"):
            kept.append(" ")
        elif category not in ("Cc", "Cf", "Cs"):
            kept.append(char)
    return _SPACES.sub(" ", "".join(kept)).strip()


@dataclass(frozen=True, slots=True, kw_only=True)
class Chat(TableCommand):
    """Its text is cleaned when the record is made (:func:`clean_text`)."""

    name: ClassVar[str] = "chat"
    text: str = _code(ErrorCode.BAD_CHAT)

    def __post_init__(self) -> None:
        if isinstance(self.text, str):
            object.__setattr__(self, "text", clean_text(self.text))

    def check(self) -> None:
        if not self.text.strip() or len(self.text) > CHAT_MAX:
            raise CommandRefused(
                f"chat text must be 1 to {CHAT_MAX} characters", code=ErrorCode.BAD_CHAT
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class ClientSeed(TableCommand):
    """A seated player's seed for the next hand's deck (docs/fairness.md). ``hand``: the
    hand it is meant for (refused if that is no longer the one taking seeds)."""

    name: ClassVar[str] = "client_seed"
    seed: str = _code(ErrorCode.BAD_CLIENT_SEED)
    hand: int | None = None

    def check(self) -> None:
        fair.check_client_seed(self.seed)


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot(TableCommand):
    """The table as the sender may see it, published on ``reply_to`` in line with the
    table's events (and answered there only: the command's own reply is a receipt)."""

    name: ClassVar[str] = "snapshot"
    reply_to: str | None = None
    reply_id: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Presence(TableCommand):
    """A connection of the player's came or went. ``run``: the run of the table it means
    (another run refuses it: an old node that has not learnt the table moved)."""

    name: ClassVar[str] = "presence"
    connected: bool
    run: int | None = None


PLAYER_COMMANDS: dict[str, type[TableCommand]] = {
    cls.name: cls
    for cls in (Sit, AddChips, Act, SitOut, SitIn, Leave, JoinWaitingList, Chat, ClientSeed)
}
"""What a player sends a table: each is a message type of the websocket protocol under its
name (``server.edge.ws`` dispatches them from here; docs/protocol.md), parsed by
:func:`parse`. The one list of them: every other list of player commands derives from it."""

EDGE_COMMANDS: dict[str, type[TableCommand]] = {cls.name: cls for cls in (Snapshot, Presence)}
"""What the edge sends a table for a connection (the snapshot a ``watch`` or ``resync``
answers with, a connection come or gone): commands, never message types of their own."""

COMMANDS: dict[str, type[TableCommand]] = {**PLAYER_COMMANDS, **EDGE_COMMANDS}
"""What :func:`parse` builds from a message's fields, and :func:`decode` from another
node's: the player's commands and the edge's."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorCommand(TableCommand):
    """An operator's, from the back office's REST API (checked there): never parsed from a
    websocket. ``player`` is the operator's name, ``operator_id`` their account (both go to
    the audit log with ``reason``)."""

    operator_id: int
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PauseTable(OperatorCommand):
    name: ClassVar[str] = "pause_table"


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumeTable(OperatorCommand):
    name: ClassVar[str] = "resume_table"


@dataclass(frozen=True, slots=True, kw_only=True)
class CloseTable(OperatorCommand):
    """``void``: void the hand in progress and close at once (else it finishes first)."""

    name: ClassVar[str] = "close_table"
    void: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class VoidHand(OperatorCommand):
    name: ClassVar[str] = "void_hand"


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeSettings(OperatorCommand):
    """Every editable setting of the table as it is to be (``server.table.edit``: the
    table's columns by name, JSON-ready), already judged by the engine, but for the seats
    in use, which only the table knows."""

    name: ClassVar[str] = "change_settings"
    settings: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class SetRotation(OperatorCommand):
    """A mixed table's new rotation (``engine.rotation`` JSON, judged already; None: the
    table's own rules alone), dealt from the next switch (``server.table.mixed``)."""

    name: ClassVar[str] = "set_rotation"
    rotation: dict[str, Any] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Remove(TableCommand):
    """An operator removes ``player``: they leave after the hand in progress, cashed out to
    their wallet, and the table's events say an operator removed them and why (``cause``:
    ``kicked``, ``suspended``). Not a player's command: :func:`parse` never makes it (only
    the back office does, and :func:`decode` on the node that runs the table)."""

    name: ClassVar[str] = "remove"
    cause: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldPlay(TableCommand):
    """The node running the table moves it to another node: no hand starts after the one in
    progress (the table's ``between_hands`` says when none is). Never parsed, never sent
    between nodes: the running node's own."""

    name: ClassVar[str] = "hold_play"


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayOn(TableCommand):
    """The move did not happen: play goes on here (the node's own, as :class:`HoldPlay`)."""

    name: ClassVar[str] = "play_on"


OPERATOR_COMMANDS: dict[str, type[TableCommand]] = {
    cls.name: cls
    for cls in (
        PauseTable,
        ResumeTable,
        CloseTable,
        VoidHand,
        ChangeSettings,
        SetRotation,
        Remove,
    )
}
"""What only the back office sends (built by its routes, carried between nodes by
:func:`encode` / :func:`decode`); :func:`parse` knows none of them."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DirectorCommand(TableCommand):
    """A tournament director's, to one of its tables (``server.table.director_commands``):
    never parsed from a websocket, carried between nodes by :func:`encode` / :func:`decode`
    like an operator's. ``tournament_id``: the director's tournament (a table of another, or a
    cash table, refuses it); ``player``: the player it concerns, "" for none."""

    player: str = ""
    tournament_id: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatEntrant(DirectorCommand):
    """Seat ``player`` at ``seat`` with ``stack`` tournament chips (the draw, a move, a table
    broken): no buy-in, no ledger. ``sitting_out``: away, and still so here."""

    name: ClassVar[str] = "seat_entrant"
    seat: int
    stack: int
    sitting_out: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class GiveUpPlayer(DirectorCommand):
    """Take ``player`` away with their chips, to seat them elsewhere: between their hands
    only (refused ``hand_in_progress`` while they are in the hand in play)."""

    name: ClassVar[str] = "give_up_player"


@dataclass(frozen=True, slots=True, kw_only=True)
class SetStakes(DirectorCommand):
    """A new level's stakes, played from the next hand (the hand in play keeps its own).
    ``level``: a mixed tournament's level (``engine.tournament.games.LevelGame`` JSON: its
    number, its game and the next level's), its game dealt from the next hand too; None: the
    table's game stays (a tournament of one game)."""

    name: ClassVar[str] = "set_stakes"
    ante: int
    bring_in: int
    small_bet: int
    big_bet: int
    level: dict[str, Any] | None = None

    @classmethod
    def at_level(cls, spec: TournamentSpec, level: Level, *, tournament_id: int) -> SetStakes:
        """What a table of the tournament of ``spec`` is told of ``level``."""
        game = level_game(spec, level)
        return cls(
            tournament_id=tournament_id,
            ante=level.ante,
            bring_in=level.bring_in,
            small_bet=level.small_bet,
            big_bet=level.big_bet,
            level=game.to_dict() if game is not None else None,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class DealNext(DirectorCommand):
    """The director's permit to deal hand ``number``, the table's next: a tournament table
    deals no hand without one. A permit for a hand dealt already is answered and deals
    nothing (a resent permit never deals twice); one for a later hand is refused."""

    name: ClassVar[str] = "deal_next"
    number: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AddEntrantChips(DirectorCommand):
    """Add the ``chips`` a player bought (a rebuy, an add-on) to their tournament stack,
    between their hands (refused ``hand_in_progress`` during theirs): ``stack`` is the stack
    it makes, so a resent command adds nothing twice."""

    name: ClassVar[str] = "add_entrant_chips"
    chips: int
    stack: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CloseTournamentTable(DirectorCommand):
    """Close the table for good once the director has taken every player away (it broke, or
    the tournament is over): refused ``seats_in_use`` while anyone sits there. ``reason``:
    what its watchers are told."""

    name: ClassVar[str] = "close_tournament_table"
    reason: str


DIRECTOR_COMMANDS: dict[str, type[TableCommand]] = {
    cls.name: cls
    for cls in (
        SeatEntrant,
        GiveUpPlayer,
        SetStakes,
        DealNext,
        AddEntrantChips,
        CloseTournamentTable,
    )
}
"""What only a tournament's director sends its tables (built by the director, carried
between nodes by :func:`encode` / :func:`decode`); :func:`parse` knows none of them."""


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    types: tuple[type, ...]
    required: bool
    missing: ErrorCode  # the code when it is missing


def _fields_of(cls: type[TableCommand]) -> tuple[_Field, ...]:
    hints = get_type_hints(cls)
    fields: list[_Field] = []
    for spec in dataclasses.fields(cls):
        if spec.name == "player":
            continue
        hint = hints[spec.name]
        args = getattr(hint, "__args__", None)
        options = args if args is not None else (hint,)
        types = tuple(t for t in options if isinstance(t, type) and t is not type(None))
        required = spec.default is dataclasses.MISSING
        fields.append(
            _Field(spec.name, types, required, spec.metadata.get("code", ErrorCode.BAD_FIELD))
        )
    return tuple(fields)


_FIELDS = {cls: _fields_of(cls) for cls in COMMANDS.values()}


_WORDS = {int: "an integer", str: "a string", bool: "true or false", float: "a number"}
LARGEST_INTEGER = 2**63 - 1  # what a chip count or a hand number may be (64 bits, signed)


def _wrong_type(spec: _Field, value: Any) -> str:
    """What the field must be, in words: ``amount must be an integer``. An integer past 64
    bits reaches here as a float (the frame's JSON reader makes it one): its range is said."""
    wanted = " or ".join(_WORDS.get(t, f"a {t.__name__}") for t in spec.types)
    if int in spec.types and isinstance(value, float) and value.is_integer():
        return f"{spec.name} must be {wanted} of at most {LARGEST_INTEGER:,} (64 bits)"
    return f"{spec.name} must be {wanted}"


def _fits(value: Any, types: tuple[type, ...]) -> bool:
    if not types:  # Any
        return True
    if value is None:
        return False
    if isinstance(value, bool):
        return bool in types
    return any(t is not bool and isinstance(value, t) for t in types)


def parse(name: str, player: str, message: Mapping[str, Any]) -> TableCommand:
    """The command ``name`` from a message's fields (others are ignored); refused with a
    stable code when it is unknown, a field is missing or of the wrong type, or out of
    bounds."""
    cls = COMMANDS.get(name)
    if cls is None:
        raise CommandRefused(f"no command {name!r}", code=ErrorCode.UNKNOWN_COMMAND)
    values: dict[str, Any] = {}
    for spec in _FIELDS[cls]:
        value = message.get(spec.name)
        if value is None and not spec.required:
            continue
        if value is None:
            raise CommandRefused(f"{spec.name} is required", code=spec.missing)
        if not _fits(value, spec.types):
            raise CommandRefused(_wrong_type(spec, value), code=ErrorCode.BAD_FIELD)
        values[spec.name] = value
    command = cls(player=player, **values)
    check = getattr(command, "check", None)
    if check is not None:
        check()
    return command


def encode(command: TableCommand) -> dict[str, Any]:
    """The command as JSON-ready fields, to travel to another node."""
    values = {spec.name: getattr(command, spec.name) for spec in dataclasses.fields(command)}
    return {"name": command.name, **values}


def decode(message: Any) -> TableCommand:
    """A command another node parsed and encoded: built as it was, not checked again."""
    name = str(message.get("name")) if isinstance(message, Mapping) else ""
    cls = COMMANDS.get(name) or OPERATOR_COMMANDS.get(name) or DIRECTOR_COMMANDS.get(name)
    if cls is None:
        raise CommandRefused("a malformed command", code=ErrorCode.BAD_COMMAND)
    try:
        return cls(**{spec.name: message[spec.name] for spec in dataclasses.fields(cls)})
    except KeyError:
        raise CommandRefused("a malformed command", code=ErrorCode.BAD_COMMAND) from None
