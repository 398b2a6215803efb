"""Accounts and their money: registration and login, password rules and hashing, tokens,
the ledger of wallets, bot accounts, the back office's view of players, and the
audit log of staff actions. May import the database (``server.db``) and the engine.
"""
