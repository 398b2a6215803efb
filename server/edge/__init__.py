"""The edge: players' and bots' websockets, and what a node asks of each connection.

Owns the websocket endpoint and its transport, frames, per-table lanes, rate limits and
their arithmetic, presence, spectators' snapshots, signed-in sessions and the overload
shedding. May import the cardroom, the table's commands and everything below; never the
HTTP API's routers.
"""
