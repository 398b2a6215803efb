"""The rules of a new account (server/accounts/account_rules.py): the bundled list of common
passwords, read from the installed package, and the names kept for the house."""

from __future__ import annotations

import doctest
import fnmatch
import tomllib
from pathlib import Path

from server.accounts import account_rules
from server.accounts.account_rules import common_passwords, is_reserved_username, password_problem

REPO = Path(__file__).resolve().parents[3]


def test_the_examples_in_the_docstring() -> None:
    assert doctest.testmod(account_rules).failed == 0


def test_the_list_holds_the_ten_thousand_most_common_passwords_and_is_read_once() -> None:
    common = common_passwords()
    assert len(common) == 10_000
    assert {"123456", "password", "qwerty", "iloveyou", "trustno1"} <= common
    assert not any(entry.startswith("#") or entry != entry.strip() for entry in common)
    assert common_passwords() is common  # read once


def test_a_wheel_carries_the_list() -> None:
    """The list is package data of ``server``: a wheel and an editable install both have it."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    patterns = project["tool"]["setuptools"]["package-data"]["server"]
    data = f"data/{account_rules.COMMON_PASSWORDS_FILE}"
    assert (REPO / "server" / data).is_file()
    assert any(fnmatch.fnmatch(data, pattern) for pattern in patterns), patterns
    assert "MIT License" in (REPO / "server" / data).read_text()[:2000]  # its source's licence


def test_passwords_refused_whatever_their_case_or_surrounding_spaces() -> None:
    for weak in ("password", "PASSWORD", "  qwerty123 ", "Dragon", "        ", "\t\n  "):
        assert password_problem(weak) is not None, weak
    for fine in ("correct horse", "Pa55-word-of-mine", "  with spaces inside  "):
        assert password_problem(fine) is None, fine


def test_names_of_the_house() -> None:
    for name in ("house", "House", "house-razz-1", "HOUSE_seven", "house.x"):
        assert is_reserved_username(name), name
    for name in ("householder", "houses", "my-house", "alice"):
        assert not is_reserved_username(name), name
