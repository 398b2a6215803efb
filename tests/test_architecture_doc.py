"""docs/architecture.md against the code: every module of the engine, the server and the
Python clients has its row in the document's module tables (and no row names a module that
is gone), and the picture of the server's packages is the one the code draws now."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "architecture.md"
# Each part of the code, the heading of its section, and where its rows' names start from.
PARTS = {
    "## The engine (`engine/`)": ROOT / "engine",
    "## The server (`server/`)": ROOT / "server",
    "## The clients (`clients/python/`)": ROOT / "clients" / "python",
}
NOT_LISTED = {"__init__.py", "__main__.py"}


def section(heading: str) -> str:
    text = DOCUMENT.read_text()
    start = text.index(heading)
    following = text.find("\n## ", start + len(heading))
    return text[start : following if following >= 0 else len(text)]


def named_in_rows(text: str) -> set[str]:
    """The modules (or folders, ending in ``/``) the rows of a section's module tables (those
    headed ``| module |``) name, in their first cell; a bare name follows the folder of the
    name before it in its cell."""
    named: set[str] = set()
    in_modules = False
    for line in text.splitlines():
        if not line.startswith("|"):
            in_modules = False
            continue
        if line.startswith("| module |"):
            in_modules = True
        if not in_modules or not line.startswith("| `"):
            continue
        folder = ""
        for name in re.findall(r"`([^`]+)`", line.split(" | ")[0]):
            if "/" in name.rstrip("/"):
                folder = name.rsplit("/", 1)[0] + "/"
                named.add(name)
            else:
                named.add(folder + name)
    return named


def modules_of(root: Path) -> set[str]:
    found = {
        path.relative_to(root).as_posix()
        for path in root.rglob("*.py")
        if path.name not in NOT_LISTED and "build" not in path.relative_to(root).parts
    }
    if root.name == "python":  # the clients: their two packages only
        found = {name for name in found if name.startswith(("stud_client/", "stud_bots/"))}
    return found


def covered(module: str, named: set[str]) -> bool:
    return module in named or any(name.endswith("/") and module.startswith(name) for name in named)


def test_every_module_has_its_row_and_every_row_its_module() -> None:
    for heading, root in PARTS.items():
        named = named_in_rows(section(heading))
        modules = modules_of(root)
        missing = sorted(m for m in modules if not covered(m, named))
        assert not missing, f"{heading}: no row for {missing}"
        stale = sorted(n for n in named if not (root / n).exists())
        assert not stale, f"{heading}: rows for what is not there: {stale}"


def load_drawing() -> ModuleType:
    spec = importlib.util.spec_from_file_location("import_graph", ROOT / "docs/import_graph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_picture_of_the_packages_is_the_one_the_code_draws() -> None:
    drawing = load_drawing()
    document = DOCUMENT.read_text()
    assert drawing.written(document) == document, "run: python docs/import_graph.py --write"
    assert "table --> cardroom" not in drawing.block()  # the layers hold in the picture too
