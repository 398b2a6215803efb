"""Tournaments as pure rules: their formats and structures as data, the level clock, the seat
draw and table balancing, places and payouts, and final-table deals. Like the rest of the
engine it imports nothing of the server and keeps no clock: the director passes the times in.
"""
