"""The table: one actor per table, the only writer of its state.

Owns the actor and its loop, the commands it takes, its clocks and turns, the seats the
table plays for (absence, removal), time collection, operators' table commands, the journal
(write-ahead of a hand), dealing, publishing numbered events and snapshots; ``ports`` is
what it needs of a store and what it hands over. May import the engine, ``server.store``,
``server.bus``, ``server.accounts`` and the process-wide ``server.logs``/``server.metrics``;
never the cardroom, the edge or the HTTP API.
"""
