"""Tournaments' rules, pure like the rest of the engine: structures and their clock, the seat
draw and the balancing of tables, payouts and places, and final-table deals."""
