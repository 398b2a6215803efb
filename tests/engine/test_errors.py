"""The one error vocabulary: docs/protocol.md lists exactly the ErrorCode enumeration, and no
code is a bare string where a refusal is raised."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from engine.errors import (
    ConfigError,
    EngineError,
    ErrorCode,
    IllegalAction,
    InvalidAction,
    NotYourTurn,
    Refusal,
)

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = ROOT / "docs" / "protocol.md"


def documented_codes() -> dict[str, int | None]:
    """Every code in the tables of the "Error codes" section, with its HTTP status if any."""
    text = PROTOCOL.read_text()
    section = text.split("\n## Error codes\n", 1)[1].split("\n## ", 1)[0]
    codes: dict[str, int | None] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 3:
            continue
        status = int(cells[1]) if cells[1] else None
        for code in re.findall(r"`([a-z0-9_]+)`", cells[0]):
            assert code not in codes, f"{code} is listed twice"
            codes[code] = status
    return codes


def test_protocol_lists_exactly_the_error_codes() -> None:
    documented = set(documented_codes())
    enumerated = {code.value for code in ErrorCode}
    assert documented - enumerated == set(), "in docs/protocol.md, not in ErrorCode"
    assert enumerated - documented == set(), "in ErrorCode, not in docs/protocol.md"


def test_protocol_gives_each_http_code_its_status() -> None:
    for code, status in documented_codes().items():
        member = ErrorCode(code)
        if status is not None:
            assert status == member.http_status, code
        elif member.http_status != 400:
            pytest.fail(f"{code} travels over HTTP with {member.http_status}: list its status")


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
