"""The README's bot example, as a new user runs it: ``stud-server create-operator boss``,
then ``stud-server`` or ``stud-server --demo`` (here on a free port, in an empty directory,
every setting its default: one address's registration limits included), then the README's
``stud-bots`` command word for word but for the port. It plays hands with no error, exits 0,
leaves no table of its own open and the books balanced; the README's sample output has the
fields of the real one."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live_server import ROOT, free_port

PASSWORD = "a-long-operator-password"
README_URL = "http://127.0.0.1:8000"


def _section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _blocks(section: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.DOTALL)


def readme_bots_command() -> list[str]:
    """The ``stud-bots`` command of the README's "Clients and bots", as words."""
    section = _section((ROOT / "README.md").read_text(), "Clients and bots")
    for block in _blocks(section, "sh"):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            words = shlex.split(line, comments=True)
            if words and words[0] == "stud-bots":
                return words
    raise AssertionError("no stud-bots command in the README's Clients and bots")


def readme_sample_report() -> dict[str, object]:
    section = _section((ROOT / "README.md").read_text(), "Clients and bots")
    (sample,) = _blocks(section, "json")
    report: dict[str, object] = json.loads(sample)
    return report


def _script(name: str) -> str:
    script = Path(sys.executable).with_name(name)
    assert script.exists(), f"{name} is not installed beside {sys.executable}"
    return str(script)


def _defaults() -> dict[str, str]:
    """The environment without a setting of the server's: every setting its default."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("STUD_") and k not in ("DATABASE_URL", "REDIS_URL")
    }


@pytest.fixture(params=[(), ("--demo",)], ids=["stud-server", "stud-server --demo"])
def server(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """``stud-server create-operator boss`` then ``stud-server`` (or ``stud-server --demo``,
    its house bots playing beside the run) in an empty directory."""
    flags: tuple[str, ...] = request.param
    env = _defaults()
    made = subprocess.run(
        [_script("stud-server"), "create-operator", "boss", "--password-stdin"],
        input=PASSWORD + "\n",
        text=True,
        env=env,
        cwd=tmp_path,
        capture_output=True,
        timeout=60,
    )
    assert made.returncode == 0, made.stderr
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (tmp_path / "server.log").open("w") as log:
        process = subprocess.Popen(
            [_script("stud-server"), *flags, "--port", str(port)],
            env=env,
            cwd=tmp_path,
            stdout=log,
            stderr=log,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(f"{url}/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert process.poll() is None, (tmp_path / "server.log").read_text()
                assert time.monotonic() < deadline, "the server did not become ready"
                time.sleep(0.1)
            yield url
        finally:
            process.terminate()
            process.wait(30)


def test_the_readme_bot_example_plays_and_tidies_up(server: str, tmp_path: Path) -> None:
    words = readme_bots_command()
    assert words.count(README_URL) == 1, words
    command = [_script("stud-bots"), *(server if w == README_URL else w for w in words[1:])]
    hands = int(words[words.index("--hands") + 1])
    done = subprocess.run(
        command,
        env={**_defaults(), "STUD_OPERATOR_PASSWORD": PASSWORD},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["hands"] >= hands and report["errors"] == {}, report
    assert report["bots"] == int(words[words.index("--tables") + 1]) * int(
        words[words.index("--seats") + 1]
    )
    # No table of the run left open (the demo's own stay), and the report says so.
    lobby = httpx.get(f"{server}/tables").json()
    assert [t for t in lobby if not t["name"].startswith("Demo: ")] == []
    assert report["closed_tables"] == report["tables"]
    # The README shows a real run's report: the same fields.
    assert set(readme_sample_report()) == set(report)

    # The bots were made by the operator (audited, funded by the house), and the books
    # balance with every chip lent to them back with the house.
    token = httpx.post(
        f"{server}/auth/login", json={"username": "boss", "password": PASSWORD}
    ).json()["access_token"]
    headers = {"Authorization": f"Bearer {token}"}
    made = httpx.get(
        f"{server}/admin/audit", params={"action": "bot.create", "limit": 200}, headers=headers
    ).json()["entries"]
    assert len(made) == report["bots"]
    assert all(e["actor"] == "boss" and e["after"]["balance"] > 0 for e in made)
    audit = subprocess.run(
        [_script("stud-server"), "audit"],
        cwd=tmp_path,
        env=_defaults(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "the books balance" in audit.stdout
