"""The client's own distribution, installed as a bot author installs it (the READMEs'
``pip install ./engine ./clients/python``) into a fresh venv (no system site packages),
brings the client, its bots, ``stud-bots`` and the engine, and none of the server's
libraries.

The two distributions are built from a copy of their directories (a build in place would
leave ``build/`` and ``*.egg-info`` in the tree); pip fetches their dependencies, and
setuptools for the builds, as it does for anyone (from PyPI, or its cache).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ENGINE = REPO / "engine"
CLIENTS = REPO / "clients" / "python"
#: The server's libraries (and the server itself), which a bot author does not get.
SERVER_ONLY = ("fastapi", "sqlalchemy", "redis", "uvicorn", "alembic", "asyncpg", "server")
#: What the client distribution depends on, by name: the engine and the client's libraries.
CLIENT_REQUIRES = {"stud-engine", "websockets", "httpx", "orjson"}
INSTALL_SECONDS = 900
NAME = re.compile(r"[A-Za-z0-9._-]+")  # a requirement's distribution name

#: Run by the fresh venv's Python, isolated (-I: neither the working directory nor any
#: PYTHON* variable on its path): every module of the three packages imported.
PROBE = """
import importlib, importlib.metadata, importlib.util, json, pkgutil, sys
import engine, stud_bots, stud_client

modules = []
for package in (engine, stud_client, stud_bots):
    modules.append(package.__name__)
    for found in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        importlib.import_module(found.name)
        modules.append(found.name)
print(json.dumps({
    "prefix": sys.prefix,
    "files": [m.__file__ for m in (engine, stud_client, stud_bots)],
    "modules": sorted(modules),
    "found": [name for name in sys.argv[1:] if importlib.util.find_spec(name) is not None],
    "requires": {
        name: importlib.metadata.requires(name) or []
        for name in ("stud-engine", "stud-client")
    },
    "distributions": sorted(d.metadata["Name"] for d in importlib.metadata.distributions()),
}))
"""


def _source_modules() -> list[str]:
    """Every module of engine, stud_client and stud_bots in this checkout."""
    found = []
    for root, packages in ((REPO, ("engine",)), (CLIENTS, ("stud_client", "stud_bots"))):
        for package in packages:
            for path in (root / package).rglob("*.py"):
                parts = path.relative_to(root).with_suffix("").parts
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                if "build" not in parts:
                    found.append(".".join(parts))
    return sorted(found)


def _copy(source: Path, destination: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "dist", "*.egg-info")
    shutil.copytree(source, destination, ignore=ignore)
    return destination


def _run(command: list[str | Path], cwd: Path, timeout: float = 120) -> str:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
    }
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _documented_install() -> list[Path]:
    """The directories the READMEs' install of the client alone names, the same in both."""
    found = {
        line
        for readme in (REPO / "README.md", CLIENTS / "README.md")
        for line in readme.read_text().splitlines()
        if line.startswith("pip install ./")
    }
    assert len(found) == 1, found
    return [REPO / word for word in shlex.split(found.pop())[2:]]


def test_the_client_and_its_bots_install_without_the_server(tmp_path: Path) -> None:
    assert _documented_install() == [ENGINE, CLIENTS]
    engine = _copy(ENGINE, tmp_path / "src" / "engine")
    client = _copy(CLIENTS, tmp_path / "src" / "client")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    install = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    _run([*install, engine, client], cwd=tmp_path, timeout=INSTALL_SECONDS)

    probe = json.loads(_run([python, "-I", "-c", PROBE, *SERVER_ONLY], cwd=tmp_path))
    assert probe["found"] == []  # no fastapi, sqlalchemy, redis, ... and no server package
    assert probe["prefix"] == str(venv)
    assert all(Path(f).is_relative_to(venv) for f in probe["files"]), probe["files"]
    assert probe["modules"] == _source_modules()  # every module shipped, and each imports
    distributions = set(probe["distributions"])
    assert {"stud-engine", "stud-client"} <= distributions
    assert "stud-server" not in distributions and not distributions & set(SERVER_ONLY)
    assert probe["requires"]["stud-engine"] == []
    names = {NAME.findall(r)[0] for r in probe["requires"]["stud-client"]}
    assert names == CLIENT_REQUIRES
    _run([python, "-m", "pip", "check"], cwd=tmp_path)

    bots = _run([venv / "bin" / "stud-bots", "--help"], cwd=tmp_path)
    assert "--server" in bots and "--operator" in bots
    assert "usage: stud-replay" in _run([venv / "bin" / "stud-replay", "--help"], cwd=tmp_path)
