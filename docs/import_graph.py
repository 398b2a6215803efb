"""The picture of the server's packages and their imports, drawn from the code.

    python docs/import_graph.py           # print the Mermaid block
    python docs/import_graph.py --write   # put it in docs/architecture.md, between its marks

A package imports another when any of its modules does (imports under ``TYPE_CHECKING``
included, as the contracts count them); the modules at the top of ``server/`` are drawn as
one, the process, but for the settings, the logs and the metrics, which every layer may
use. ``tests/test_architecture_doc.py`` checks the block in the document is the one the
code draws now.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- import graph: drawn by python docs/import_graph.py --write -->"
END = "<!-- end of the import graph -->"
PROCESS = "process"
SHARED = frozenset({"settings", "logs", "metrics"})  # modules at the top every layer may use


def part_of(module: str) -> str | None:
    """The box a module of the server is drawn in (None: not the server's)."""
    parts = module.split(".")
    if parts[0] != "server" or len(parts) < 2:
        return None
    top = ROOT / "server" / parts[1]
    return parts[1] if top.is_dir() or parts[1] in SHARED else PROCESS


def imports_of(path: Path) -> set[str]:
    """The modules a file imports, by their full names."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def edges() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in sorted((ROOT / "server").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        source = part_of(module)
        for name in imports_of(path):
            target = part_of(name) if name.startswith("server.") else None
            if name == "server" or target is None:
                continue
            where = ROOT / Path(*name.split("."))
            is_module = where.with_suffix(".py").exists() or where.is_dir()
            if is_module and source is not None and target != source:
                found.add((source, target))
    return found


def block() -> str:
    lines = [BEGIN, "```mermaid", "flowchart TD"]
    lines += [f"    {source} --> {target}" for source, target in sorted(edges())]
    lines += ["```", END]
    return "\n".join(lines)


def written(document: str) -> str:
    """``document`` with its block replaced by the one the code draws now."""
    start, end = document.index(BEGIN), document.index(END) + len(END)
    return document[:start] + block() + document[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="update docs/architecture.md")
    options = parser.parse_args(argv)
    if options.write:
        DOCUMENT.write_text(written(DOCUMENT.read_text()))
    else:
        print(block())
    return 0


if __name__ == "__main__":
    sys.exit(main())
