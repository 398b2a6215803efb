"""What a new account may be called and which password it may have (docs/operators.md).

A password is refused when it is among the 10,000 most common (``data/common-passwords.txt``,
read once, compared without regard to case or surrounding spaces: ``Password `` is
``password``) or when it is only whitespace; a username is refused when it is the house's
(``house``, or ``house`` and a separator, any case: the names of the demo's house bots), so
that nobody can pass for the house at a table. Both refusals carry a stable code and create
nothing; the house's own bots (server/demo.py) are made without these checks.

>>> password_problem("Password") is not None, password_problem(" " * 8) is not None
(True, True)
>>> password_problem("correct horse battery") is None
True
>>> is_reserved_username("House-razz-1"), is_reserved_username("householder")
(True, False)
"""

from __future__ import annotations

import functools
import re
from importlib import resources

from engine.errors import Refusal
from engine.protocol import ErrorCode

COMMON_PASSWORDS_FILE = "common-passwords.txt"
#: The prefix of every house bot's name (``house-razz-1``); see :func:`is_reserved_username`.
HOUSE_BOT_PREFIX = "house-"
_RESERVED = re.compile(r"house(?:[-_.]|$)", re.IGNORECASE)


class WeakPassword(Refusal):
    code = ErrorCode.WEAK_PASSWORD


class ReservedUsername(Refusal):
    code = ErrorCode.RESERVED_USERNAME


@functools.cache
def common_passwords() -> frozenset[str]:
    """The bundled list, read from the installed package once per process."""
    text = resources.files("server").joinpath("data", COMMON_PASSWORDS_FILE).read_text("utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))


def password_problem(password: str) -> str | None:
    """Why ``password`` may not be a new account's, or None when it may (its length is the
    schema's to check)."""
    if not password.strip():
        return "a password cannot be only spaces"
    if password.strip().lower() in common_passwords():
        return "this password is among the 10,000 most common ones: choose another"
    return None


def is_reserved_username(username: str) -> bool:
    """Whether the name is the house's: ``house`` alone or followed by ``-``, ``_`` or ``.``."""
    return _RESERVED.match(username) is not None


def check_username(username: str) -> str:
    """``username``, or :class:`ReservedUsername`."""
    if is_reserved_username(username):
        raise ReservedUsername(f"the username {username!r} is reserved for the house's bots")
    return username


def check_password(password: str) -> str:
    """``password``, or :class:`WeakPassword`."""
    problem = password_problem(password)
    if problem is not None:
        raise WeakPassword(problem)
    return password


__all__ = [
    "HOUSE_BOT_PREFIX",
    "ReservedUsername",
    "WeakPassword",
    "check_password",
    "check_username",
    "common_passwords",
    "is_reserved_username",
    "password_problem",
]
