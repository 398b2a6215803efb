"""What the cardroom keeps, over the database (``server.db``): tables and their rules as
JSON, the table actors' store (hands, stacks, write-ahead, fencing tokens) and the records
it writes, decks sealed at rest, hand histories and hand records. May import the engine,
``server.accounts`` (chips move in the ledger) and ``server.db``; never the table, the
cardroom, the edge or the HTTP API.
"""
