"""``bench/idle_connections.py`` keeps working: a node signs in idle players, and the memory
each adds, like the websocket stack's own, is measured and reported."""

from __future__ import annotations

import re

from benches import run_bench


def test_idle_connections_are_signed_in_and_measured() -> None:
    done = run_bench("idle_connections.py", "--connections", "200", timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    found = re.search(r"node (-?[\d.]+) KiB each.*stack alone (-?[\d.]+) KiB each", done.stdout)
    assert found, done.stdout
    node, stack = (float(value) for value in found.groups())
    # 200 sockets are too few for a figure worth quoting, but each takes some memory.
    assert node > 0 and stack > 0, done.stdout
