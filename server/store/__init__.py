"""What the cardroom keeps: the database (models, sessions, migrations), tables and their
rules as JSON, the table actors' store (hands, stacks, write-ahead, fencing tokens), decks
sealed at rest, hand histories and hand records, and where the embedded default keeps its
files. May import the engine; never the table, the cardroom, the edge or the HTTP API.
"""
