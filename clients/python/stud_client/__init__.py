"""An async client for the stud server: REST for accounts and the lobby, one websocket for
play, and a typed, always-consistent view of every table it watches.

>>> from stud_client import Action, StudClient
>>> Action("call")
Action(kind='call', amount=None)
"""

from stud_client.client import ClientStats, StudClient
from stud_client.errors import ConnectionLost, ErrorCode, ServerError, StudError
from stud_client.table import ActResult, EventStream, Table, TableEvent
from stud_client.tournaments import TournamentEvent, TournamentFollow, Tournaments, TournamentSeat
from stud_client.view import (
    Action,
    Clock,
    LegalActions,
    SeatView,
    Stakes,
    TableInfo,
    TableView,
)

__all__ = [
    "Action",
    "ActResult",
    "ClientStats",
    "Clock",
    "ConnectionLost",
    "ErrorCode",
    "EventStream",
    "LegalActions",
    "SeatView",
    "ServerError",
    "Stakes",
    "StudClient",
    "StudError",
    "Table",
    "TableEvent",
    "TableInfo",
    "TableView",
    "TournamentEvent",
    "TournamentFollow",
    "TournamentSeat",
    "Tournaments",
]
