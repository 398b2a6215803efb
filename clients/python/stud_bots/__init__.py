"""Bots for the stud server, built on ``stud_client`` and nothing else: a ``Bot`` decides,
the client plays. ``stud-bots`` (``stud_bots.runner``) runs them against a server.

>>> from stud_bots import make_bot
>>> type(make_bot("station")).__name__
'CallingStation'
"""

from stud_bots.equity import equity
from stud_bots.strategies import (
    STRATEGIES,
    Bot,
    CallingStation,
    RandomBot,
    RuleBot,
    make_bot,
    passive,
)

__all__ = [
    "STRATEGIES",
    "Bot",
    "CallingStation",
    "RandomBot",
    "RuleBot",
    "equity",
    "make_bot",
    "passive",
]
