"""The bus between table actors and connections, in one process (``memory``) or across
nodes over Redis pub/sub (``redis_bus``): channels, subscriptions and their queues. Imports
nothing of the server but the logs.
"""
