"""The bus between table actors and connections, in one process (``memory``) or across
nodes over Redis pub/sub, on one Redis or a Redis Cluster (``redis_bus``, over the servers
of ``redis_servers``): channels, subscriptions and their queues. Imports nothing of the server
but the logs.
"""
