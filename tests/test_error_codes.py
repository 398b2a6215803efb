"""The protocol's vocabulary of refusals: docs/protocol.md lists exactly the ErrorCode
enumeration, each code with its owner; each owner raises its codes and the engine no other;
no code is a bare string where a refusal is raised; the HTTP statuses are the HTTP layer's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from engine.errors import (
    ConfigError,
    EngineError,
    IllegalAction,
    InvalidAction,
    NotYourTurn,
    Refusal,
)
from engine.protocol import OWNERS, ErrorCode

ROOT = Path(__file__).resolve().parents[1]
PROTOCOL = ROOT / "docs" / "protocol.md"


def documented_codes() -> dict[str, tuple[int | None, str]]:
    """Every code in the tables of the "Error codes" section, with its HTTP status if any and
    who raises it."""
    text = PROTOCOL.read_text()
    section = text.split("\n## Error codes\n", 1)[1].split("\n## ", 1)[0]
    codes: dict[str, tuple[int | None, str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 4:
            continue
        status = int(cells[1]) if cells[1] else None
        for code in re.findall(r"`([a-z0-9_]+)`", cells[0]):
            assert code not in codes, f"{code} is listed twice"
            codes[code] = (status, cells[2])
    return codes


def test_protocol_lists_exactly_the_error_codes() -> None:
    documented = set(documented_codes())
    enumerated = {code.value for code in ErrorCode}
    assert documented - enumerated == set(), "in docs/protocol.md, not in ErrorCode"
    assert enumerated - documented == set(), "in ErrorCode, not in docs/protocol.md"


def test_protocol_gives_each_code_its_owner_and_http_code_its_status() -> None:
    from server.edge.refusals import http_status  # the HTTP layer's, not the engine's

    for code, (status, owner) in documented_codes().items():
        member = ErrorCode(code)
        assert owner == OWNERS[member], code
        if status is not None:
            assert status == http_status(member), code
        elif http_status(member) != 400:
            pytest.fail(f"{code} travels over HTTP with {http_status(member)}: list its status")


# Who may raise a code: its owner, and the layers above it (lowest first, the server's
# packages in their import layers: docs/architecture.md).
LAYERS = ("engine", "accounts", "store", "table", "cardroom", "tournaments", "edge", "api")


def raised_by() -> dict[str, set[str]]:
    """Each code named at a raise site (``ErrorCode.X`` in the source), by where: the engine,
    or the server's package (its database and bus count as the store's, the modules at its
    top as the API's). The base refusal's default code is every layer's, and the HTTP
    statuses' table names codes without raising them."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "engine").rglob("*.py")) + sorted((ROOT / "server").rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if parts[0] == "engine":
            where = "engine"
        elif len(parts) == 2:
            where = "api"
        else:
            where = {"db": "store", "bus": "store"}.get(parts[1], parts[1])
        text = path.read_text()
        if parts == ("engine", "errors.py"):
            text = text.replace("code: ErrorCode = ErrorCode.BAD_REQUEST", "")
        if parts == ("engine", "protocol.py"):
            continue
        if parts == ("server", "edge", "refusals.py"):  # the statuses name every code
            start = text.index("HTTP_STATUS: Final")
            text = text[:start] + text[text.index("\n}\n", start) :]
        for name in re.findall(r"ErrorCode\.([A-Z_]+)", text):
            found.setdefault(name, set()).add(where)
    return found


def test_each_owner_raises_its_codes_and_no_layer_below_it_does() -> None:
    sites = raised_by()
    for code, owner in OWNERS.items():
        where = sites.get(code.name, set())
        assert where, f"{code} is raised nowhere"
        if owner == "any":
            continue
        assert owner in where, f"{code} belongs to {owner}, raised only in {sorted(where)}"
        below = LAYERS[: LAYERS.index(owner)]
        assert not where & set(below), f"{code} belongs to {owner}, raised in {sorted(where)}"


def test_the_engine_raises_only_its_own_codes() -> None:
    engine = {name for name, where in raised_by().items() if "engine" in where}
    assert engine == {code.name for code, owner in OWNERS.items() if owner == "engine"}


def test_a_code_is_its_string_on_the_wire() -> None:
    assert ErrorCode.TABLE_FULL == "table_full"
    assert f"{ErrorCode.NOT_YOUR_TURN}" == "not_your_turn"
    assert all(code.value == code.name.lower() for code in ErrorCode)


def test_one_refusal_base() -> None:
    for kind in (EngineError, InvalidAction, IllegalAction, NotYourTurn, ConfigError):
        assert issubclass(kind, Refusal) and issubclass(kind, ValueError)
    refusal = IllegalAction("the hand is over", code=ErrorCode.HAND_OVER)
    assert (refusal.code, refusal.message, str(refusal)) == (
        ErrorCode.HAND_OVER,
        "the hand is over",
        "the hand is over",
    )
    assert NotYourTurn("seat 1 is to act").code is ErrorCode.NOT_YOUR_TURN


def _string_codes(path: Path) -> list[str]:
    """Calls with ``code="..."`` and class bodies with ``code = "..."``: a code as a bare
    string instead of an ErrorCode member."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                value = keyword.value
                if (
                    keyword.arg == "code"
                    and isinstance(value, ast.Constant)
                    and isinstance(value.value, str)
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
        elif isinstance(node, ast.ClassDef):
            for statement in node.body:
                if (
                    isinstance(statement, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "code" for t in statement.targets)
                    and isinstance(statement.value, ast.Constant)
                    and isinstance(statement.value.value, str)
                ):
                    found.append(f"{path.relative_to(ROOT)}:{statement.lineno}")
    return found


def test_every_raise_site_names_an_error_code_member() -> None:
    sources = [
        path
        for folder in ("engine", "server", "clients/python")
        for path in sorted((ROOT / folder).rglob("*.py"))
    ]
    assert [site for path in sources for site in _string_codes(path)] == []
