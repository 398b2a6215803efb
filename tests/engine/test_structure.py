"""The engine's structure: its modules import one another without a cycle (imports for
typing alone included), and none reaches into another object's private names."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"
# ``x._name`` for an ``x`` other than self or cls; namedtuple's own API is public.
_REACH = re.compile(r"\b(?!self\b|cls\b)[a-z_][a-z_0-9]*\._[a-z][a-z_0-9]*")
_NAMEDTUPLE_API = frozenset(("_replace", "_asdict", "_fields", "_make"))


def _imports() -> dict[str, set[str]]:
    """Each engine module and the engine modules it imports, anywhere in it."""
    modules = {path.stem: path for path in ENGINE.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(
                    a.name.split(".")[1] for a in node.names if a.name.startswith("engine.")
                )
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == "engine":
                    found.update(a.name for a in node.names if a.name in modules)
                elif node.module.startswith("engine."):
                    found.add(node.module.split(".")[1])
        graph[name] = found - {name}
    return graph


def test_engine_modules_import_one_another_without_a_cycle() -> None:
    graph = _imports()
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            raise AssertionError("import cycle: " + " -> ".join([*path[path.index(name) :], name]))
        if name in done:
            return
        for imported in sorted(graph.get(name, ())):
            visit(imported, [*path, name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])


def test_no_engine_module_reaches_into_private_names() -> None:
    reaches = [
        f"{path.name}:{number}: {match.group()}"
        for path in sorted(ENGINE.glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for match in _REACH.finditer(line)
        if match.group().rsplit(".", 1)[1] not in _NAMEDTUPLE_API
    ]
    assert reaches == []
