"""The web page's heartbeat (server/web/protocol.js): a server that answers its pings keeps
the connection; one that falls silent (a frozen node, its socket still open) is left and
the page connects again, run in Node against fake websockets."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

DRIVER = Path(__file__).resolve().parent / "heartbeat_driver.mjs"
NODE = shutil.which("node")


def test_a_silent_server_is_left_and_an_answering_one_kept() -> None:
    assert NODE is not None, "install Node: apt-get install -y nodejs"
    done = subprocess.run(
        [NODE, str(DRIVER)], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["whileAnswered"]["sockets"] == 1, seen  # pings answered: no reconnect
    assert seen["whileAnswered"]["pings"] >= 5, seen
    assert seen["firstClosed"] is True, seen
    assert seen["sockets"] >= 2, seen  # connected again once the first fell silent
    assert "The server is not answering: reconnecting…" in seen["statuses"], seen
