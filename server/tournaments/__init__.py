"""Tournaments: their records and entries with the money of each entry (the registry), and the
routes' queries; the rules they follow are the engine's (``engine.tournament``).

Imports the accounts (the ledger), the store (the deck seal) and the database; the API
imports it.
"""
