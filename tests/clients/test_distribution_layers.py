"""The three distributions and the layers they keep, read from the sources and pyproject files.

``stud-engine`` (engine/pyproject.toml) is the engine alone, on the standard library;
``stud-client`` (clients/python/pyproject.toml) is the client and bots on the engine and
their own few libraries; the repository's ``stud-server`` ships all of it with the server,
for the development install. No import runs back up: the engine imports neither the server
nor the clients, the clients never the server, and the server never the clients (the demo's
house bots run as a process of their own, server/demo.py).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
CLIENTS = REPO / "clients" / "python"
NAME = re.compile(r"[A-Za-z0-9._-]+")


def _project(path: Path) -> dict[str, Any]:
    project: dict[str, Any] = tomllib.loads(path.read_text())
    return project


def _names(requirements: list[str]) -> set[str]:
    return {NAME.findall(r)[0].lower() for r in requirements}


def _imported(folder: Path) -> dict[str, set[str]]:
    """Each top-level module the Python files under ``folder`` import, with where."""
    found: dict[str, set[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        if "build" in path.relative_to(folder).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.partition(".")[0]
                found.setdefault(top, set()).add(f"{path.relative_to(REPO)}:{node.lineno}")
    return found


def _outside(imported: dict[str, set[str]], allowed: set[str]) -> dict[str, set[str]]:
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    return {m: where for m, where in imported.items() if m not in stdlib | allowed}


def test_the_engine_imports_the_standard_library_only() -> None:
    assert _outside(_imported(REPO / "engine"), {"engine"}) == {}
    engine = _project(REPO / "engine" / "pyproject.toml")
    assert engine["project"]["dependencies"] == []
    # The package and each of its subpackages, each listed with its folder.
    subpackages = sorted(p.parent.name for p in (REPO / "engine").glob("*/__init__.py"))
    setuptools = engine["tool"]["setuptools"]
    assert setuptools["packages"] == ["engine", *(f"engine.{name}" for name in subpackages)]
    assert setuptools["package-dir"] == {
        "engine": ".",
        **{f"engine.{name}": name for name in subpackages},
    }


def test_the_clients_import_the_engine_and_their_own_libraries_only() -> None:
    client = _project(CLIENTS / "pyproject.toml")["project"]
    libraries = _names(client["dependencies"]) - {"stud-engine"}
    allowed = {"engine", "stud_client", "stud_bots"} | libraries
    assert _outside(_imported(CLIENTS), allowed) == {}
    assert "stud-engine" in _names(client["dependencies"])


def test_the_server_imports_no_client() -> None:
    imported = _imported(REPO / "server")
    assert {m: imported[m] for m in ("stud_client", "stud_bots") if m in imported} == {}


def test_the_distributions_agree_with_the_development_install() -> None:
    root = _project(REPO / "pyproject.toml")
    engine = _project(REPO / "engine" / "pyproject.toml")["project"]
    client = _project(CLIENTS / "pyproject.toml")["project"]
    server = root["project"]
    # One release of all three; the client pins the engine's.
    assert server["version"] == engine["version"] == client["version"]
    assert f"stud-engine=={engine['version']}" in client["dependencies"]
    # The development install is everything: every package, the client's libraries, the
    # console scripts of the other two.
    assert set(root["tool"]["setuptools"]["packages"]["find"]["where"]) == {".", "clients/python"}
    assert _names(client["dependencies"]) - {"stud-engine"} <= _names(server["dependencies"])
    for scripts in (engine["scripts"], client["scripts"]):
        assert scripts.items() <= server["scripts"].items()
