"""Where a server's time goes: a summary of py-spy's raw (collapsed) samples.

``bench/load.py --profile DIR`` records each node with ``py-spy record --format raw`` over
each measured step; this reads such a file and says, for the event loop's thread and the
other threads apart, how the busy samples split by the layer their innermost frame is in
(the database, the websocket stack, the engine, the server's own code...), then the
functions with the most samples of their own and the server's functions with the most
samples under them. Samples waiting (the event loop's poll, a thread blocked on its queue)
are counted apart as idle: py-spy records them as the frame that waits.

    python bench/profile_summary.py FILE [--top N]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

_ENTRY = re.compile(r"server/(__main__|cli)\.py")  # under every sample of the loop
_FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>.*?):(?P<line>\d+)\)$")

# The innermost frame's file, by the first of these its path contains.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("database", ("sqlalchemy/", "aiosqlite/", "asyncpg/", "sqlite3/", "/server/write_ahead")),
    ("database", ("/server/table_store", "/server/db/", "/server/ledger", "/server/hand_")),
    ("websocket", ("uvicorn/protocols/websockets", "websockets/", "starlette/websockets")),
    ("websocket", ("/server/ws_transport", "/server/frames")),
    ("http", ("uvicorn/", "starlette/", "fastapi/", "httptools", "h11/", "pydantic")),
    ("bus", ("redis/", "hiredis", "/server/redis_bus", "/server/bus")),
    ("engine", ("/engine/",)),
    ("tables", ("/server/actor", "/server/table_", "/server/journal", "/server/publisher")),
    ("tables", ("/server/clocks", "/server/dealing", "/server/live_tables")),
    ("json", ("orjson", "json/")),
    ("asyncio", ("asyncio/", "uvloop/", "contextlib", "selectors", "threading", "queue")),
    ("server", ("/server/",)),
)

# Frames that wait rather than work (py-spy's own idle test misses waits in C).
IDLE: tuple[tuple[str, str], ...] = (
    ("Runner.run", "asyncio/runners.py"),  # uvloop's run_forever: the poll, in C
    ("_connection_worker_thread", "aiosqlite/core.py:59"),  # its queue's get
    ("_worker", "concurrent/futures/thread.py"),
    ("Condition.wait", "threading.py"),
    ("Event.wait", "threading.py"),
)


@dataclass
class Profile:
    """The samples of one recording, busy ones by layer and by function."""

    loop_busy: Counter[str] = field(default_factory=Counter)
    threads_busy: Counter[str] = field(default_factory=Counter)
    own: Counter[str] = field(default_factory=Counter)
    under: Counter[str] = field(default_factory=Counter)
    idle: int = 0
    busy: int = 0

    @classmethod
    def read(cls, path: Path) -> Profile:
        profile = cls()
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if stack and count.isdigit():
                profile.add(stack.split(";"), int(count))
        return profile

    def add(self, frames: Sequence[str], count: int) -> None:
        leaf = frames[-1]
        if _is_idle(leaf):
            self.idle += count
            return
        self.busy += count
        # A thread of the pool (aiosqlite's, the write-ahead's) starts in Thread._bootstrap;
        # a stack that does not is the event loop's (some are cut short by the sampler).
        on_loop = not frames[0].startswith("Thread._bootstrap")
        layer = layer_of(leaf)
        (self.loop_busy if on_loop else self.threads_busy)[layer] += count
        self.own[_short(leaf)] += count
        seen: set[str] = set()
        for frame in frames:
            name = _short(frame)
            if "server/" in name and name not in seen and not _ENTRY.search(name):
                seen.add(name)
                self.under[name] += count

    def summary(self, top: int = 12) -> Iterator[str]:
        loop = sum(self.loop_busy.values())
        others = sum(self.threads_busy.values())
        yield (
            f"busy samples {self.busy:,} (event loop {loop:,}, other threads {others:,}); "
            f"idle {self.idle:,}"
        )
        for title, counter, total in (
            ("event loop, by layer", self.loop_busy, loop),
            ("other threads, by layer", self.threads_busy, others),
        ):
            if total:
                parts = ", ".join(f"{k} {100 * n / total:.1f}%" for k, n in counter.most_common())
                yield f"{title}: {parts}"
        yield "own samples (innermost frame), % of busy:"
        for name, n in self.own.most_common(top):
            yield f"  {100 * n / self.busy:5.1f}%  {name}"
        yield "the server's functions, % of busy samples under them:"
        for name, n in self.under.most_common(top):
            yield f"  {100 * n / self.busy:5.1f}%  {name}"


def layer_of(frame: str) -> str:
    match = _FRAME.match(frame)
    path = "/" + (match["file"] if match else frame)
    for layer, needles in LAYERS:
        if any(needle in path for needle in needles):
            return layer
    return "other"


def _is_idle(frame: str) -> bool:
    return any(name in frame and where in frame for name, where in IDLE)


def _short(frame: str) -> str:
    match = _FRAME.match(frame)
    if match is None:
        return frame
    path = re.sub(r".*(site-packages|lib/python3\.\d+)/", "", match["file"])
    path = re.sub(r".*/(server|engine|bench)/", r"\1/", path)
    return f"{match['name']} ({path})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("file", type=Path, nargs="+")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args(argv)
    for path in args.file:
        print(f"== {path}")
        for line in Profile.read(path).summary(args.top):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
