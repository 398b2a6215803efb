"""The cardroom of a node: which tables it runs and how it builds and supervises their actors.

Owns the supervisor of the node's table actors, taking a table over (building its actor from
the store), cluster ownership (leases, commands for tables run elsewhere), the lobby gossip
between nodes, the live list of tables, the tables' lobby statistics, and suspending or
kicking a player (out of every table, wherever it runs). May import
``server.table`` and everything below it; never the edge or the HTTP API.
"""
